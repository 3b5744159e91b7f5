"""booktools.contributed: `python -m booktools.contributed` refuses each tampered recording, naming the file
and why, and accepts a valid one with the claims it confirms.

A toy book in a temporary git repository (one chapter, its claims, one commit) and a
toy recording of it, runs/toy-gpu/, as a folder and as the zip a reader's notebook packs.
"""
from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import zipfile

import nbformat
import pytest

from booktools import contributed, runs

SOURCE = "compare(one_big, many_small)"
CPU_OUT = "one copy: 55.4 µs ± 1.65 µs (reference)\n1024 copies: 2.19 ms ± 43.9 µs\n"
GPU_OUT = "one copy: 379 µs ± 79.4 µs (reference)\n1024 copies: 13.7 ms ± 64.2 µs\n"
CLAIM = """\
- says: "copy few, large pieces"
  cell: copy-timings
  faster: [one copy, 1024 copies]
  by: [2, null]
"""
META = {"label": "NVIDIA T4 (Colab)", "gpus": ["Tesla T4"], "gpu_count": 1,
        "compute_capability": ["7.5"], "torch": "2.9.0+cu126", "cuda": "12.6",
        "python": "3.12.3", "driver": "550.54", "date": "2026-11-28",
        "recorded_with": "notebooks/record.ipynb", "recorded_by": "a reader"}


def _nb(output: str, source: str = SOURCE):
    book = nbformat.v4.new_notebook()
    book.metadata["language_info"] = {"name": "python", "version": "3.12.3"}
    cell = nbformat.v4.new_code_cell(source, execution_count=1, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text=output)])
    cell.metadata.update(tags=["hardware"], name="copy-timings")
    book.cells.append(cell)
    return runs.strip_volatile(book)


def _git(root, *args) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def book(tmp_path, monkeypatch):
    """The toy book at one commit, and runs/toy-gpu/ recorded from it (not committed)."""
    root = tmp_path / "book"
    (root / "chapters" / "claims").mkdir(parents=True)
    (root / "chapters" / "toy.md").write_text("# Toy\n\nOne copy: **copy few, large "
                                              "pieces.**\n")
    nbformat.write(_nb(CPU_OUT), root / "chapters" / "toy.ipynb")
    (root / "chapters" / "claims" / "toy.yml").write_text(CLAIM)
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "toy")
    folder = root / "runs" / "toy-gpu"
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({**META, "commit": _git(root, "rev-parse",
                                                                        "--short", "HEAD")}))
    nbformat.write(_nb(GPU_OUT), folder / "toy.ipynb")
    # d2lgpu is the real book's: the toy commit changed nothing of it.
    monkeypatch.setattr(runs, "package_changes", lambda run, *a, **k: [])
    return root


def _verify(root, path=None, base=None) -> tuple[int, list[str]]:
    out = io.StringIO()
    status = contributed.main(str(path or root / "runs" / "toy-gpu"), base, root, out)
    return status, out.getvalue().splitlines()


def _edit(root, change):
    path = root / "runs" / "toy-gpu" / "run.json"
    meta = json.loads(path.read_text())
    change(meta)
    path.write_text(json.dumps(meta))


def test_a_valid_recording_is_accepted_with_the_claims_it_confirms(book):
    status, out = _verify(book)
    assert status == 0, out
    assert out == [
        'chapters/toy.md:3: claim "copy few, large pieces" (faster: one copy, 1024 copies; '
        'by: [2, null]) held on runs/toy-gpu/toy cell copy-timings: speed-up 36.1x',
        "verify: accepted runs/toy-gpu/ (Tesla T4, 2026-11-28): claims 1 confirmed, "
        "0 contradicted, 0 unchecked"]


def test_a_contradicted_claim_is_reported_not_refused(book):
    nbformat.write(_nb(GPU_OUT.replace("379 µs", "30 ms")), book / "runs/toy-gpu/toy.ipynb")
    status, out = _verify(book)
    assert status == 0 and " contradicted by runs/toy-gpu/toy cell copy-timings" in out[0]
    assert out[-1].endswith("claims 0 confirmed, 1 contradicted, 0 unchecked")


