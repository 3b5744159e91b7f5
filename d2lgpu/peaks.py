"""Datasheet peak rates of the GPUs readers meet, and a measured rate as a share of them.

``PEAKS`` holds one row per part: FP32, TF32, BF16 and FP16 in TFLOP/s and
memory bandwidth in GB/s, each with the vendor document it comes from. The
FLOP/s are dense: FP32 on the ordinary cores, TF32/BF16/FP16 on the tensor
cores where the part has them, without 2:4 sparsity. Where a datasheet prints
only the figure with sparsity (marked ``*``), the row holds half of it, as the
datasheet's own footnote says ("specifications are one-half lower without
sparsity"). None: no figure for that column, because the part has no such
units (the T4 and V100 have tensor cores for FP16 only, none for TF32 or
BF16) or because its vendor publishes none (Apple and Intel publish bandwidth
only for the parts below). A part whose figures could not be found in a vendor
document is left out, so ``peak_for`` returns None for it (e.g. the A10G,
which AWS builds and NVIDIA publishes no datasheet for); so is a MIG slice,
which has a share of a GPU's units.

This is the book's one table of peaks: ``share_of_peak`` serves the
chapters and the exercises alike.

``PCIE_X16`` holds the x16 link bandwidth per direction of PCIe 3.0, 4.0 and
5.0 in GB/s.

The GPU's name comes from two small probes, ``_gpu_name`` (CUDA, XPU) and
``_mps_chip`` (Apple's MPS has no name API; the chip's name is the Mac's
processor brand string), which tests replace to pretend to have any GPU.
"""

from __future__ import annotations

import platform
import re
import subprocess
from dataclasses import dataclass

import torch

from ._checks import check_real, with_unit

__all__ = ["Peak", "peak_for", "share_of_peak", "format_rate"]


@dataclass(frozen=True)
class Peak:
    """A GPU's datasheet peaks: TFLOP/s per number type (None: no figure), memory GB/s, and their source (chapter "Neural networks and GPUs")."""

    name: str
    fp32: float | None
    tf32: float | None
    bf16: float | None
    fp16: float | None
    bandwidth: float | None
    source: str


_A100 = ("NVIDIA A100 Tensor Core GPU datasheet, "
         "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/"
         "pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf")
_H100 = ("NVIDIA H100 Tensor Core GPU datasheet, "
         "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet")
_H200 = ("NVIDIA H200 Tensor Core GPU datasheet, "
         "https://nvdam.widen.net/s/nb5zzzsjdf/hpc-datasheet-sc23-h200-datasheet-3002446")
_V100 = ("NVIDIA Tesla V100 GPU accelerator datasheet, "
         "https://images.nvidia.com/content/technologies/volta/pdf/"
         "volta-v100-datasheet-update-us-1165301-r5.pdf")
_APPLE_M1_PRO_MAX = ("Apple press release 'Introducing M1 Pro and M1 Max: the most powerful "
                     "chips Apple has ever built' (18 October 2021, Business Wire), copied at "
                     "https://semiwiki.com/forum/index.php?threads/introducing-m1-pro-and-m1-"
                     "max-the-most-powerful-chips-apple-has-ever-built.14790/")

