"""Naming, finding and describing compute devices.

The names and meanings are d2l's (``cpu``, ``gpu``, ``num_gpus``, ``try_gpu``,
``try_all_gpus``), made accelerator-agnostic: CUDA first, then Apple's MPS,
then Intel's XPU. Everything this module knows about the hardware comes from
the three small probes ``_cuda_device_count``, ``_mps_is_available`` and
``_xpu_device_count``; tests replace them to pretend to have GPUs.
"""

from __future__ import annotations

import numbers
import shutil
import subprocess

import torch

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


# --- Argument checking. ------------------------------------------------------

def _check_index(i, where: str) -> int:
    """Return ``i`` as an int, or raise naming ``where`` and what is accepted."""
    if isinstance(i, bool) or not isinstance(i, numbers.Integral):
        raise TypeError(
            f"{where}: i must be a non-negative int, got {i!r} "
            f"of type {type(i).__name__}")
    if i < 0:
        raise ValueError(f"{where}: i must be a non-negative int, got {i!r}")
    return int(i)


# --- d2l's device helpers. ---------------------------------------------------

def accelerator() -> str | None:
    """The accelerator type in use: 'cuda', 'mps', 'xpu' or None (chapter "Computing devices")."""
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
    i = _check_index(i, "gpu(i)")
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
    i = _check_index(i, "try_gpu(i)")
    if i < num_gpus():
        return gpu(i)
    return cpu()


def try_all_gpus() -> list[torch.device]:
    """All accelerator devices, ``[gpu(0), gpu(1), ...]``; ``[]`` when there is none (chapter "Computing devices")."""
    return [gpu(i) for i in range(num_gpus())]


# --- Describing the devices. -------------------------------------------------

def format_bytes(n: int | float) -> str:
    """A byte count in binary units, e.g. '1.50 GiB', '512 MiB', '12.0 KiB' (chapter "Tensors and GPUs")."""
    if isinstance(n, bool) or not isinstance(n, numbers.Real):
        raise TypeError(
            f"format_bytes(n): n must be a non-negative number of bytes, "
            f"got {n!r}")
    if not n >= 0:  # also catches NaN
        raise ValueError(
            f"format_bytes(n): n must be a non-negative number of bytes, "
            f"got {n!r}")
    value, unit = float(n), "B"
    for next_unit in ("KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            break
        value, unit = value / 1024, next_unit
    if unit == "B":
        return f"{int(value)} B"
    return f"{_three_digits(value)} {unit}"


def _three_digits(value: float) -> str:
    """Three significant digits, keeping trailing zeros: 1.50, 12.0, 512."""
    if value >= 99.95:
        return f"{value:.0f}"
    if value >= 9.995:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _cuda_lines() -> list[str]:
    lines = []
    for i in range(_cuda_device_count()):
        props = torch.cuda.get_device_properties(i)
        free, total = torch.cuda.mem_get_info(i)
        allocated = torch.cuda.memory_allocated(i)
        reserved = torch.cuda.memory_reserved(i)
        lines.append(f"cuda:{i}: {props.name}")
        lines.append(
            f"  memory: {format_bytes(total - free)} used of "
            f"{format_bytes(total)} (all processes)")
        lines.append(
            f"  this process: {format_bytes(allocated)} in tensors, "
            f"{format_bytes(reserved)} reserved by PyTorch's caching allocator")
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


def _xpu_lines() -> list[str]:
    xpu = torch.xpu
    lines = []
    for i in range(_xpu_device_count()):
        props = xpu.get_device_properties(i)
        lines.append(f"xpu:{i}: {props.name}")
        mem_get_info = getattr(xpu, "mem_get_info", None)
        if mem_get_info is not None:
            free, total = mem_get_info(i)
            lines.append(
                f"  memory: {format_bytes(total - free)} used of "
                f"{format_bytes(total)} (all processes)")
        else:
            lines.append(f"  memory: {format_bytes(props.total_memory)} total")
        allocated = getattr(xpu, "memory_allocated", None)
        reserved = getattr(xpu, "memory_reserved", None)
        if allocated is not None and reserved is not None:
            lines.append(
                f"  this process: {format_bytes(allocated(i))} in tensors, "
                f"{format_bytes(reserved(i))} reserved by PyTorch's caching "
                f"allocator")
    return lines


def device_report() -> str:
    """Each accelerator's name and memory (total, used, this process's), from PyTorch itself (chapter "Tensors and GPUs")."""
    kind = accelerator()
    if kind is None:
        return (f"No accelerator: running on the CPU "
                f"({torch.get_num_threads()} threads)")
    count = num_gpus()
    header = f"{count} {kind.upper()} device{'s' if count != 1 else ''}"
    if kind == "cuda" and torch.version.cuda:
        header += f" (PyTorch {torch.__version__}, CUDA {torch.version.cuda})"
    else:
        header += f" (PyTorch {torch.__version__})"
    lines = {"cuda": _cuda_lines, "mps": _mps_lines, "xpu": _xpu_lines}[kind]()
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
