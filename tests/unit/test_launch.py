"""d2lgpu.launch: the bounded launcher of chapters/distributed.md and tests/distributed.

These run small Python scripts that do not import torch, so they are fast;
torchrun itself (workers in sessions of their own) is exercised by
tests/distributed/test_launcher.py.
"""
from __future__ import annotations

import os
import signal
import socket
import sys
import textwrap
import threading
import time
import _thread

import pytest

import d2lgpu.launch
from d2lgpu.launch import launch, port_is_free, processes_left

posix_only = pytest.mark.skipif(os.name == "nt", reason="needs POSIX signals")


@pytest.fixture(params=["proc", "ps"])
def finder(request, monkeypatch):
    """Find the run's processes in /proc (Linux), or as without it (macOS): ps."""
    if request.param == "proc" and not d2lgpu.launch.HAS_PROC:
        pytest.skip("no /proc on this system")
    monkeypatch.setattr(d2lgpu.launch, "HAS_PROC", request.param == "proc")
    return request.param


def script(tmp_path, body: str):
    path = tmp_path / "job.py"
    path.write_text(textwrap.dedent(body))
    return path



def test_port_is_free_until_someone_binds_it():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        sock.listen()
        assert not port_is_free(port)
    assert port_is_free(port)


def test_a_plain_run_returns_its_output_and_leaves_nothing_behind(tmp_path):
    job = script(tmp_path, """
        import os, sys
        print("args", sys.argv[1:], "threads", os.environ["OMP_NUM_THREADS"],
              os.environ["EXTRA"])
    """)
    run = launch(job, "--out", tmp_path / "x.json", nproc=None,
                 env={"EXTRA": "yes"})
    assert run.returncode == 0 and run.port is None
    assert run.stdout == f"args ['--out', '{tmp_path / 'x.json'}'] threads 1 yes\n"
    assert run.command == [sys.executable, str(job), "--out", str(tmp_path / "x.json")]
    assert processes_left(run) == []
    run.check()  # a successful run does not raise


def test_a_failed_run_names_its_first_failing_rank_on_a_line_of_its_own(tmp_path):
    job = script(tmp_path, """
        import sys
        print("[rank 1] ValueError: bad batch", file=sys.stderr)
        print("[rank 0] RuntimeError: connection closed", file=sys.stderr)
        sys.exit(3)
    """)
    run = launch(job, nproc=None, check=False)
    assert run.returncode == 3
    assert run.first_failure() == "[rank 1] ValueError: bad batch"
    with pytest.raises(RuntimeError) as info:
        launch(job, nproc=None)
    assert str(info.value) == ("job.py failed (exit code 3).\n"
                               "First failure: [rank 1] ValueError: bad batch")


def test_without_rank_lines_the_error_quotes_the_end_of_stderr(tmp_path):
    job = script(tmp_path, """
        raise SystemExit("plain failure")
    """)
    with pytest.raises(RuntimeError, match="First failure: plain failure"):
        launch(job, nproc=None)


@posix_only
def test_a_run_past_its_time_limit_is_stopped_with_a_child_that_ignores_sigterm(
        alive, tmp_path, short_grace, finder, launch_past_limit):
    # The child starts a session of its own (as torchrun's workers do) and
    # ignores SIGTERM: only SIGKILL, sent to it by PID, can stop it.
    pid_file = tmp_path / "child.pid"
    job = stubborn_child_job(tmp_path, pid_file, then="time.sleep(60)")

    def start(limit):
        pid_file.unlink(missing_ok=True)
        launch(job, nproc=None, timeout=limit)

    error, limit, seconds = launch_past_limit(start, pid_file.exists, (1, 10))
    assert str(error) == f"job.py did not end within {limit} s; 2 processes were stopped"
    assert seconds < limit + 2 * short_grace + 2  # limit, 2 graces
    child = int(pid_file.read_text())
    assert child in error.run.pids
    assert not alive(child), f"the run's child {child} outlived the time limit"
    assert processes_left(error.run) == []


def stubborn_child_job(tmp_path, pid_file, then: str):
    """A job whose child ignores SIGTERM in a session of its own; `then` runs after."""
    return script(tmp_path, f"""
        import os, subprocess, sys, time
        child = subprocess.Popen(
            [sys.executable, "-c",
             "import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
             "open({str(pid_file)!r} + '.tmp', 'w').write(str(os.getpid()));"
             "os.replace({str(pid_file)!r} + '.tmp', {str(pid_file)!r});"
             "time.sleep(60)"],
            start_new_session=True)
        while not os.path.exists({str(pid_file)!r}):
            time.sleep(0.01)
        {then}
    """)


@posix_only
def test_a_process_left_behind_by_a_finished_run_is_stopped(alive, tmp_path, short_grace):
    pid_file = tmp_path / "child.pid"
    job = stubborn_child_job(tmp_path, pid_file, then="print('done')")
    run = launch(job, nproc=None, timeout=30)
    assert run.returncode == 0 and run.stdout == "done\n"
    child = int(pid_file.read_text())
    assert child in run.pids
    assert not alive(child), f"the run's child {child} outlived the run"
    assert processes_left(run) == []


@pytest.fixture
def python_sigint():
    """SIGINT handled by Python, as in a kernel, for the duration of a test.

    A process that a shell starts in the background inherits SIGINT ignored,
    and then _thread.interrupt_main() does nothing at all.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@posix_only
def test_an_interrupted_run_is_stopped_with_its_children(alive, tmp_path, short_grace,
                                                        finder, python_sigint):
    pid_file = tmp_path / "child.pid"
    job = stubborn_child_job(tmp_path, pid_file, then="time.sleep(60)")

    def interrupt_when_started():
        deadline = time.monotonic() + 20
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        _thread.interrupt_main()  # as the notebook's "interrupt kernel" does

    threading.Thread(target=interrupt_when_started, daemon=True).start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        launch(job, nproc=None, timeout=60)
    assert time.monotonic() - start < 20 + 2 * short_grace + 2
    child = int(pid_file.read_text())
    assert not alive(child), f"the run's child {child} outlived the interrupt"


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
