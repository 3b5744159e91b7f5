"""The scripts the record workflow calls, as far as they go without GitHub or a GPU:
scripts/record-setup.sh, scripts/record-needed.sh and scripts/record-pr.sh."""
import base64
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def run(args, cwd, env=None, check=True):
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


FAKE_TORCH = """
__version__ = {version!r}
class version:
    cuda = {cuda!r}
class cuda:
    is_available = staticmethod(lambda: False)
"""


@pytest.mark.parametrize("version, cuda, says", [
    ("2.13.0+cpu", None, "torch 2.13.0+cpu at {python} is not a CUDA build"),
    ("2.13.0", "12.8", "torch 2.13.0 (CUDA 12.8) sees no GPU here"),
    (None, None, "{python} has no torch; install a CUDA build of PyTorch first"),
])
def test_record_setup_refuses_a_python_that_cannot_record(tmp_path, version, cuda, says):
    # A fake torch with the attributes the script reads (or none): nothing is installed.
    if version:
        (tmp_path / "torch").mkdir()
        (tmp_path / "torch" / "__init__.py").write_text(FAKE_TORCH.format(version=version,
                                                                           cuda=cuda))
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nPYTHONPATH={tmp_path} exec {PYTHON} -S \"$@\"\n")
    python.chmod(0o755)
    proc = run(["bash", "scripts/record-setup.sh"], ROOT, {"PYTHON": str(python)}, check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == "record-setup: " + says.format(python=PYTHON)
    assert proc.stdout == ""


@pytest.fixture
def book(tmp_path) -> Path:
    """A book with one chapter, its tooling and runs/current/ recorded from that very chapter."""
    (tmp_path / "scripts").mkdir()
    for script in ("record-needed.sh", "record-python.sh"):
        shutil.copy(ROOT / "scripts" / script, tmp_path / "scripts")
    shutil.copytree(ROOT / "tools" / "booktools", tmp_path / "tools" / "booktools",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tests").mkdir()
    shutil.copy(ROOT / "tests" / "sanitize.cfg", tmp_path / "tests")
    shutil.copy(ROOT / "_config.yml", tmp_path)
    (tmp_path / "chapters").mkdir()
    shutil.copy(ROOT / "chapters" / "devices.ipynb", tmp_path / "chapters")
    current = tmp_path / "runs" / "current"
    current.mkdir(parents=True)
    shutil.copy(ROOT / "chapters" / "devices.ipynb", current)
    meta = json.loads((ROOT / "runs" / "nvidia-h100" / "run.json").read_text())
    (current / "run.json").write_text(json.dumps({**meta, "commit": ""}))
    return tmp_path


def needed(book: Path, *args) -> tuple[str, str]:
    """record-needed.sh's output and what it wrote to $GITHUB_OUTPUT."""
    output = book / "github-output"
    output.write_text("")
    proc = run(["bash", "scripts/record-needed.sh", *args], book,
               {"PYTHON": PYTHON, "GITHUB_OUTPUT": str(output)})
    return proc.stdout, output.read_text()


def test_record_needed_only_when_a_hardware_cell_lacks_a_current_recording(book):
    out, github = needed(book, "current", "push")
    assert github == "record=false\n"
    assert "every hardware cell has a current recording in runs/current/" in out
    # Edit one hardware cell of the chapter: its recording is now of an earlier version.
    path = book / "chapters" / "devices.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if "hardware" in c.metadata.get("tags", []))
    cell.source += "\nprint('edited')"
    nbformat.write(nb, path)
    out, github = needed(book, "current", "push")
    assert github == "record=true\n"
    assert f"  devices: {cell.metadata['name']} (recorded from an earlier version)\n" in out
    assert out.count("(recorded from an earlier version)") == 1


def test_record_needed_for_a_new_machine_and_when_asked_by_hand(book):
    out, github = needed(book, "new-machine", "push")
    assert github == "record=true\n" and "devices: choose-device (not recorded)" in out
    out, github = needed(book, "current", "workflow_dispatch")
    assert github == "record=true\n" and "asked by hand" in out
    proc = run(["bash", "scripts/record-needed.sh", "../up"], book, {"PYTHON": PYTHON}, check=False)
    assert proc.returncode != 0 and "machine name '../up'" in proc.stderr


FAKE_GH = """#!/usr/bin/env bash
# gh as record-pr.sh uses it: logs its arguments; `pr list` prints $FAKE_GH_OPEN_PR.
args="$*"
echo "${args//$'\n'/\\n}" >> "$FAKE_GH_LOG"
case "$1 $2" in
  "pr list") echo "${FAKE_GH_OPEN_PR:-}" ;;
  "pr create") echo "https://github.com/example/book/pull/1" ;;
  "auth git-credential")  # git's credential helper protocol: a password for `get`
    cat > /dev/null
    if [ "$3" = get ]; then printf 'username=x-access-token\npassword=%s\n' "$GH_TOKEN"; fi ;;
  *) echo "fake gh: unexpected: $*" >&2; exit 1 ;;
esac
"""


@pytest.fixture
def clone(tmp_path) -> tuple[Path, dict]:
    """A clone of a small repository (origin: a bare one), with gh faked on PATH."""
    env = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "FAKE_GH_LOG": str(tmp_path / "gh.log"), "GH_TOKEN": "record-token",
           "GIT_TERMINAL_PROMPT": "0"}
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(FAKE_GH)
    (bin_dir / "gh").chmod(0o755)
    env["PATH"] = f"{bin_dir}:{os.environ['PATH']}"
    run(["git", "init", "-q", "--bare", "-b", "main", "origin.git"], tmp_path, env)
    run(["git", "clone", "-q", "origin.git", "work"], tmp_path, env)
    work = tmp_path / "work"
    (work / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "record-pr.sh", work / "scripts")
    (work / "runs").mkdir()
    (work / "runs" / "README").write_text("recorded runs\n")
    identity = ["-c", "user.name=Maintainer", "-c", "user.email=m@example.com"]
    run(["git", "add", "."], work, env)
    run(["git", *identity, "commit", "-q", "-m", "start"], work, env)
    run(["git", "push", "-q", "origin", "main"], work, env)
    return work, env


def record_into(work: Path, label: str, commit: str) -> None:
    folder = work / "runs" / "gpu-box"
    folder.mkdir(exist_ok=True)
    (folder / "run.json").write_text(json.dumps({"label": label, "commit": commit}))
    (folder / "devices.ipynb").write_text(f"{{\"recorded\": \"{commit}\"}}\n")


def test_record_pr_commits_the_run_alone_and_opens_a_pull_request(clone):
    work, env = clone
    record_into(work, "NVIDIA T4", "abc1234")
    (work / "stray.txt").write_text("not part of the run\n")
    proc = run(["bash", "scripts/record-pr.sh", "gpu-box"], work, env)
    assert proc.stdout.strip() == "https://github.com/example/book/pull/1"
    log = Path(env["FAKE_GH_LOG"]).read_text().splitlines()
    assert log[0] == "pr list --head record/gpu-box --state open --json url --jq .[0].url // \"\""
    assert log[1].startswith("pr create --base main --head record/gpu-box --title Recorded run: "
                             "runs/gpu-box/ (NVIDIA T4, commit abc1234) --body ")
    git = lambda *args: run(["git", *args], work, env).stdout.strip()  # noqa: E731
    assert git("branch", "--show-current") == "main"
    pushed = "origin/record/gpu-box"
    git("fetch", "-q", "origin")
    assert git("log", "--format=%s|%an", f"main..{pushed}") == \
        "Record runs/gpu-box/ on NVIDIA T4 at abc1234|github-actions[bot]"
    assert git("diff", "--name-only", "main", pushed).splitlines() == [
        "runs/gpu-box/devices.ipynb", "runs/gpu-box/run.json"]
    assert (work / "stray.txt").is_file() and "stray.txt" in git("status", "--porcelain")

    # A second recording while that pull request is open: the branch moves, no new PR.
    record_into(work, "NVIDIA T4", "def5678")
    proc = run(["bash", "scripts/record-pr.sh", "gpu-box"], work,
               {**env, "FAKE_GH_OPEN_PR": "https://github.com/example/book/pull/1"})
    assert proc.stdout.strip() == "record-pr: updated https://github.com/example/book/pull/1"
    assert [line.split()[1] for line in Path(env["FAKE_GH_LOG"]).read_text().splitlines()] == \
        ["list", "create", "list"]
    git("fetch", "-q", "origin")
    assert git("log", "--format=%s", f"main..{pushed}") == \
        "Record runs/gpu-box/ on NVIDIA T4 at def5678"


def test_record_pr_does_nothing_for_an_unchanged_run_and_refuses_a_detached_head(clone):
    work, env = clone
    proc = run(["bash", "scripts/record-pr.sh", "gpu-box"], work, env, check=False)
    assert proc.returncode == 2 and "no recorded run runs/gpu-box/run.json" in proc.stderr
    record_into(work, "NVIDIA T4", "abc1234")
    identity = ["-c", "user.name=Maintainer", "-c", "user.email=m@example.com"]
    run(["git", "add", "runs"], work, env)
    run(["git", *identity, "commit", "-q", "-m", "runs"], work, env)
    proc = run(["bash", "scripts/record-pr.sh", "gpu-box"], work, env)
    assert proc.stdout.strip() == "record-pr: runs/gpu-box/ is as main has it: no pull request"
    run(["git", "checkout", "-q", "--detach"], work, env)
    proc = run(["bash", "scripts/record-pr.sh", "gpu-box"], work, env, check=False)
    assert proc.returncode == 2 and "HEAD is detached" in proc.stderr
    assert not Path(env["FAKE_GH_LOG"]).exists()


# --- record-setup.sh: a venv beside the machine's torch, online or from wheels ---

def fake_wheel(folder: Path, name: str, version: str) -> Path:
    """A wheel of an importable package ``name`` that says it is this fake."""
    import base64
    import hashlib
    import zipfile
    info = f"{name}-{version}.dist-info"
    files = {f"{name}/__init__.py": f"__version__ = {version!r}\nFAKE_WHEEL = True\n",
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                              "Tag: py3-none-any\n"}
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


@pytest.fixture
def gpu_machine(tmp_path) -> tuple[Path, Path, dict]:
    """A checkout with record-setup.sh, and a machine's Python: a venv with a fake torch and
    nothing else, as GPU images ship torch in one. pip reads no configuration here."""
    book = tmp_path / "book"
    (book / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "record-setup.sh", book / "scripts")
    shutil.copy(ROOT / "requirements.txt", book)
    (book / "tools").mkdir()
    shutil.copy(ROOT / "tools" / "pyproject.toml", book / "tools")
    shutil.copytree(ROOT / "tools" / "booktools", book / "tools" / "booktools",
                    ignore=shutil.ignore_patterns("__pycache__"))
    machine = tmp_path / "machine-python"
    run([PYTHON, "-m", "venv", "--without-pip", str(machine)], tmp_path)
    site = run([str(machine / "bin" / "python"), "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path).stdout
    torch = Path(site.strip()) / "torch"
    torch.mkdir()
    (torch / "__init__.py").write_text(FAKE_TORCH.format(version="2.13.0+fake", cuda="13.0"))
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1",
               PYTHON=str(machine / "bin" / "python"), RECORD_REHEARSAL="1",
               PYTHONPATH="")
    return book, machine, env


def installed_in(python: Path, names: list[str]) -> dict:
    """Where python imports each of names from, and whether it is the fake wheel."""
    script = ("import importlib, json, sys; print(json.dumps({n: [m.__file__, "
              "getattr(m, 'FAKE_WHEEL', False)] for n in sys.argv[1:] "
              "for m in [importlib.import_module(n)]}))")
    return json.loads(run([str(python), "-c", script, *names], python.parent,
                          {"PYTHONPATH": ""}).stdout)


def test_record_setup_installs_the_pins_into_a_venv_that_sees_the_machines_torch(
        gpu_machine, tmp_path):
    book, machine, env = gpu_machine
    pins = run([PYTHON, "-m", "booktools.runs", "pins"], ROOT).stdout.split()
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for pin in pins:
        fake_wheel(wheels, *pin.split("=="))
    # Offline: an index that cannot be reached, so pip must take the folder alone
    # (without --wheels the same command installs from PyPI, the one difference).
    env["PIP_INDEX_URL"] = "http://127.0.0.1:9/simple"
    proc = run(["bash", "scripts/record-setup.sh", "--wheels", str(wheels)], book, env)
    venv = book / ".venv-record"
    assert proc.stdout.splitlines()[-1] == (
        f"record-setup: {venv} has {' '.join(pins)} beside torch 2.13.0+fake")
    names = [pin.split("==")[0] for pin in pins]
    found = installed_in(venv / "bin" / "python", [*names, "torch"])
    for name in names:  # each pin, from the wheels, inside the new venv
        assert found[name][1] is True and found[name][0].startswith(str(venv)), found[name]
    assert found["torch"][0].startswith(str(machine)), "the venv must use the machine's torch"
    # The machine's own Python is left as it was: nothing was installed into it.
    proc = run([str(machine / "bin" / "python"), "-c", "import nbformat"], tmp_path,
               {"PYTHONPATH": ""}, check=False)
    assert proc.returncode == 1 and "No module named 'nbformat'" in proc.stderr


def test_record_setup_refuses_a_folder_without_wheels(gpu_machine, tmp_path):
    book, _, env = gpu_machine
    (tmp_path / "empty").mkdir()
    proc = run(["bash", "scripts/record-setup.sh", "--wheels", str(tmp_path / "empty")],
               book, env, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"record-setup: {tmp_path / 'empty'} holds no wheels "
                                   f"(bash scripts/record-wheels.sh {tmp_path / 'empty'})")
    assert not (book / ".venv-record").exists()


def test_a_rehearsal_on_a_cpu_records_a_chapter_into_a_scratch_machine(gpu_machine, tmp_path):
    """The offline record command end to end, on this CPU: record-setup from a folder of
    wheels beside this Python (whose packages satisfy the pins, as a GPU image's would
    satisfy none), then record-run into a scratch machine folder."""
    book, _, env = gpu_machine
    for script in ("record-run.sh", "record-python.sh"):
        shutil.copy(ROOT / "scripts" / script, book / "scripts")
    shutil.copytree(ROOT / "d2lgpu", book / "d2lgpu", ignore=shutil.ignore_patterns("__pycache__"))
    (book / "chapters").mkdir()
    shutil.copy(ROOT / "chapters" / "intro.ipynb", book / "chapters")
    git = ["git", "-c", "user.name=M", "-c", "user.email=m@example.com"]
    run(["git", "init", "-q"], book)
    run(["git", "add", "."], book)
    run([*git, "commit", "-q", "-m", "book"], book)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    fake_wheel(wheels, "unused", "1.0")
    env.update(PYTHON=PYTHON, PIP_INDEX_URL="http://127.0.0.1:9/simple")
    proc = run(["bash", "scripts/record-setup.sh", "--wheels", str(wheels)], book, env)
    assert "record-setup: rehearsal with torch" in proc.stdout
    del env["PYTHON"]  # record-run.sh takes .venv-record/bin/python
    proc = run(["bash", "scripts/record-run.sh", "scratch-cpu", "--chapter", "intro"], book, env)
    assert proc.stdout.splitlines()[-1].startswith("record: wrote ")
    meta = json.loads((book / "runs" / "scratch-cpu" / "run.json").read_text())
    head = run(["git", "rev-parse", "--short", "HEAD"], book).stdout.strip()
    assert meta["gpus"] == [] and meta["label"] == "CPU" and meta["commit"] == head
    recorded = nbformat.read(book / "runs" / "scratch-cpu" / "intro.ipynb", as_version=4)
    versions = next(c for c in recorded.cells if c.metadata.get("name") == "versions")
    import torch
    assert f"PyTorch version:      {torch.__version__}" in versions.outputs[0]["text"]


class GitOverHTTP(http.server.BaseHTTPRequestHandler):
    """git's smart HTTP (git http-backend) for the repositories under server.root, to a
    client that authenticates with the token server.token alone, as GitHub would."""

    def log_message(self, *args):
        pass

    def _serve(self):
        auth = self.headers.get("Authorization", "")
        self.server.seen.append(auth)
        good = "Basic " + base64.b64encode(f"x-access-token:{self.server.token}".encode()).decode()
        if auth != good:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        env = {"PATH": os.environ["PATH"], "GIT_PROJECT_ROOT": str(self.server.root),
               "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path, "QUERY_STRING": query,
               "REQUEST_METHOD": self.command, "REMOTE_USER": "x-access-token",
               "REMOTE_ADDR": "127.0.0.1", "CONTENT_LENGTH": str(len(body)),
               "CONTENT_TYPE": self.headers.get("Content-Type", ""),
               "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
               "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
        out = subprocess.run(["git", "http-backend"], input=body, env=env,
                             capture_output=True, timeout=60).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode().split("\r\n"):
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers.append((key, value.strip()))
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _serve


def test_record_pr_pushes_with_gh_token_and_never_a_credential_left_in_git_config(clone):
    work, env = clone
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), GitOverHTTP)
    server.root, server.token, server.seen = work.parent, "record-token", []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/origin.git"
        run(["git", "remote", "set-url", "origin", url], work, env)
        # What actions/checkout leaves when it persists credentials: the workflow's
        # own token as a header. GitHub accepts it; pushed with it, the PR gets no checks.
        stale = base64.b64encode(b"x-access-token:workflow-token").decode()
        run(["git", "config", "http.http://127.0.0.1/.extraheader",
             f"AUTHORIZATION: basic {stale}"], work, env)
        run(["git", "config", f"http.{url}.extraheader", f"AUTHORIZATION: basic {stale}"],
            work, env)
        record_into(work, "NVIDIA T4", "abc1234")
        proc = run(["bash", "scripts/record-pr.sh", "gpu-box"], work, env)
        assert proc.stdout.strip() == "https://github.com/example/book/pull/1"
        pushed = run(["git", "--git-dir", str(work.parent / "origin.git"), "log", "--format=%s",
                      "record/gpu-box", "-1"], work, env).stdout.strip()
        assert pushed == "Record runs/gpu-box/ on NVIDIA T4 at abc1234"
        token = "Basic " + base64.b64encode(b"x-access-token:record-token").decode()
        assert token in server.seen and not any("workflow-token" in base64.b64decode(
            a.split()[-1]).decode() for a in server.seen if a)
        assert "auth git-credential get" in Path(env["FAKE_GH_LOG"]).read_text()
        # Without a token, nothing is committed or pushed.
        record_into(work, "NVIDIA T4", "def5678")
        proc = run(["bash", "scripts/record-pr.sh", "gpu-box"], work,
                   {**env, "GH_TOKEN": ""}, check=False)
        assert proc.returncode == 2 and proc.stderr.startswith("record-pr: no GH_TOKEN")
    finally:
        server.shutdown()
        server.server_close()


def test_record_needed_when_d2lgpu_changed_since_the_recorded_commit(book):
    git = ["git", "-c", "user.name=M", "-c", "user.email=m@example.com"]
    (book / "d2lgpu").mkdir()
    (book / "d2lgpu" / "devices.py").write_text("def gpu(): return 'cuda:0'\n")
    run(["git", "init", "-q"], book)
    run(["git", "add", "."], book)
    run([*git, "commit", "-q", "-m", "recorded"], book)
    recorded = run(["git", "rev-parse", "--short", "HEAD"], book).stdout.strip()
    meta_path = book / "runs" / "current" / "run.json"
    meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), "commit": recorded}))
    run([*git, "commit", "-q", "-am", "the recording names its commit"], book)
    from booktools import runs
    recording = runs.read_run(book / "runs" / "current")
    assert runs.package_changes(recording, root=book) == []  # (test above: record=false)
    # Layout and comments are no change: the helpers do what they did.
    (book / "d2lgpu" / "devices.py").write_text("def gpu():\n    return 'cuda:0'  # the first\n")
    run([*git, "commit", "-q", "-am", "a comment"], book)
    assert runs.package_changes(recording, root=book) == []
    (book / "d2lgpu" / "devices.py").write_text("def gpu(): return 'cuda:1'\n")
    run([*git, "commit", "-q", "-am", "a helper changed, no chapter did"], book)
    out, github = needed(book, "current", "push")
    assert github == "record=true\n"
    assert f"  d2lgpu: devices.py (changed since the recorded commit {recorded})\n" in out
    # A recorded commit that this clone's history lacks cannot be judged: record.
    recording.meta["commit"] = "0" * 12
    assert runs.package_changes(recording, root=book) == [
        f"d2lgpu: cannot compare with the recorded commit {'0' * 12} (git does not know it "
        "here: fetch the whole history)"]


