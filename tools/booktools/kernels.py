"""Execute a notebook as the book does everywhere: in a kernel of this interpreter,
with its caches in a fresh temporary folder.

Three commands execute chapters: ``refresh`` (the stored outputs), ``record``
(a GPU machine's run) and the Colab check (a reader's run). Each runs them
through ``execute``, so that all three see the same thing:

- the kernel is this very interpreter (``kernel_manager``), not whatever a
  "python3" kernelspec points at, which could be another Python with another
  torch than the one the run reports;
- the kernel's libraries keep their caches and configuration in a temporary
  folder (``kernel_caches``), not the user's: a matplotlibrc or an IPython
  startup file in someone's home must not change what a chapter prints, and
  a home matplotlib cannot write to made it print a warning with the
  machine's paths.

A signal (Ctrl-C, SIGTERM) stops an execution as a whole: nbclient's own
handlers would only kill the kernel, and the caller would take that for one
failed notebook and go on with the next; ``execute`` shuts the kernel down and
raises ``Stopped`` (a BaseException, as KeyboardInterrupt).

Needs nbclient and jupyter_client only (a GPU machine's record environment has
no jupytext).
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

# ipykernel warns on every start that it listens on local TCP without
# encryption (as every Jupyter kernel on one machine does): said once per
# chapter, it buried the run's own lines. Its log shows errors only.
KERNEL_LOG_LEVEL = "--IPKernelApp.log_level=ERROR"


class Stopped(BaseException):
    """A signal stopped an execution; its kernel is shut down."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"stopped by {signal.Signals(signum).name}")

# Where a kernel's libraries keep caches and configuration (under $HOME by default).
CACHE_VARIABLES = ("MPLCONFIGDIR", "IPYTHONDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")
# Set for the kernels too: PyTorch's profiler (kineto) writes "USDT:<date> <pid>
# ... profiler_start" lines of its own to stderr, which landed in the profiler
# cells' stored and recorded outputs; level 6 keeps them out.
QUIET = {"KINETO_LOG_LEVEL": "6"}
KERNEL_NAME = "this-python"


@contextlib.contextmanager
def kernel_caches():
    """Point the kernels started inside at a fresh temporary folder for their caches,
    with the profiler's own log lines off (QUIET)."""
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
    """A kernel manager class whose kernels run this interpreter (sys.executable).

    NotebookClient creates one per notebook from the class, and so owns it:
    each chapter's kernel is shut down when the chapter is done, and frees its
    GPU memory before the next one starts.
    """
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
    """NotebookClient whose SIGINT and SIGTERM stop the execution (Stopped), not just
    its kernel."""
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
    """Execute nb in place, its working directory folder, in a fresh kernel of this
    interpreter with fresh caches; hooks go to NotebookClient (on_cell_execute, ...).

    Stopped when SIGINT or SIGTERM arrives meanwhile (the kernel shut down)."""
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
