"""The record workflow, as far as it goes without GitHub or a GPU: scripts/record-setup.sh,
scripts/record-run.sh (--if-stale, $GITHUB_OUTPUT) and the jobs' steps."""
import json
import os
import re
import shutil
import subprocess
import sys
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
    shutil.copy(ROOT / "scripts" / "record-run.sh", tmp_path / "scripts")
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


def stale(book: Path, machine: str) -> str:
    """What `runs stale MACHINE` names in book (what --if-stale records for)."""
    return run([PYTHON, "-m", "booktools.runs", "stale", machine], book,
               {"PYTHONPATH": str(book / "tools")}).stdout


def test_record_if_stale_records_nothing_while_every_hardware_cell_is_current(book):
    output = book / "github-output"
    proc = run(["bash", "scripts/record-run.sh", "current", "--if-stale"], book,
               {"PYTHON": PYTHON, "GITHUB_OUTPUT": str(output)})
    assert output.read_text() == "record=false\n"
    assert "every hardware cell has a current recording in runs/current/" in proc.stdout
    assert stale(book, "current") == ""
    # Edit one hardware cell of the chapter: its recording is now of an earlier version.
    path = book / "chapters" / "devices.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if "hardware" in c.metadata.get("tags", []))
    cell.source += "\nprint('edited')"
    nbformat.write(nb, path)
    lines = stale(book, "current").splitlines()
    assert lines[0] == f"devices: {cell.metadata['name']} (recorded from an earlier version)"
    assert all(line.endswith("above it changed since the recording)") for line in lines[1:])


def test_a_new_machine_is_stale_and_a_bad_machine_name_refused(book):
    assert "devices: choose-device (not recorded)" in stale(book, "new-machine")
    proc = run(["bash", "scripts/record-run.sh", "../up", "--if-stale"], book,
               {"PYTHON": PYTHON}, check=False)
    assert proc.returncode != 0 and "machine name '../up'" in proc.stderr


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


def recording_pins() -> list[str]:
    """requirements.txt's lines marked "# recording", as record-setup.sh reads them."""
    return [line.split()[0] for line in (ROOT / "requirements.txt").read_text().splitlines()
            if line.endswith("# recording")]


def test_the_recording_pins_are_booktools_dependencies_at_requirements_versions():
    import tomllib
    project = tomllib.loads((ROOT / "tools" / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["check"]]
    names = sorted(re.match(r"[A-Za-z0-9_.-]+", w).group(0).lower() for w in wanted)
    assert sorted(pin.split("==")[0].lower() for pin in recording_pins()) == names


def test_record_setup_installs_the_pins_into_a_venv_that_sees_the_machines_torch(
        gpu_machine, tmp_path):
    book, machine, env = gpu_machine
    pins = recording_pins()
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
    shutil.copy(ROOT / "scripts" / "record-run.sh", book / "scripts")
    (book / "tests").mkdir()
    shutil.copy(ROOT / "tests" / "sanitize.cfg", book / "tests")  # runs stale compares by it
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
    env["GITHUB_OUTPUT"] = str(tmp_path / "github-output")  # as the workflow's push runs it
    proc = run(["bash", "scripts/record-run.sh", "scratch-cpu", "--chapter", "intro",
                "--if-stale"], book, env)
    assert "record: runs/scratch-cpu/ is not current (runs stale):" in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("record: wrote ")
    meta = json.loads((book / "runs" / "scratch-cpu" / "run.json").read_text())
    head = run(["git", "rev-parse", "--short", "HEAD"], book).stdout.strip()
    assert meta["gpus"] == [] and meta["label"] == "CPU" and meta["commit"] == head
    assert Path(env["GITHUB_OUTPUT"]).read_text() == f"record=true\nlabel=CPU\ncommit={head}\n"
    recorded = nbformat.read(book / "runs" / "scratch-cpu" / "intro.ipynb", as_version=4)
    versions = next(c for c in recorded.cells if c.metadata.get("name") == "versions")
    import torch
    assert f"PyTorch version:      {torch.__version__}" in versions.outputs[0]["text"]


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
    assert stale(book, "current") == \
        f"d2lgpu: devices.py (changed since the recorded commit {recorded})\n"
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
    record = next(s for s in job["steps"] if s.get("id") == "record")
    assert record["run"] == \
        'bash scripts/record-run.sh "$MACHINE" --label "$LABEL" ${ON_PUSH:+--if-stale}'
    assert record["env"]["ON_PUSH"] == "${{ github.event_name == 'push' && '1' || '' }}"
    assert job["outputs"] == {key: f"${{{{ steps.record.outputs.{key} }}}}"
                              for key in ("record", "label", "commit")}
    upload = job["steps"][-1]
    assert upload["uses"].startswith("actions/upload-artifact@")
    assert upload["if"] == "steps.record.outputs.record == 'true'"
    assert upload["with"]["path"] == "runs/${{ env.MACHINE }}/"
    propose = workflow["jobs"]["propose"]
    assert propose["needs"] == "record" and propose["environment"] == "record"
    assert propose["runs-on"] == "ubuntu-latest" and propose["permissions"] == {"contents": "read"}
    assert propose["if"] == "needs.record.outputs.record == 'true'"
    mint = next(s for s in propose["steps"] if s.get("id") == "app-token")
    assert mint["with"]["permission-contents"] == "write"
    assert mint["with"]["permission-pull-requests"] == "write"
    # The artifact replaces runs/MACHINE/ (what it lacks is deleted), then the App's
    # token commits it alone on record/MACHINE and opens or updates the pull request.
    remove, download = propose["steps"][1:3]
    assert remove["run"] == 'rm -rf -- "runs/$MACHINE"'
    assert download["uses"].startswith("actions/download-artifact@")
    assert download["with"] == {"name": "run", "path": "runs/${{ env.MACHINE }}"}
    pull = propose["steps"][-1]
    assert pull["uses"].split("@")[0] == "peter-evans/create-pull-request"
    label, commit = "${{ needs.record.outputs.label }}", "${{ needs.record.outputs.commit }}"
    folder = "runs/${{ env.MACHINE }}"
    assert pull["with"] == {
        "token": "${{ steps.app-token.outputs.token || secrets.RECORD_TOKEN }}",
        "add-paths": folder, "branch": "record/${{ env.MACHINE }}",
        "commit-message": f"Record {folder}/ on {label} at {commit}",
        "title": f"Recorded run: {folder}/ ({label}, commit {commit})",
        "body": f"The chapters executed on {label} at commit {commit} by scripts/record-run.sh "
                f"(the record workflow); {folder}/run.json says the rest.\n"}
    assert "GITHUB_TOKEN" not in json.dumps(workflow)