@pytest.mark.parametrize("tamper, said", [
    (lambda r: nbformat.write(_nb(GPU_OUT, SOURCE + "\nprint(1)"), r / "runs/toy-gpu/toy.ipynb"),
     "runs/toy-gpu/toy.ipynb: code cell 0 is not the program of chapters/toy.ipynb at "),
    (lambda r: _edit(r, lambda m: m.update(commit="deadbee")),
     "runs/toy-gpu/run.json: commit deadbee is not in the history of HEAD"),
    (lambda r: _edit(r, lambda m: m.update(gpu_count=2)),
     "runs/toy-gpu/run.json: gpu_count 2 but 1 GPU names"),
    (lambda r: _edit(r, lambda m: m.pop("torch")),
     "runs/toy-gpu/run.json: 'torch' missing or not str"),
    (lambda r: _edit(r, lambda m: m.update(cuda="")),
     "runs/toy-gpu/run.json: 1 GPUs but no CUDA version"),
    (lambda r: _edit(r, lambda m: m.update(compute_capability=["7.5", "8.0"])),
     "runs/toy-gpu/run.json: compute_capability ['7.5', '8.0'] is not one 'MAJOR.MINOR' "
     "per GPU (1)"),
    (lambda r: _edit(r, lambda m: m.update(python="3.11.2")),
     "runs/toy-gpu/toy.ipynb: ran Python 3.12.3, run.json says 3.11.2"),
    (lambda r: nbformat.write(_nb(GPU_OUT + "PyTorch version:      2.8.0+cu126\n"),
                              r / "runs/toy-gpu/toy.ipynb"),
     "runs/toy-gpu/toy.ipynb: code cell 0 printed torch '2.8.0+cu126', run.json says "
     "'2.9.0+cu126'"),
    (lambda r: nbformat.write(_nb(GPU_OUT + "CUDA GPU usable:      False\n"),
                              r / "runs/toy-gpu/toy.ipynb"),
     "runs/toy-gpu/toy.ipynb: code cell 0 printed GPU 'False', run.json says 'True'"),
    (lambda r: (r / "runs/toy-gpu/run.json").unlink(),
     "runs/toy-gpu/: a folder under runs/ without run.json is no recording"),
    (lambda r: _edit(r, lambda m: m.update(recorded_by="me@example.com")),
     "runs/toy-gpu/run.json: holds an e-mail address (me@exa…): remove it"),
])
def test_a_tampered_or_inconsistent_recording_is_refused(book, tamper, said):
    tamper(book)
    status, out = _verify(book)
    assert status == 1 and out[-1].startswith("verify: refused: ")
    assert any(line.startswith(said) for line in out), out


