"""Naming, finding and describing compute devices.

The names and meanings are d2l's (``cpu``, ``gpu``, ``num_gpus``, ``try_gpu``,
``try_all_gpus``), made accelerator-agnostic: CUDA first, then Apple's MPS,
then Intel's XPU. Everything this module knows about the hardware comes from
the three small probes ``_cuda_device_count``, ``_mps_is_available`` and
``_xpu_device_count``; tests replace them to pretend to have GPUs.

Forcing the CPU: with the environment variable ``D2LGPU_FORCE_CPU=1``,
d2lgpu behaves as on a machine without an accelerator, even where there is
one: ``accelerator()`` is None, ``num_gpus()`` 0, ``try_gpu()`` the CPU,
``try_all_gpus()`` empty, and the ``Trainer`` trains on the CPU. The variable
is read at every call (set it in ``os.environ`` at any time); unset, empty or
``0`` leaves the devices alone, and any other value than ``1`` is an error.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import torch

from ._checks import check_int, check_real, with_unit
from .cuda_arch import entry_capability, kernels_for

__all__ = [
    "cpu",
    "gpu",
    "num_gpus",
    "try_gpu",
    "try_all_gpus",
    "accelerator",
    "device_report",
    "show_devices",
    "format_bytes",
    "memory_counters",
]


# --- Probes: the only places that ask torch about the hardware. -------------

def _cuda_device_count() -> int:
    """Number of CUDA devices PyTorch can use (0 on a CPU-only build)."""
    if not torch.cuda.is_available():
        return 0
    return torch.cuda.device_count()


def _mps_is_available() -> bool:
    """Whether Apple's Metal (MPS) device is usable."""
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def _xpu_device_count() -> int:
    """Number of Intel XPU devices (0 where this torch has no XPU support)."""
    xpu = getattr(torch, "xpu", None)
    if xpu is None or not xpu.is_available():
        return 0
    return xpu.device_count()


# --- Forcing the CPU. ----------------------------------------------------------

FORCE_CPU = "D2LGPU_FORCE_CPU"


def _cpu_forced() -> bool:
    """Whether ``D2LGPU_FORCE_CPU`` asks for the CPU ('1'), or not (unset, '' or '0')."""
    value = os.environ.get(FORCE_CPU, "").strip()
    if value in ("", "0"):
        return False
    if value == "1":
        return True
    raise ValueError(
        f"environment variable {FORCE_CPU} must be '1' (use the CPU), '0' or "
        f"unset (use the accelerator), got {os.environ[FORCE_CPU]!r}")


# --- d2l's device helpers. ---------------------------------------------------

def accelerator() -> str | None:
    """The accelerator type in use: 'cuda', 'mps', 'xpu' or None (chapter "Computing devices").

    None also where ``D2LGPU_FORCE_CPU=1``; the other helpers follow it.
    """
    if _cpu_forced():
        return None
    if _cuda_device_count() > 0:
        return "cuda"
    if _mps_is_available():
        return "mps"
    if _xpu_device_count() > 0:
        return "xpu"
    return None


def cpu() -> torch.device:
    """The CPU device, ``torch.device('cpu')`` (chapter "Computing devices")."""
    return torch.device("cpu")


def gpu(i: int = 0) -> torch.device:
    """The i-th accelerator's name, ``cuda:i`` where there is none; not checked to exist (chapter "Computing devices")."""
    i = check_int(i, "gpu", "i", 0)
    return torch.device(accelerator() or "cuda", i)


def num_gpus() -> int:
    """Number of accelerator devices: CUDA or XPU devices, 1 for MPS, else 0 (chapter "Computing devices")."""
    kind = accelerator()
    if kind == "cuda":
        return _cuda_device_count()
    if kind == "mps":
        return 1
    if kind == "xpu":
        return _xpu_device_count()
    return 0


def try_gpu(i: int = 0) -> torch.device:
    """``gpu(i)`` if that device exists, else ``cpu()`` (chapter "Computing devices")."""
    i = check_int(i, "try_gpu", "i", 0)
    if i < num_gpus():
        return gpu(i)
    return cpu()


def try_all_gpus() -> list[torch.device]:
    """All accelerator devices, ``[gpu(0), gpu(1), ...]``; ``[]`` when there is none (chapter "Computing devices")."""
    return [gpu(i) for i in range(num_gpus())]


# --- Describing the devices. -------------------------------------------------

_BYTE_UNITS = (("TiB", 2.0**40), ("GiB", 2.0**30), ("MiB", 2.0**20), ("KiB", 2.0**10))


def format_bytes(n: int | float) -> str:
    """A byte count in binary units, e.g. '1.50 GiB', '512 MiB', '12.0 KiB' (chapter "Tensors and GPUs")."""
    n = check_real(n, "format_bytes", "n", 0)
    if n < 1024:
        return f"{int(n)} B"
    return with_unit(n, _BYTE_UNITS)


