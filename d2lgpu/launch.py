"""Run a script under torchrun from Python, bounded in time, leaving no process behind.

Used by chapters/distributed.md and by tests/distributed; not re-exported by
``d2lgpu`` itself, since only that chapter needs it.

torchrun starts every worker in a session of its own, so signalling torchrun's
process group never reaches the workers. Instead every process of a run
inherits an environment variable naming the run (``D2LGPU_RUN``); on Linux the
launcher finds them all by that mark in ``/proc``, wherever they were
reparented to. Elsewhere it records torchrun's descendants while the run goes
on. ``--standalone`` lets torchrun bind its rendezvous port itself (port 0),
so no other program can take the port between choosing and binding it.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Run", "RunTimeout", "launch", "port_is_free", "processes_left"]

MARK = "D2LGPU_RUN"  # environment variable that every process of a run inherits
GRACE = 3.0  # seconds between SIGTERM and SIGKILL
POLL = 0.1  # seconds between two looks at a running command
HAS_PROC = Path("/proc/self/environ").exists()


@dataclass
class Run:
    """One finished run of a script: its command, processes, exit code and output."""

    script: str
    command: list
    run_id: str
    pid: int  # torchrun, or the plain process
    returncode: int | None
    seconds: float
    stdout: str
    stderr: str
    port: int | None = None  # the rendezvous port torchrun bound, where known
    pids: set = field(default_factory=set)  # every process of the run seen

    def first_failure(self) -> str:
        """The first `[rank N] Error: message` line, else the end of stderr."""
        lines = self.stderr.splitlines()
        reports = [line for line in lines if line.startswith("[rank ")]
        return reports[0] if reports else "\n".join(lines[-5:])

    def check(self) -> None:
        """Raise RuntimeError quoting the first failing rank if the run failed."""
        if self.returncode != 0:
            raise RuntimeError(
                f"{Path(self.script).name} failed (exit code {self.returncode})."
                f"\nFirst failure: {self.first_failure()}")


class RunTimeout(TimeoutError):
    """A run stopped at its time limit; `.run` holds what it left (output, PIDs)."""

    def __init__(self, message: str, run: Run):
        super().__init__(message)
        self.run = run


def port_is_free(port: int) -> bool:
    """Whether a server could listen on a TCP port of 127.0.0.1 (no process holds it).

    SO_REUSEADDR, as servers set it, so that connections the kernel still
    keeps in TIME_WAIT after their processes ended do not count.
    """
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _environ(pid: int) -> list[bytes]:
    """The environment a process started with (Linux), [] if unreadable."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as file:
            return file.read().split(b"\0")
    except OSError:  # gone, a zombie's is empty, or not ours
        return []


def _marked(run_id: str) -> list[int]:
    """Live processes whose environment carries this run's mark (Linux)."""
    mark = f"{MARK}={run_id}".encode()
    return [int(name) for name in os.listdir("/proc")
            if name.isdigit() and mark in _environ(int(name))]


def _exiting(pid: int, run_id: str) -> bool:
    """Whether a process of the run is still being torn down (Linux).

    While the kernel takes a killed process apart, its environment can no
    longer be read although it is not yet a zombie: it still counts.
    """
    try:
        with open(f"/proc/{pid}/stat") as file:
            state = file.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    if state in ("Z", "X"):
        return False
    environ = _environ(pid)
    return not environ or f"{MARK}={run_id}".encode() in environ


def _ps() -> dict[int, tuple[int, str]]:
    """{pid: (parent pid, state)} of every process, from `ps` (no /proc)."""
    try:
        table = subprocess.run(["ps", "-A", "-o", "pid=,ppid=,stat="],
                               timeout=5, capture_output=True, text=True).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    rows = {}
    for line in table.splitlines():
        try:
            pid, parent, state = line.split()[:3]
            rows[int(pid)] = (int(parent), state)
        except ValueError:  # not a "pid ppid state" line
            continue
    return rows


def _descendants(pid: int) -> set[int]:
    """`pid`'s descendants, from `ps` (systems without /proc)."""
    children: dict[int, list[int]] = {}
    for child, (parent, _) in _ps().items():
        children.setdefault(parent, []).append(child)
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def processes_left(run: Run) -> list[int]:
    """PIDs of the processes of `run` still alive ([] when none)."""
    if os.name == "nt":
        return []  # Windows: launch() kills its child and waits for it
    if HAS_PROC:
        return sorted(set(_marked(run.run_id)) | {
            pid for pid in run.pids if _exiting(pid, run.run_id)})
    table = _ps()  # a zombie has ended; only its parent has not noticed
    return sorted(pid for pid in run.pids
                  if pid in table and not table[pid][1].startswith("Z"))


