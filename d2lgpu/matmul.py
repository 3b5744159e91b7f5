"""Matrix-product speed per device: the helpers of exercise 1 (Exercises).

The exercise multiplies square matrices of growing size on every device,
plots the achieved speed and compares the best with a GPU's datasheet peak,
from the table in ``d2lgpu.peaks``. What it needs to know about the hardware comes from three small probes
(``_gpu_name``, ``_gpu_capability``, ``_gpu_memory``), so that tests can
pretend to have any GPU.
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
    "DATASHEET_PEAKS",
    "datasheet_row",
    "tf32_state",
    "peak_report",
    "plot_rates",
]


def _exercise_row(peak: peaks.Peak) -> str:
    """The exercise's name for a row of ``d2lgpu.peaks``: the A100's four variants differ in bandwidth only, so they share one row, 'A100'."""
    return "A100" if peak.name.startswith("A100 ") else peak.name


# Peak TFLOP/s, dense, from the datasheets in d2lgpu.peaks: (FP32, TF32,
# BF16 or else FP16), for every row that has FLOP/s figures.
DATASHEET_PEAKS = {
    _exercise_row(peak): (peak.fp32, peak.tf32,
                          peak.bf16 if peak.bf16 is not None else peak.fp16)
    for peak in peaks.PEAKS if peak.fp32 is not None
}


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


def datasheet_row(name: str) -> str | None:
    """The ``DATASHEET_PEAKS`` key for a GPU's name; None if none fits (chapter "Exercises, with measured solutions")."""
    peak = peaks.peak_for(name)
    if peak is None or peak.fp32 is None:
        return None
    return _exercise_row(peak)


def tf32_state() -> str:
    """How PyTorch is told to run float32 products on CUDA, in one line (chapter "Exercises, with measured solutions")."""
    precision = torch.get_float32_matmul_precision()
    allowed = torch.backends.cuda.matmul.allow_tf32
    return (f"float32 matmul precision '{precision}', "
            f"torch.backends.cuda.matmul.allow_tf32 = {allowed}")


def peak_report(device, dtype, flops: float) -> str:
    """A measured speed as a share of the GPU's datasheet peak, if known (chapter "Exercises, with measured solutions")."""
    device = torch.device(device)
    if device.type != "cuda":
        return "no datasheet peak in the table for this device"
    name = device_name(device)
    row = datasheet_row(name)
    if row is None:
        return f"no datasheet peak in the table for {name}"
    fp32, _, half = DATASHEET_PEAKS[row]
    if dtype == torch.float16:
        half = peaks.peak_for(name).fp16
    tflops = flops / 1e12
    if dtype != torch.float32:
        return (f"{100 * tflops / half:.0f}% of the {row} 16-bit "
                f"tensor-core peak ({half:g} TFLOP/s)")
    line = (f"{100 * tflops / fp32:.0f}% of the {row} FP32 peak "
            f"({fp32:g} TFLOP/s)")
    if tflops > fp32:
        line += ("; above it, so these float32 products ran on the tensor "
                 f"cores in a lower precision ({tf32_state()})")
    return line


def _legend_label(device: torch.device, dtype: torch.dtype) -> str:
    """A short curve label: 'H100 80GB HBM3, bfloat16', 'CPU (16 threads)'."""
    if device.type == "cpu":
        name = f"CPU ({torch.get_num_threads()} threads)"
    else:
        name = device_name(device).removeprefix("NVIDIA ")
    return f"{name}, {str(dtype).removeprefix('torch.')}"


def plot_rates(results: dict):
    """Plot TFLOP/s against n, one line per (device, dtype); returns the figure (chapter "Exercises, with measured solutions").

    Sized and lettered to stay readable on a phone's screen.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import ScalarFormatter

    fig, ax = plt.subplots(figsize=(5, 4.4), layout="constrained")
    for (device, dtype), rates in results.items():
        sizes = list(rates)
        tflops = [rate / 1e12 for _, rate in rates.values()]
        style = "-" if dtype == torch.float32 else "--"
        ax.plot(sizes, tflops, style, marker="o", markersize=4, linewidth=2,
                label=_legend_label(torch.device(device), dtype))
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.set_yscale("log")
    ax.tick_params(labelsize=13)
    ax.tick_params(axis="x", labelrotation=45)
    ax.set_xlabel("n (product of two n × n matrices)", fontsize=14)
    ax.set_ylabel("achieved TFLOP/s (2n³ flops each)", fontsize=14)
    ax.set_title("Matrix product speed by size", fontsize=15)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=12, loc="lower right")
    return fig
