"""Matrix-product speed per device: the helpers of exercise 1 (Exercises).

The exercise multiplies square matrices of growing size on every device,
plots the achieved speed and compares the best with a GPU's datasheet peak
through ``d2lgpu.peaks.share_of_peak`` (``peak_kind`` names the peak a dtype
runs at). What it needs to know about the hardware comes from three small
probes (``_gpu_name``, ``_gpu_capability``, ``_gpu_memory``), so that tests
can pretend to have any GPU.
"""

from __future__ import annotations

import platform
import subprocess

import torch

from . import peaks
from .peaks import format_rate  # noqa: F401  (the exercise imports it from here)
from .timing import benchmark

__all__ = [
    "cpu_model",
    "device_name",
    "matmul_sizes",
    "dtypes_to_measure",
    "time_matmuls",
    "peak_kind",
    "tf32_state",
    "plot_rates",
]


def _gpu_name(device: torch.device) -> str:
    """The name the driver reports for a CUDA or XPU device."""
    return peaks._gpu_name(device) or f"unnamed {device.type} device"


def _gpu_capability(device: torch.device) -> tuple[int, int]:
    """A CUDA device's compute capability, e.g. (8, 0) for an A100."""
    return torch.cuda.get_device_capability(device)


def _gpu_memory(device: torch.device) -> int:
    """A CUDA device's total memory in bytes."""
    return torch.cuda.get_device_properties(device).total_memory


def cpu_model() -> str:
    """The CPU's model name, as precisely as the operating system tells (chapter "Exercises, with measured solutions")."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    if platform.system() == "Darwin":
        try:
            return subprocess.run(
                ["sysctl", "-n", "machdep.cpu.brand_string"],
                capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            pass
    return platform.processor() or platform.machine() or "unknown CPU"


def device_name(device) -> str:
    """The GPU's model, or the CPU's model and PyTorch's thread count (chapter "Exercises, with measured solutions")."""
    device = torch.device(device)
    if device.type in ("cuda", "xpu"):
        return _gpu_name(device)
    if device.type == "mps":
        return f"Apple GPU (MPS, {platform.machine()})"
    return f"{cpu_model()}, {torch.get_num_threads()} threads"


def matmul_sizes(device) -> list[int]:
    """Sizes n to try on ``device``: 16, 24, 32, 48, ... up to its limit (chapter "Exercises, with measured solutions")."""
    device = torch.device(device)
    largest = 1024
    if device.type != "cpu":
        largest = 8192
    # A "40 GB" A100 reports about 39.5 GiB: it gets the large sizes too.
    if device.type == "cuda" and _gpu_memory(device) >= 39 * 2**30:
        largest = 16384
    sizes, n = [], 16
    while n <= largest:
        sizes += [n, n * 3 // 2] if n * 3 // 2 <= largest else [n]
        n *= 2
    return sizes


def dtypes_to_measure(device) -> list[torch.dtype]:
    """float32; on CUDA also the 16-bit type its tensor cores are built for (chapter "Exercises, with measured solutions")."""
    device = torch.device(device)
    if device.type != "cuda":
        return [torch.float32]
    if _gpu_capability(device) >= (8, 0):
        return [torch.float32, torch.bfloat16]
    return [torch.float32, torch.float16]


def time_matmuls(device, dtype, sizes, repeat=5) -> dict:
    """``{n: (median seconds per product, FLOP/s)}`` for each size n (chapter "Exercises, with measured solutions")."""
    rates = {}
    for n in sizes:
        a = torch.randn(n, n, device=device, dtype=dtype)
        b = torch.randn(n, n, device=device, dtype=dtype)
        seconds = benchmark(torch.matmul, a, b, repeat=repeat).median
        rates[n] = (seconds, 2 * n**3 / seconds)
        del a, b
    return rates


_PEAK_KINDS = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}


def peak_kind(dtype: torch.dtype) -> str:
    """The ``share_of_peak`` kind of products in ``dtype``: 'fp32', 'bf16' or 'fp16' (chapter "Exercises, with measured solutions")."""
    if dtype not in _PEAK_KINDS:
        raise ValueError(
            f"peak_kind(dtype): dtype must be one of "
            f"{', '.join(map(str, _PEAK_KINDS))}, got {dtype!r}")
    return _PEAK_KINDS[dtype]


def tf32_state() -> str:
    """How PyTorch is told to run float32 products on CUDA, in one line (chapter "Exercises, with measured solutions")."""
    precision = torch.get_float32_matmul_precision()
    allowed = torch.backends.cuda.matmul.allow_tf32
    return (f"float32 matmul precision '{precision}', "
            f"torch.backends.cuda.matmul.allow_tf32 = {allowed}")


def plot_rates(results: dict):
    """Plot TFLOP/s against n, one line per (device, dtype); returns a d2lgpu.plots.Plot, its figure ``.fig`` (chapter "Exercises, with measured solutions").

    Sized and lettered to stay readable on a phone's screen, in the book's language.
    """
    from .plots import Plot

    curves = []
    for (device, dtype), rates in results.items():
        device = torch.device(device)
        cpu = device.type == "cpu"
        curves.append({"device": "CPU" if cpu else device_name(device).removeprefix("NVIDIA "),
                       "threads": torch.get_num_threads() if cpu else None,
                       "dtype": str(dtype).removeprefix("torch."), "sizes": list(rates),
                       "tflops": [rate / 1e12 for _, rate in rates.values()]})
    return Plot("rates", {"curves": curves})