# Where each row's figures were read (a vendor document, or a copy of it that
# names it) is noted beside the row. The halves of with-sparsity figures are
# exact: 1,979 / 2 = 989.5.
PEAKS: tuple[Peak, ...] = (
    # Datasheet: FP32 8.1, "Mixed Precision (FP16/FP32)" 65 (Turing has no
    # sparsity, TF32 or BF16), 300 GB/s; as quoted, with this datasheet
    # named, in copies of MosaicML Composer's FLOP table (8.1, 65) and of
    # xFormers' device limits (300 GB/s), and in Yandex Cloud's GPU docs.
    Peak("T4", 8.1, None, None, 65, 300,
         "NVIDIA T4 Tensor Core GPU datasheet, https://www.nvidia.com/content/dam/"
         "en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf"),
    # Datasheet: FP32 30.3; TF32 120*, BF16 242*, FP16 242* (* with
    # sparsity); 300 GB/s. Read in Cisco's copy of the datasheet
    # (cisco.com/c/dam/en/us/products/collateral/servers-unified-computing/
    # ucs-c-series-rack-servers/nvidia-l4-gpu.pdf) and nvidia.com/en-us/data-center/l4/.
    Peak("L4", 30.3, 60, 121, 121, 300,
         "NVIDIA L4 Tensor Core GPU datasheet, https://resources.nvidia.com/"
         "en-us-data-center-overview-mc/en-us-data-center-overview/l4-gpu-datasheet"),
    # Datasheet columns "Tesla V100 SXM2" and "Tesla V100 PCIe": FP32 15.7 and
    # 14, "Tensor Performance" (FP16) 125 and 112, 900 GB/s both.
    Peak("V100 SXM2", 15.7, None, None, 125, 900, _V100),
    Peak("V100 PCIe", 14, None, None, 112, 900, _V100),
    # Datasheet (r4), four columns with the same FLOP/s: FP32 19.5, TF32 156,
    # BF16 312, FP16 312 (dense; 312/624/624 with sparsity); "GPU Memory
    # Bandwidth: 1,555GB/s | 1,935GB/s | 1,555GB/s | 2,039GB/s" for 40GB PCIe,
    # 80GB PCIe, 40GB SXM, 80GB SXM.
    Peak("A100 SXM 40GB", 19.5, 156, 312, 312, 1555, _A100),
    Peak("A100 SXM 80GB", 19.5, 156, 312, 312, 2039, _A100),
    Peak("A100 PCIe 40GB", 19.5, 156, 312, 312, 1555, _A100),
    Peak("A100 PCIe 80GB", 19.5, 156, 312, 312, 1935, _A100),
    # Datasheet, SXM and PCIe columns (2022 edition): FP32 67 and 51; TF32
    # 989* and 756*; BF16 and FP16 1,979* and 1,513*; 3,350 and 2,000 GB/s;
    # "* Shown with sparsity. Specifications 1/2 lower without sparsity."
    # Read in HPC Tech's copy (archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html);
    # the PCIe product brief PB-11133-001 also gives "greater than 2,000" GB/s.
    Peak("H100 SXM", 67, 494.5, 989.5, 989.5, 3350, _H100),
    Peak("H100 PCIe", 51, 378, 756.5, 756.5, 2000, _H100),
    # Datasheet, NVL column (current edition, which replaced PCIe by NVL), per
    # GPU: FP32 60; TF32 835*; BF16 and FP16 1,671*; 3.9 TB/s. Also on
    # nvidia.com/en-us/data-center/h100/.
    Peak("H100 NVL", 60, 417.5, 835.5, 835.5, 3900, _H100),
    # Datasheet, SXM and NVL columns: FP32 67 and 60; TF32 989* and 835*; BF16
    # and FP16 1,979* and 1,671*; 4.8 TB/s both. NVIDIA NeMo's MFU script
    # quotes the same dense halves (1979/2, 989/2) with this datasheet named.
    Peak("H200", 67, 494.5, 989.5, 989.5, 4800, _H200),
    Peak("H200 NVL", 60, 417.5, 835.5, 835.5, 4800, _H200),
    # Apple: "M1 Pro offers up to 200GB/s of memory bandwidth ... M1 Max
    # delivers up to 400GB/s" (every GPU-core variant of each); no FLOP/s
    # figure.
    Peak("Apple M1 Pro", None, None, None, None, 200, _APPLE_M1_PRO_MAX),
    Peak("Apple M1 Max", None, None, None, None, 400, _APPLE_M1_PRO_MAX),
    # Intel ARK: 3.2768 TB/s of HBM2e (as cited by glennklockwood.com/garden/
    # processors/pvc); no FLOP/s figure found in an Intel document.
    Peak("Intel Data Center GPU Max 1550", None, None, None, None, 3276.8,
         "Intel ARK, Intel Data Center GPU Max 1550, https://ark.intel.com/content/"
         "www/us/en/ark/products/232873/intel-data-center-gpu-max-1550.html"),
)

# x16 link bandwidth per direction, GB/s: half of the figure for both
# directions together. PCI-SIG's PCIe 5.0 press release (May 2019) gives
# "up to 128 GB/s via x16" and quotes "32 GB/second (for the V4.0 by16
# serial version) ... PCIe 5.0 doubles that again to 64 GB/second" (read in
# the copy at convergedigest.blogspot.com/2019/05/new-pci-express-50-spec-
# handles-32.html); PCIe 3.0 runs at half of 4.0's 16 GT/s (NVIDIA's V100
# PCIe datasheet, above: 32 GB/s both ways). These are raw rates: 128b/130b
# encoding leaves 15.75, 31.5 and 63 GB/s of data, and packet headers less.
PCIE_X16: dict[int, float] = {3: 16, 4: 32, 5: 64}
PCIE_SOURCE = ("PCI-SIG, PCIe 5.0 specification press release (May 2019), as copied at "
               "https://convergedigest.blogspot.com/2019/05/new-pci-express-50-spec-"
               "handles-32.html; " + _V100)