def memory_counters(device):
    """The module that counts ``device``'s memory (torch.cuda, or torch.accelerator from PyTorch 2.9), or None (chapter "Tensors and GPUs")."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda
    generic = getattr(torch, "accelerator", None)
    if device.type == "cpu" or not hasattr(generic, "memory_allocated"):
        return None  # PyTorch < 2.9
    try:
        generic.memory_allocated(device)
    except RuntimeError:  # MPS in releases whose allocator it cannot read
        return None
    return generic


def _kernels_line(props) -> str | None:
    """Whether this CUDA build has kernels for a GPU of ``props``' compute capability.

    None on a ROCm build, or where PyTorch lists no CUDA architectures (then
    there is nothing to compare with).
    """
    if getattr(torch.version, "hip", None):
        return None
    built = [a for a in torch.cuda.get_arch_list() if entry_capability(a)]
    if not built:
        return None
    capability = (props.major, props.minor)
    line = f"  compute capability {props.major}.{props.minor}: "
    found = kernels_for(capability, built)
    machine_code = [a for a in found if a.startswith("sm_")]
    if machine_code:
        return line + f"this PyTorch has kernels for it ({machine_code[-1]})"
    if found:
        return line + (f"no kernels built for it; CUDA compiles them from "
                       f"{found[-1]} at first use")
    older = capability < min(entry_capability(a) for a in built)
    return line + (
        f"this PyTorch has no kernels for it (built for {' '.join(built)}), so "
        f"its first operation will fail: install a PyTorch built for "
        f"{'an older' if older else 'a newer'} CUDA (pytorch.org)")


def _memory_lines(kind: str, backend, count: int) -> list[str]:
    """Name and memory of each CUDA or XPU device, creating no context.

    ``mem_get_info`` (free and total memory, all processes) needs a context
    on the device and creates one (hundreds of MiB) where there is none, so
    it is asked only about devices where this process already holds memory
    (``memory_reserved(i) > 0``, read from PyTorch's caching allocator, which
    creates nothing). Elsewhere the report gives the total from the device's
    properties.
    """
    lines = []
    allocated = getattr(backend, "memory_allocated", None)
    reserved = getattr(backend, "memory_reserved", None)
    mem_get_info = getattr(backend, "mem_get_info", None)
    for i in range(count):
        props = backend.get_device_properties(i)
        lines.append(f"{kind}:{i}: {props.name}")
        kernels = _kernels_line(props) if kind == "cuda" else None
        if kernels is not None:
            lines.append(kernels)
        held = reserved(i) if reserved is not None else 0
        if mem_get_info is not None and held > 0:
            free, total = mem_get_info(i)
            lines.append(
                f"  memory: {format_bytes(total - free)} used of "
                f"{format_bytes(total)} (all processes)")
        else:
            lines.append(f"  memory: {format_bytes(props.total_memory)} total")
        if allocated is not None and reserved is not None:
            lines.append(
                f"  this process: {format_bytes(allocated(i))} in tensors, "
                f"{format_bytes(held)} reserved by PyTorch's caching allocator")
    return lines


def _mps_lines() -> list[str]:
    mps = torch.mps
    lines = ["mps:0: Apple GPU (Metal Performance Shaders)"]
    recommended = getattr(mps, "recommended_max_memory", None)
    driver = getattr(mps, "driver_allocated_memory", None)
    current = getattr(mps, "current_allocated_memory", None)
    if recommended is not None:
        lines.append(
            f"  memory: shared with the CPU; Metal recommends at most "
            f"{format_bytes(recommended())} for this process")
    if current is not None and driver is not None:
        lines.append(
            f"  this process: {format_bytes(current())} in tensors, "
            f"{format_bytes(driver())} held by the Metal driver")
    return lines


def device_report() -> str:
    """Each accelerator's name and memory (total or used, this process's), from PyTorch itself, creating no GPU context (chapter "Tensors and GPUs").

    For a CUDA GPU it also says whether this build of PyTorch has kernels for
    its compute capability (``cuda_arch.kernels_for``), and what to install
    where it has none.
    """
    kind = accelerator()
    if kind is None:
        forced = f" in use ({FORCE_CPU}=1)" if _cpu_forced() else ""
        return (f"No accelerator{forced}: running on the CPU "
                f"({torch.get_num_threads()} threads)")
    count = num_gpus()
    header = f"{count} {kind.upper()} device{'s' if count != 1 else ''}"
    if kind == "cuda" and torch.version.cuda:
        header += f" (PyTorch {torch.__version__}, CUDA {torch.version.cuda})"
    else:
        header += f" (PyTorch {torch.__version__})"
    if kind == "mps":
        lines = _mps_lines()
    else:
        lines = _memory_lines(kind, getattr(torch, kind), count)
    return "\n".join([header, *lines])


def show_devices(timeout: float = 5.0) -> None:
    """Print ``nvidia-smi``'s table where that command works, else ``device_report()`` (chapter "Using GPUs from PyTorch")."""
    path = shutil.which("nvidia-smi")
    if path is not None:
        try:
            done = subprocess.run([path], capture_output=True, text=True,
                                  timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired):
            done = None
        if done is not None and done.returncode == 0:
            print(done.stdout.rstrip("\n"))
            return
    print(device_report())