def test_the_record_workflow_keeps_every_token_off_the_gpu_machine():
    import yaml
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "record.yml").read_text())
    on = workflow[True]  # YAML reads the key `on` as True
    assert on["push"]["paths"] == ["chapters/*.ipynb", "d2lgpu/**"]
    assert workflow["permissions"] == {"contents": "read"}
    job = workflow["jobs"]["record"]
    checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False
    assert "PYTHON" not in job["env"]  # the steps after record-setup use .venv-record
    setup, *rest = [s for s in job["steps"] if "run" in s]
    assert setup["run"].startswith("bash scripts/record-setup.sh") and "PYTHON" in setup["env"]
    assert not any("PYTHON" in s.get("env", {}) for s in rest)
    # The GPU job names no secret and no token; it hands the run over as an artifact.
    assert "secrets." not in json.dumps(job) and "token" not in json.dumps(job).lower()
    upload = job["steps"][-1]
    assert upload["uses"].startswith("actions/upload-artifact@")
    assert upload["with"]["path"] == "runs/${{ env.MACHINE }}/"
    propose = workflow["jobs"]["propose"]
    assert propose["needs"] == "record" and propose["environment"] == "record"
    assert propose["runs-on"] == "ubuntu-latest"
    assert propose["if"] == "needs.record.outputs.record == 'true'"
    mint = next(s for s in propose["steps"] if s.get("id") == "app-token")
    assert mint["with"]["permission-contents"] == "write"
    assert mint["with"]["permission-pull-requests"] == "write"
    push = propose["steps"][-1]
    assert push["run"] == 'bash scripts/record-pr.sh "$MACHINE" --from "$RUN"'
    assert push["env"]["GH_TOKEN"] == "${{ steps.app-token.outputs.token || secrets.RECORD_TOKEN }}"
    assert "GITHUB_TOKEN" not in json.dumps(workflow)