# A name as drivers report it -> a row: the first entry whose patterns all
# match (case-insensitive) wins. None: a variant with figures of its own that
# are not in the table (V100S, V100 SXM3, A100 64GB, ...), so no row fits.
_MATCH: tuple[tuple[tuple[str, ...], str], ...] = (
    ((r"\bH100\b", r"\bNVL\b"), "H100 NVL"),
    ((r"\bH100\b", r"\bPCIe\b"), "H100 PCIe"),
    ((r"\bH100\b", r"\bHBM3\b"), "H100 SXM"),      # "NVIDIA H100 80GB HBM3"
    ((r"\bH100\b", r"\bSXM\d?\b"), "H100 SXM"),
    ((r"\bH200\b", r"\bNVL\b"), "H200 NVL"),
    ((r"\bH200\b",), "H200"),
    ((r"\bA100\b", r"\bSXM\d?\b", r"\b40GB\b"), "A100 SXM 40GB"),
    ((r"\bA100\b", r"\bSXM\d?\b", r"\b80GB\b"), "A100 SXM 80GB"),
    ((r"\bA100\b", r"\bPCIe\b", r"\b40GB\b"), "A100 PCIe 40GB"),
    ((r"\bA100\b", r"\bPCIe\b", r"\b80GB\b"), "A100 PCIe 80GB"),
    ((r"\bV100-SXM2\b",), "V100 SXM2"),             # "Tesla V100-SXM2-16GB"
    ((r"\bV100-PCIE\b",), "V100 PCIe"),             # not "V100S-PCIE"
    ((r"\bL4\b",), "L4"),                           # not "L40S"
    ((r"\bT4\b",), "T4"),
    ((r"^Apple M1 Pro$",), "Apple M1 Pro"),
    ((r"^Apple M1 Max$",), "Apple M1 Max"),
    ((r"\bData Center GPU Max 1550\b",), "Intel Data Center GPU Max 1550"),
)

_ROWS = {peak.name: peak for peak in PEAKS}

_KINDS = {  # kind -> (label, unit, scale of the unit)
    "fp32": ("FP32", "TFLOP/s", 1e12),
    "tf32": ("TF32 tensor-core", "TFLOP/s", 1e12),
    "bf16": ("BF16 tensor-core", "TFLOP/s", 1e12),
    "fp16": ("FP16 tensor-core", "TFLOP/s", 1e12),
    "bandwidth": ("memory bandwidth", "GB/s", 1e9),
}

_DEVICE_STRING = re.compile(r"(cpu|cuda|mps|xpu)(:\d+)?")


# --- Probes: the only places that ask about the hardware. ---------------------

def _gpu_name(device: torch.device) -> str | None:
    """The name the driver reports for a CUDA or XPU device; None where this torch cannot tell."""
    if device.type == "xpu":
        get_name = getattr(getattr(torch, "xpu", None), "get_device_name", None)
        return None if get_name is None else get_name(device)
    return torch.cuda.get_device_name(device)


def _mps_chip() -> str | None:
    """The Apple chip behind MPS, e.g. 'Apple M1 Max': the Mac's processor brand string; None elsewhere."""
    if platform.system() != "Darwin":
        return None
    try:
        return subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"],
                              capture_output=True, text=True, check=True,
                              timeout=5).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


# --- Looking up. ----------------------------------------------------------------

# A MIG slice ("NVIDIA A100-SXM4-40GB MIG 1g.5gb") has a share of the GPU's
# SMs and memory bandwidth, and its name contains the whole GPU's: the GPU's
# row would understate its share of peak (a 1g slice has 1/7 of an A100's
# compute). The datasheets give no per-slice figures, so no row fits.
_MIG = re.compile(r"\bMIG\b")


def _is_mig(name: str) -> bool:
    return bool(_MIG.search(name))


def _row(name: str) -> Peak | None:
    if _is_mig(name):
        return None
    for patterns, row in _MATCH:
        if all(re.search(p, name, re.IGNORECASE) for p in patterns):
            return _ROWS[row]
    return None


