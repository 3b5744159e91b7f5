"""Execute a notebook as refresh, record and the Colab check all do (``execute``).

The kernel runs this very interpreter (a kernelspec of its own, not whatever
"python3" names: another torch than the run reports); its libraries' caches go to a
fresh folder, not the user's home (a matplotlibrc there changed what a chapter
printed); Ctrl-C or SIGTERM stops the whole execution (``Stopped``), where nbclient's
handlers kill the kernel only. Needs nbclient alone (no jupytext when recording).
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
from pathlib import Path
from unittest import mock

__all__ = ["CACHE_VARIABLES", "kernel_caches", "execute", "Stopped"]

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
    """Kernels started inside run this interpreter (KERNEL_NAME), their caches in a fresh folder."""
    with tempfile.TemporaryDirectory(prefix="book-kernel-") as folder:
        caches = {name: os.path.join(folder, name.lower()) for name in CACHE_VARIABLES}
        for path in caches.values():
            os.makedirs(path)
        from ipykernel.kernelspec import write_kernel_spec  # sys.executable's kernel.json
        kernels = Path(folder, "jupyter", "kernels")
        write_kernel_spec(kernels / KERNEL_NAME, extra_arguments=[KERNEL_LOG_LEVEL])
        jupyter = {"JUPYTER_PATH": str(kernels.parent)}  # searched first
        with mock.patch.dict(os.environ, {**caches, **QUIET, **jupyter}):
            yield Path(folder)


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
        client = _client_class()(nb, kernel_name=KERNEL_NAME, timeout=timeout,
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