@pytest.mark.parametrize("printed, what", [
    ("token ghp_" + "a1B2" * 9, "a token (ghp_a1…)"),
    ("github_pat_" + "x" * 50, "a token (github…)"),
    ("hf_" + "Ab3" * 12, "a token (hf_Ab3…)"),
    ("AKIAIOSFODNN7EXAMPLE", "a token (AKIAIO…)"),
    ("key " + "0123456789abcdef" * 3, "a secret (012345…)"),
    ("key " + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6kL9n", "a secret (aB3dE6…)"),
    ("mail me: ada@lovelace.org", "an e-mail address (ada@lo…)"),
    ("on ip-10-0-3-7 now", "a hostname (ip-10-…)"),
    ("ran on box7.internal", "a hostname (box7.i…)"),
    ("hostname: my-laptop", "a hostname (hostna…)"),
    ('File "/home/ada/gpu-book/x.py"', "a home path (/home/…)"),
    ("/Users/ada/Library", "a home path (/Users…)"),
    ("cache in /root/.cache", "a home path (/root…)"),
    ("C:\\Users\\Ada\\book", "a home path (C:\\Use…)"),
])
def test_an_output_holding_a_private_string_is_refused(book, printed, what):
    nbformat.write(_nb(GPU_OUT + printed + "\n"), book / "runs/toy-gpu/toy.ipynb")
    status, out = _verify(book)
    assert status == 1
    assert f"runs/toy-gpu/toy.ipynb: code cell 0: holds {what}: remove it" in out


def test_the_book_s_own_outputs_are_no_secrets():
    for text in ["one copy: 379 µs ± 79.4 µs", "NVIDIA H100 80GB HBM3 · PyTorch 2.11.0+cu130",
                 "MASTER_ADDR=localhost", "/usr/lib/python3/dist-packages/torch/__init__.py",
                 "    @functools.wraps(fn)", "GPU-5f1b9c3e-8d2a-4c6b-9e7f-0a1b2c3d4e5f"]:
        assert contributed.private_problems(text, "x") == [], text


def test_replacing_another_machine_s_recording_is_refused(book):
    _git(book, "add", "runs")
    _git(book, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "T4")
    _edit(book, lambda m: m.update(gpus=["NVIDIA L4"], label="NVIDIA L4"))
    status, out = _verify(book)
    assert status == 1 and out[0].startswith(
        "runs/toy-gpu/run.json: would replace the recording of runs/toy-gpu/ made on Tesla T4 "
        "with one made on NVIDIA L4: use another folder name")


def test_a_pull_request_changing_files_outside_the_folder_is_refused(book):
    base = _git(book, "rev-parse", "HEAD")
    (book / "chapters" / "toy.md").write_text("# Changed\n")
    _git(book, "add", ".")
    _git(book, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "pr")
    status, out = _verify(book, base=base)
    assert status == 1 and "chapters/toy.md: changed outside runs/toy-gpu/" in out


def test_a_packed_zip_is_accepted_and_a_tampered_one_refused(book, tmp_path):
    folder = book / "runs" / "toy-gpu"
    packed = tmp_path / "toy-gpu.zip"
    assert contributed.pack(folder, packed) == ["runs/toy-gpu/run.json", "runs/toy-gpu/toy.ipynb"]
    shutil.rmtree(folder)  # a maintainer's checkout: the zip alone
    assert _verify(book, packed)[0] == 0
    with zipfile.ZipFile(packed, "a") as zf:
        zf.writestr("../../.github/workflows/x.yml", "on: push")
    status, out = _verify(book, packed)
    assert status == 1 and out[:1] == [
        "toy-gpu.zip:../../.github/workflows/x.yml: a file outside runs/<slug>/"]


def test_a_damaged_zip_is_refused_in_one_line(book, tmp_path):
    packed = tmp_path / "toy-gpu.zip"
    with zipfile.ZipFile(packed, "w") as zf:  # stored: a changed byte is the file's own
        zf.writestr("runs/toy-gpu/run.json", (book / "runs/toy-gpu/run.json").read_bytes())
    packed.write_bytes(packed.read_bytes().replace(b'"gpus"', b'"gpuz"', 1))
    status, out = _verify(book, packed)
    assert status == 1 and out[0] == ("toy-gpu.zip:runs/toy-gpu/run.json: damaged (not its "
                                      "CRC-32): pack it again")


def test_scrub_removes_this_machine_s_names_home_and_environment(book, monkeypatch):
    monkeypatch.setattr(contributed.socket, "gethostname", lambda: "adas-laptop")
    monkeypatch.setattr(contributed.getpass, "getuser", lambda: "ada")
    monkeypatch.setenv("HOME", "/home/ada")
    monkeypatch.setenv("MY_API_TOKEN", "s3cr3t-value")
    printed = ("adas-laptop ada /home/ada/gpu-book/chapters s3cr3t-value\n"
               "PATH=/usr/bin\n")
    path = book / "runs" / "toy-gpu" / "toy.ipynb"
    nbformat.write(_nb(GPU_OUT + printed), path)
    assert contributed.scrub(path.parent) == ["toy.ipynb: private strings replaced in outputs"]
    text = runs.code_cells(nbformat.read(path, as_version=4))[0].outputs[0].text
    assert "/home/ada" not in text
    assert text == GPU_OUT + "<host> <user> ~/gpu-book/chapters <env>\nPATH=<env>\n"
    assert _verify(book)[0] == 0


@pytest.mark.parametrize("gpu, platform, slug", [
    ("Tesla T4", "colab", "nvidia-t4-colab"), ("NVIDIA L4", "colab", "nvidia-l4-colab"),
    ("NVIDIA A100-SXM4-40GB", "sagemaker", "nvidia-a100-sxm4-sagemaker"),
    ("NVIDIA GeForce RTX 4090", "local", "nvidia-rtx-4090-local"),
])
def test_a_slug_names_the_gpu_and_the_platform(gpu, platform, slug):
    assert contributed.slug(gpu, platform) == slug


def test_the_workflow_verifies_each_recording_a_pull_request_changes(book, tmp_path,
                                                                    monkeypatch):
    base = _git(book, "rev-parse", "HEAD")
    _git(book, "add", "runs")
    _git(book, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "run")
    report, summary = tmp_path / "report" / "verify.md", tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert contributed.verify_changed(base, book, report) == 0
    text = report.read_text()
    assert text.startswith("## Recordings in this pull request\n\n### runs/toy-gpu\n\n```\n")
    assert "verify: accepted runs/toy-gpu/ (Tesla T4, 2026-11-28)" in text
    assert text.endswith("```\n") and summary.read_text() == text
    # Nothing under runs/ changed: refused, saying so.
    report.unlink()
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    assert contributed.verify_changed("HEAD", book, report) == 1
    assert report.read_text().endswith("No file under runs/ changed since HEAD.\n")


def test_the_command_needs_a_recording_or_a_base():
    done = subprocess.run([sys.executable, "-m", "booktools.contributed"], capture_output=True,
                          text=True, encoding="utf-8")
    assert done.returncode == 2 and "give PATH or --base" in done.stderr