def _stop(proc: subprocess.Popen, run: Run) -> None:
    """Stop every process of the run: SIGTERM, then SIGKILL after GRACE s."""
    if os.name == "nt":
        proc.kill()
        proc.wait(timeout=GRACE)
        return
    for sig, wait in ((signal.SIGTERM, GRACE), (signal.SIGKILL, GRACE)):
        if not HAS_PROC and proc.poll() is None:  # workers started just now
            run.pids.update(_descendants(proc.pid))
        proc.poll()  # reap torchrun if it has ended
        left = processes_left(run)
        run.pids.update(left)
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            proc.poll()
            if not processes_left(run):
                return
            time.sleep(POLL)


def _port(run: Run) -> int | None:
    """MASTER_PORT as a worker of the run sees it (Linux), else None."""
    for pid in run.pids - {run.pid}:
        for entry in _environ(pid):
            if entry.startswith(b"MASTER_PORT="):
                return int(entry.split(b"=", 1)[1])
    return None


def launch(script, *script_args, nproc: int | None = 2, timeout: float = 60,
           env: dict | None = None, cwd=None, check: bool = True) -> Run:
    """Run `script` in `nproc` processes with torchrun (None: one plain process).

    Returns the Run; raises RunTimeout (a TimeoutError) after `timeout` s and
    RuntimeError if the run failed and `check` is true. Whatever happens,
    every process of the run has ended when it returns or raises.
    """
    if nproc is not None and (isinstance(nproc, bool)
                              or not isinstance(nproc, int) or nproc < 1):
        raise ValueError("launch(nproc): nproc must be a positive int or None, "
                         f"got {nproc!r}")
    if not timeout > 0:
        raise ValueError("launch(timeout): timeout must be > 0 seconds, "
                         f"got {timeout!r}")
    script = str(script)
    if nproc is None:
        command = [sys.executable, script, *map(str, script_args)]
    else:
        # torchrun of the Python that runs us, so the workers import our torch.
        command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                   f"--nproc-per-node={nproc}", "--max-restarts=0",
                   script, *map(str, script_args)]
    run_id = uuid.uuid4().hex
    # One thread per process: several processes must not fight over the cores.
    full_env = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {}),
                MARK: run_id}
    # Files, not pipes: a process left holding a pipe cannot block us.
    files = {"mode": "w+", "encoding": "utf-8", "errors": "replace"}
    with tempfile.TemporaryFile(**files) as out, \
            tempfile.TemporaryFile(**files) as err:
        start = time.monotonic()
        proc = subprocess.Popen(command, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL,
                                env=full_env, cwd=cwd, start_new_session=True)
        run = Run(script, command, run_id, proc.pid, None, 0.0, "", "",
                  pids={proc.pid})
        timed_out, looks = False, 0
        try:
            while proc.poll() is None:
                if time.monotonic() - start > timeout:
                    timed_out = True
                    break
                # Note the run's processes: each look until the port is
                # known, then every fifth (a look reads all of /proc).
                want_port = HAS_PROC and nproc is not None and run.port is None
                if os.name != "nt" and (want_port or looks % 5 == 0):
                    run.pids.update(_marked(run_id) if HAS_PROC
                                    else _descendants(proc.pid))
                    if want_port:
                        run.port = _port(run)
                looks += 1
                time.sleep(POLL)
        finally:  # also on KeyboardInterrupt: nothing of the run may survive
            _stop(proc, run)
            run.seconds = time.monotonic() - start
            run.returncode = proc.poll()
            out.seek(0)
            err.seek(0)
            run.stdout, run.stderr = out.read(), err.read()
    left = processes_left(run)
    if timed_out:
        name = Path(script).name
        what = (f"{len(run.pids)} processes were stopped" if not left
                else f"processes {left} could not be stopped")
        raise RunTimeout(f"{name} did not end within {timeout} s; {what}", run)
    if left:
        raise RuntimeError(f"processes {left} of {script} could not be stopped")
    if check:
        run.check()
    return run
