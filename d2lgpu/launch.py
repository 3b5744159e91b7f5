"""Run a training script under torchrun from Python, bounded in time (chapter "Beyond one device: data-parallel training with `torch.distributed`").

Used by chapters/distributed.md and by tests/distributed; not re-exported by
``d2lgpu`` itself, since only that chapter needs it.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Run", "free_port", "port_is_free", "processes_left", "stop", "launch"]


@dataclass
class Run:
    """One finished run of a script (chapter "Beyond one device: data-parallel training with `torch.distributed`")."""

    script: str
    command: list
    port: int
    pid: int
    returncode: int
    seconds: float
    stdout: str
    stderr: str

    def first_failure(self) -> str:
        """The first `[rank N] Error: message` line, else the end of stderr."""
        reports = [line for line in self.stderr.splitlines() if line.startswith("[rank ")]
        return reports[0] if reports else "\n".join(self.stderr.splitlines()[-5:])

    def check(self) -> None:
        """Raise RuntimeError quoting the first failing rank if the run failed."""
        if self.returncode != 0:
            raise RuntimeError(f"{self.script} failed (exit code {self.returncode}). "
                               f"First failure: {self.first_failure()}")


def free_port() -> int:
    """A TCP port on 127.0.0.1 on which nothing listens right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_is_free(port: int) -> bool:
    """Whether a TCP port on 127.0.0.1 can be bound (nothing holds it)."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def processes_left(pid: int) -> bool:
    """Whether any process of the session that `pid` started is still alive."""
    try:
        os.killpg(pid, 0)  # signal 0 only checks whether the group exists
    except ProcessLookupError:
        return False
    return True


def stop(proc: subprocess.Popen) -> None:
    """Stop a launched command and every process it started: SIGTERM, then SIGKILL."""
    if not hasattr(os, "killpg"):  # Windows has no process groups
        proc.kill()
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return  # nothing left to stop
        try:
            proc.wait(timeout=5)
            if not processes_left(proc.pid):
                return
        except subprocess.TimeoutExpired:
            pass


def launch(script, *script_args, nproc: int | None = 2, timeout: float = 60,
           env: dict | None = None, cwd=None, check: bool = True) -> Run:
    """Run `script` in `nproc` processes with torchrun (None: one plain process) and return its Run."""
    if nproc is not None and (isinstance(nproc, bool) or not isinstance(nproc, int) or nproc < 1):
        raise ValueError(f"launch(nproc): nproc must be a positive int or None, got {nproc!r}")
    if not timeout > 0:
        raise ValueError(f"launch(timeout): timeout must be > 0 seconds, got {timeout!r}")
    script = str(script)
    port = 0 if nproc is None else free_port()
    if nproc is None:
        command = [sys.executable, script, *map(str, script_args)]
    else:
        # torchrun of the Python that runs us, so the workers import the same torch.
        command = [sys.executable, "-m", "torch.distributed.run",
                   "--nnodes=1", f"--nproc-per-node={nproc}", "--max-restarts=0",
                   "--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{port}",
                   script, *map(str, script_args)]
    # One thread per process: several processes must not fight over the cores.
    full_env = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=full_env, cwd=cwd, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException as err:  # time-out, or the kernel was interrupted
        stop(proc)
        proc.communicate()
        if isinstance(err, subprocess.TimeoutExpired):
            raise TimeoutError(f"{script} did not end within {timeout} s; "
                               "all its processes were stopped") from None
        raise
    run = Run(script, command, port, proc.pid, proc.returncode,
              time.perf_counter() - start, stdout, stderr)
    if check:
        run.check()
    return run
