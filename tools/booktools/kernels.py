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

Needs nbclient and jupyter_client only (a GPU machine's record environment has
no jupytext).
"""
from __future__ import annotations

import contextlib
import os
import platform
import sys
import tempfile
from pathlib import Path

__all__ = ["CACHE_VARIABLES", "kernel_caches", "kernel_manager", "execute"]

# Where a kernel's libraries keep caches and configuration (under $HOME by default).
CACHE_VARIABLES = ("MPLCONFIGDIR", "IPYTHONDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")
KERNEL_NAME = "this-python"


@contextlib.contextmanager
def kernel_caches():
    """Point the kernels started inside at a fresh temporary folder for their caches."""
    saved = {name: os.environ.get(name) for name in CACHE_VARIABLES}
    with tempfile.TemporaryDirectory(prefix="book-kernel-") as folder:
        for name in CACHE_VARIABLES:
            os.environ[name] = os.path.join(folder, name.lower())
            os.makedirs(os.environ[name])
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
                            "{connection_file}"],
                      display_name=f"Python {platform.python_version()} ({sys.executable})",
                      language="python")

    class ThisInterpreterSpecs(KernelSpecManager):
        def get_kernel_spec(self, kernel_name):
            return spec

    class ThisInterpreter(AsyncKernelManager):
        def _kernel_spec_manager_default(self):
            return ThisInterpreterSpecs(data_dir=self.data_dir)

    return ThisInterpreter


def execute(nb, folder: Path, timeout: int, allow_errors: bool = False, **hooks) -> None:
    """Execute nb in place, its working directory folder, in a fresh kernel of this
    interpreter with fresh caches; hooks go to NotebookClient (on_cell_execute, ...)."""
    from nbclient import NotebookClient
    with kernel_caches():
        NotebookClient(nb, kernel_manager_class=kernel_manager(), kernel_name=KERNEL_NAME,
                       timeout=timeout, allow_errors=allow_errors,
                       resources={"metadata": {"path": str(folder)}}, **hooks).execute()
