"""The README's way to run the chapters locally works as written: its commands
start JupyterLab from .venv, serving the chapters with this interpreter as the
kernel."""
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Running the chapters on your machine"


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text[text.index(SECTION):].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    return block.group(1).splitlines()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_readme_starts_jupyterlab_on_the_chapters_with_the_venv_kernel(tmp_path):
    setup, lab = readme_commands()
    assert setup == "bash scripts/setup.sh"  # what scripts/test.sh ran before these tests
    words = shlex.split(lab)
    assert words[:2] == [".venv/bin/jupyter", "lab"], lab
    port, token = free_port(), "readme-test"
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
           "JUPYTER_DATA_DIR": str(tmp_path / "data"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    # Jupyter refuses root unless told; CI's machines run the tests as root.
    root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    proc = subprocess.Popen([*words, "--no-browser", f"--ServerApp.port={port}", *root,
                             "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"

    def get(path: str) -> dict:
        request = urllib.request.Request(base + path, headers={"Authorization": f"token {token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                specs = get("/api/kernelspecs")
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read()[-3000:]
                assert time.monotonic() < deadline, "JupyterLab did not start in 60 s"
                time.sleep(0.3)
        chapter = get("/api/contents/intro.ipynb?content=0")  # chapters/ is its root
        assert chapter["type"] == "notebook"
        kernel = specs["kernelspecs"][specs["default"]]["spec"]
        # The kernel is .venv's Python, which imports this checkout's d2lgpu:
        # ipykernel's spec names "python", which jupyter_client starts as the
        # server's own interpreter (.venv/bin/jupyter's), not a kernelspec elsewhere.
        assert kernel["argv"][0] == "python" or \
            Path(kernel["argv"][0]).resolve() == Path(sys.executable).resolve(), kernel
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