def test_record_pr_takes_the_run_from_the_artifact_folder(clone, tmp_path):
    work, env = clone
    artifact = tmp_path / "run"
    artifact.mkdir()
    (artifact / "run.json").write_text(json.dumps({"label": "NVIDIA T4", "commit": "abc1234"}))
    (artifact / "devices.ipynb").write_text("{}\n")
    stale = work / "runs" / "gpu-box" / "gone.ipynb"  # no longer in the run: removed
    stale.parent.mkdir(parents=True)
    stale.write_text("{}\n")
    proc = run(["bash", "scripts/record-pr.sh", "gpu-box", "--from", str(artifact)], work, env)
    assert proc.stdout.strip() == "https://github.com/example/book/pull/1"
    run(["git", "fetch", "-q", "origin"], work, env)
    pushed = run(["git", "ls-tree", "-r", "--name-only", "origin/record/gpu-box", "runs/gpu-box"],
                 work, env).stdout.split()
    assert pushed == ["runs/gpu-box/devices.ipynb", "runs/gpu-box/run.json"]
    proc = run(["bash", "scripts/record-pr.sh", "gpu-box", "--from"], work, env, check=False)
    assert proc.returncode == 2 and "usage: bash scripts/record-pr.sh MACHINE [--from DIR]" in proc.stderr
