"""d2lgpu.launch: the bounded launcher of chapters/distributed.md and tests/distributed.

These run small Python scripts that do not import torch, so they are fast; the
torchrun path itself is exercised by tests/distributed.
"""
from __future__ import annotations

import os
import socket
import sys
import textwrap
import time

import pytest

from d2lgpu.launch import free_port, launch, port_is_free, processes_left


def script(tmp_path, body: str):
    path = tmp_path / "job.py"
    path.write_text(textwrap.dedent(body))
    return path


def test_free_port_is_free_until_someone_binds_it():
    port = free_port()
    assert port_is_free(port)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
        sock.listen()
        assert not port_is_free(port)
    assert port_is_free(port)


def test_a_plain_run_returns_its_output_and_leaves_nothing_behind(tmp_path):
    job = script(tmp_path, """
        import os, sys
        print("args", sys.argv[1:], "threads", os.environ["OMP_NUM_THREADS"], os.environ["EXTRA"])
    """)
    run = launch(job, "--out", tmp_path / "x.json", nproc=None, env={"EXTRA": "yes"})
    assert run.returncode == 0 and run.port == 0
    assert run.stdout == f"args ['--out', '{tmp_path / 'x.json'}'] threads 1 yes\n"
    assert run.command == [sys.executable, str(job), "--out", str(tmp_path / "x.json")]
    assert not processes_left(run.pid)
    run.check()  # a successful run does not raise


def test_a_failed_run_names_its_first_failing_rank(tmp_path):
    job = script(tmp_path, """
        import sys
        print("[rank 1] ValueError: bad batch", file=sys.stderr)
        print("[rank 0] RuntimeError: connection closed", file=sys.stderr)
        sys.exit(3)
    """)
    run = launch(job, nproc=None, check=False)
    assert run.returncode == 3
    assert run.first_failure() == "[rank 1] ValueError: bad batch"
    with pytest.raises(RuntimeError, match=r"job\.py failed \(exit code 3\)\. "
                                           r"First failure: \[rank 1\] ValueError: bad batch"):
        launch(job, nproc=None)


def test_without_rank_lines_the_error_quotes_the_end_of_stderr(tmp_path):
    job = script(tmp_path, """
        raise SystemExit("plain failure")
    """)
    with pytest.raises(RuntimeError, match="First failure: plain failure"):
        launch(job, nproc=None)


def test_a_run_past_its_time_limit_is_stopped_with_its_children(tmp_path):
    pid_file = tmp_path / "child.pid"
    job = script(tmp_path, f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        time.sleep(60)
    """)
    start = time.perf_counter()
    with pytest.raises(TimeoutError, match="did not end within 2 s; all its processes were stopped"):
        launch(job, nproc=None, timeout=2)
    assert time.perf_counter() - start < 20
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the orphaned child is reaped by init
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the run's child process {child} outlived the time limit")


@pytest.mark.parametrize("kwargs, message", [
    ({"nproc": 0}, r"launch\(nproc\): nproc must be a positive int or None, got 0"),
    ({"nproc": True}, r"launch\(nproc\): .* got True"),
    ({"nproc": 1.5}, r"launch\(nproc\): .* got 1\.5"),
    ({"timeout": 0}, r"launch\(timeout\): timeout must be > 0 seconds, got 0"),
])
def test_bad_arguments_are_refused_before_anything_runs(tmp_path, kwargs, message):
    marker = tmp_path / "ran"
    job = script(tmp_path, f"open({str(marker)!r}, 'w').close()\n")
    with pytest.raises(ValueError, match=message):
        launch(job, **kwargs)
    assert not marker.exists()
