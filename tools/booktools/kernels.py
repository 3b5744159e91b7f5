"""Execute a notebook as refresh, record and the Colab check all do (``execute``).

The kernel runs this very interpreter, not whatever a "python3" kernelspec names
(another torch than the one the run reports); its libraries' caches and configuration
go to a fresh temporary folder, not the user's home (a matplotlibrc there changed
what a chapter printed); Ctrl-C or SIGTERM stops the whole execution (``Stopped``),
where nbclient's own handlers kill the kernel only. Needs nbclient alone (a record
environment has no jupytext).
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import signal
import sys
import tempfile
from pathlib import Path

__all__ = ["CACHE_VARIABLES", "kernel_caches", "kernel_manager", "execute", "Stopped"]

# ipykernel's warning at each start (local TCP without encryption) buried a run's lines.
KERNEL_LOG_LEVEL = "--IPKernelApp.log_level=ERROR"


class Stopped(BaseException):
    """A signal stopped an execution; its kernel is shut down."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"stopped by {signal.Signals(signum).name}")

# Where a kernel's libraries keep caches and configuration (under $HOME by default).
CACHE_VARIABLES = ("MPLCONFIGDIR", "IPYTHONDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")
# PyTorch's profiler (kineto) wrote its own "USDT:... profiler_start" lines into outputs.
QUIET = {"KINETO_LOG_LEVEL": "6"}
KERNEL_NAME = "this-python"


@contextlib.contextmanager
def kernel_caches():
    """Point the kernels started inside at a fresh folder for their caches (and QUIET)."""
    saved = {name: os.environ.get(name) for name in (*CACHE_VARIABLES, *QUIET)}
    with tempfile.TemporaryDirectory(prefix="book-kernel-") as folder:
        for name in CACHE_VARIABLES:
            os.environ[name] = os.path.join(folder, name.lower())
            os.makedirs(os.environ[name])
        os.environ.update(QUIET)
        try:
            yield Path(folder)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def kernel_manager():
    """A kernel manager class whose kernels run sys.executable (NotebookClient makes one
    per notebook, and shuts it down, freeing its GPU memory, before the next)."""
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    spec = KernelSpec(argv=[sys.executable, "-m", "ipykernel_launcher", "-f",
                            "{connection_file}", KERNEL_LOG_LEVEL],
                      display_name=f"Python {platform.python_version()} ({sys.executable})",
                      language="python")

    class ThisInterpreterSpecs(KernelSpecManager):
        def get_kernel_spec(self, kernel_name):
            return spec

    class ThisInterpreter(AsyncKernelManager):
        def _kernel_spec_manager_default(self):
            return ThisInterpreterSpecs(data_dir=self.data_dir)

    return ThisInterpreter


def _client_class():
    """NotebookClient whose SIGINT and SIGTERM stop the execution, not just its kernel."""
    from nbclient import NotebookClient

    class StoppableClient(NotebookClient):
        stopped: int | None = None

        @contextlib.asynccontextmanager
        async def async_setup_kernel(self, **kwargs):
            async with super().async_setup_kernel(**kwargs):
                loop, task = asyncio.get_running_loop(), asyncio.current_task()
                for signum in (signal.SIGINT, signal.SIGTERM):
                    with contextlib.suppress(RuntimeError, NotImplementedError):
                        loop.add_signal_handler(signum, self._stop, signum, task)
                yield

        def _stop(self, signum: int, task) -> None:
            # The task unwinds through nbclient's cleanup, which shuts the kernel down.
            if self.stopped is None:
                self.stopped = signum
                self.shutdown_kernel = "immediate"  # a busy kernel answers no request
                task.cancel()

    return StoppableClient


def execute(nb, folder: Path, timeout: int, allow_errors: bool = False, **hooks) -> None:
    """Execute nb in place from folder (hooks go to NotebookClient); Stopped on a signal."""
    with kernel_caches():
        client = _client_class()(nb, kernel_manager_class=kernel_manager(),
                                 kernel_name=KERNEL_NAME, timeout=timeout,
                                 allow_errors=allow_errors,
                                 resources={"metadata": {"path": str(folder)}}, **hooks)
        try:
            client.execute()
        except BaseException:
            if client.stopped is not None:
                raise Stopped(client.stopped) from None
            raise
        if client.stopped is not None:
            raise Stopped(client.stopped)
