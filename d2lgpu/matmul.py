"""Matrix-product speed per device: the helpers of exercise 1 (Exercises).

The exercise multiplies square matrices of growing size on every device,
plots the achieved speed and compares the best with a GPU's datasheet peak.
What it needs to know about the hardware comes from three small probes
(``_gpu_name``, ``_gpu_capability``, ``_gpu_memory``), so that tests can
pretend to have any GPU.
"""

from __future__ import annotations

import platform
import re
import subprocess

import torch

from ._checks import check_real, with_unit
from .timing import benchmark

__all__ = [
    "cpu_model",
    "device_name",
    "matmul_sizes",
    "dtypes_to_measure",
    "time_matmuls",
    "format_rate",
    "DATASHEET_PEAKS",
    "datasheet_row",
    "tf32_state",
    "peak_report",
    "plot_rates",
]

# Peak TFLOP/s from NVIDIA's datasheets, dense: (FP32, TF32, BF16/FP16).
DATASHEET_PEAKS = {
    "T4": (8.1, None, 65),
    "L4": (30.3, 60, 121),
    "A100": (19.5, 156, 312),
    "H100 SXM": (67, 495, 989),
    "H100 PCIe": (51, 378, 756),
    "H200": (67, 495, 989),
}

# Checked in order; the first pattern that matches a GPU's name wins. None:
# a variant whose peaks differ from every row (H100 NVL, H200 NVL).
_NAME_PATTERNS = [
    (r"\bH100\b.*\bPCIe\b", "H100 PCIe"),
    (r"\bH100\b.*\bNVL\b", None),
    (r"\bH100\b", "H100 SXM"),
    (r"\bH200\b.*\bNVL\b", None),
    (r"\bH200\b", "H200"),
    (r"\bA100\b", "A100"),
    (r"\bL4\b", "L4"),
    (r"\bT4\b", "T4"),
]


def _gpu_name(device: torch.device) -> str:
    """The name the driver reports for a CUDA or XPU device."""
    if device.type == "xpu":
        return torch.xpu.get_device_name(device)
    return torch.cuda.get_device_name(device)


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


def format_rate(flops: float) -> str:
    """A speed in FLOP/s with three significant digits: '52.3 TFLOP/s' (chapter "Exercises, with measured solutions")."""
    flops = check_real(flops, "format_rate", "flops", 0, hint="a speed cannot be negative")
    return with_unit(flops, (("TFLOP/s", 1e12), ("GFLOP/s", 1e9), ("MFLOP/s", 1e6)))


def datasheet_row(name: str) -> str | None:
    """The ``DATASHEET_PEAKS`` key for a GPU's name; None if none fits (chapter "Exercises, with measured solutions")."""
    for pattern, row in _NAME_PATTERNS:
        if re.search(pattern, name):
            return row
    return None


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
    tflops = flops / 1e12
    if dtype != torch.float32:
        return (f"{100 * tflops / half:.0f}% of the {row} 16-bit "
                f"tensor-core peak ({half} TFLOP/s)")
    line = (f"{100 * tflops / fp32:.0f}% of the {row} FP32 peak "
            f"({fp32} TFLOP/s)")
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