def _name(device: torch.device) -> str | None:
    """The name to look up for a device; None for the CPU or a device that has none."""
    if device.type in ("cuda", "xpu"):
        return _gpu_name(device)
    if device.type == "mps":
        return _mps_chip()
    return None


def _as_device_or_name(value, function: str):
    """``value`` as a torch.device, or as a GPU's name (a str that names no device type)."""
    if isinstance(value, torch.device):
        return value
    if isinstance(value, str):
        if _DEVICE_STRING.fullmatch(value.strip()):
            return torch.device(value.strip())
        return value
    raise TypeError(
        f"{function}(name_or_device): name_or_device must be a GPU's name, a "
        f"device string such as 'cuda:0', or a torch.device, got {value!r}")


def peak_for(name_or_device) -> Peak | None:
    """The datasheet row for a GPU, given by its name as drivers report it or by its device; None if no row fits, or for a MIG slice (chapter "Neural networks and GPUs")."""
    found = _as_device_or_name(name_or_device, "peak_for")
    if isinstance(found, torch.device):
        found = _name(found)
        if found is None:
            return None
    return _row(found)


def format_rate(flops: float) -> str:
    """A speed in FLOP/s with three significant digits: '52.3 TFLOP/s' (chapter "Neural networks and GPUs")."""
    flops = check_real(flops, "format_rate", "flops", 0, hint="a speed cannot be negative")
    return with_unit(flops, (("TFLOP/s", 1e12), ("GFLOP/s", 1e9), ("MFLOP/s", 1e6)))


def _full_name(peak: Peak) -> str:
    """The part as the printed line names it: 'NVIDIA H100 SXM', 'Apple M1 Max'."""
    if peak.name.startswith(("Apple ", "Intel ")):
        return peak.name
    return f"NVIDIA {peak.name}"


def _format_figure(figure: float, unit: str) -> str:
    return f"{figure:,g} {unit}"


def share_of_peak(rate: float, device, kind: str) -> str:
    """A measured rate (FLOP/s, or bytes/s for 'bandwidth') as a whole-number share of the device's datasheet peak, e.g. '78% of the NVIDIA H100 SXM FP32 peak (67 TFLOP/s)' (chapter "Neural networks and GPUs").

    ``kind`` is 'fp32', 'tf32', 'bf16', 'fp16' or 'bandwidth'; ``device`` a
    device (or device string) or a GPU's name. Without a row for the device
    (or for a MIG slice, see ``_MIG``) the line says so instead. The share
    has no decimals: a datasheet peak assumes the boost clock, which a GPU
    at its power limit does not hold (``format_conditions`` prints the
    clocks a measurement ran at), so a finer share claims more than it
    knows. An FP32 share above 100% says that the products ran on the
    tensor cores in a lower precision.
    """
    if kind not in _KINDS:
        raise ValueError(
            f"share_of_peak(kind): kind must be one of {', '.join(map(repr, _KINDS))}, "
            f"got {kind!r}")
    rate = check_real(rate, "share_of_peak", "rate", 0, hint="a rate cannot be negative")
    found = _as_device_or_name(device, "share_of_peak")
    if isinstance(found, torch.device):
        if found.type == "cpu":
            return "no datasheet peak for the CPU"
        name = _name(found)
        if name is None:
            return f"no datasheet peak in d2lgpu's table for {found}"
    else:
        name = found
    if _is_mig(name):
        return (f"no datasheet peak for a MIG slice ({name}): the datasheet's "
                "figures are the whole GPU's")
    peak = _row(name)
    if peak is None:
        return f"no datasheet peak in d2lgpu's table for {name}"
    label, unit, scale = _KINDS[kind]
    figure = getattr(peak, kind)
    if figure is None:
        if kind in ("tf32", "bf16") and peak.fp16 is not None:
            # The T4 and V100: tensor cores for FP16 only.
            return (f"no {label} peak for the {_full_name(peak)}: it has no "
                    f"{kind.upper()} tensor cores")
        return f"no {label} peak for the {_full_name(peak)}: its vendor publishes none"
    line = (f"{100 * rate / (figure * scale):.0f}% of the {_full_name(peak)} {label} "
            f"peak ({_format_figure(figure, unit)})")
    if kind == "fp32" and rate > figure * scale:
        line += ("; above it, so these float32 products ran on the tensor cores "
                 "in a lower precision (TF32, as torch.set_float32_matmul_precision "
                 "allows)")
    return line
