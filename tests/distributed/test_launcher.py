"""d2lgpu.launch under a real torchrun: workers that ignore SIGTERM.

torchrun starts every worker in a session of its own, so signalling
torchrun's process group cannot reach them; the launcher must find them
and stop them by PID, within its time limit plus the grace periods.
"""
from __future__ import annotations

import os
import textwrap
import time

import pytest

from d2lgpu.launch import launch, port_is_free, processes_left

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.name == "nt", reason="needs POSIX signals")]

# Seconds. torchrun imports torch (1.5 s on a quiet 2-core machine) before it
# starts the workers, which do not; the longer limit is tried only when the
# workers had not started within the first.
LIMITS = (5, 30)


def test_workers_that_ignore_sigterm_are_killed_at_the_time_limit(
        alive, tmp_path, short_grace, launch_past_limit):
    job = tmp_path / "stubborn.py"
    job.write_text(textwrap.dedent(f"""
        import os, signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        path = os.path.join({str(tmp_path)!r}, "worker-" + os.environ["RANK"])
        with open(path, "w") as file:
            file.write(f"{{os.getpid()}} {{os.getsid(0)}}")
        time.sleep(120)
    """))
    files = [tmp_path / f"worker-{rank}" for rank in (0, 1)]

    def start(limit):
        for file in files:
            file.unlink(missing_ok=True)
        launch(job, nproc=2, timeout=limit)

    error, limit, seconds = launch_past_limit(
        start, lambda: all(file.exists() for file in files), LIMITS)
    assert str(error) == f"stubborn.py did not end within {limit} s; 3 processes were stopped"
    assert seconds < limit + 2 * short_grace + 2, f"launch took {seconds:.1f} s"
    run = error.run
    workers = {}
    for rank in (0, 1):
        text = files[rank].read_text()
        pid, session = map(int, text.split())
        workers[pid] = session
    # The premise: each worker leads a session of its own, not torchrun's.
    assert all(session == pid != run.pid for pid, session in workers.items())
    assert set(workers) <= run.pids
    assert [pid for pid in workers if alive(pid)] == []
    assert processes_left(run) == []
    if run.port is not None:  # known where /proc shows the workers' MASTER_PORT
        # No process holds it now; the kernel may still close the killed
        # connections for a moment, so allow it a few seconds.
        deadline = time.monotonic() + 10
        while not port_is_free(run.port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert port_is_free(run.port), f"port {run.port} still held"
