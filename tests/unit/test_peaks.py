"""The datasheet table: its shape, the name matching, and share_of_peak on every kind of device (faked)."""

import dataclasses
import re

import pytest
import torch

import d2lgpu
from d2lgpu import peaks

FLOPS = ("fp32", "tf32", "bf16", "fp16")


# --- The table's shape. ----------------------------------------------------------

def test_names_are_unique():
    names = [peak.name for peak in peaks.PEAKS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("peak", peaks.PEAKS, ids=lambda peak: peak.name)
def test_every_row_has_a_source_and_positive_figures(peak):
    # A source: a title and the address of the vendor's document.
    assert re.search(r"\S.*, .*https?://\S+", peak.source), peak.source
    figures = [getattr(peak, kind) for kind in FLOPS + ("bandwidth",)]
    assert any(figure is not None for figure in figures)
    for figure in figures:
        assert figure is None or (isinstance(figure, (int, float)) and figure > 0)


@pytest.mark.parametrize("peak", peaks.PEAKS, ids=lambda peak: peak.name)
def test_narrower_types_are_never_slower(peak):
    # FP16/BF16 >= TF32 >= FP32 where given: the tensor cores are faster than
    # the ordinary ones, and 16-bit tensor-core products faster than TF32.
    fp32, tf32 = peak.fp32, peak.tf32
    for half in (peak.bf16, peak.fp16):
        if half is None:
            continue
        for wider in (tf32, fp32):
            if wider is not None:
                assert half >= wider
    if tf32 is not None and fp32 is not None:
        assert tf32 >= fp32


def test_a_row_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        peaks.PEAKS[0].fp32 = 1.0


def test_every_row_can_be_reached_by_a_name():
    # No dead rows: each is the answer for some name the matching knows.
    reachable = {row for _, row in peaks._MATCH}
    assert reachable == {peak.name for peak in peaks.PEAKS}


def test_pcie_table():
    assert set(peaks.PCIE_X16) == {3, 4, 5}
    assert peaks.PCIE_X16[3] == pytest.approx(16)
    for gen in (4, 5):  # each generation doubles the rate per lane
        assert peaks.PCIE_X16[gen] == 2 * peaks.PCIE_X16[gen - 1]
    assert "PCI-SIG" in peaks.PCIE_SOURCE and "https://" in peaks.PCIE_SOURCE


# --- Names as drivers report them. ------------------------------------------------

@pytest.mark.parametrize("name, row", [
    ("Tesla T4", "T4"),
    ("NVIDIA L4", "L4"),
    ("NVIDIA L40S", None),                 # not an L4
    ("NVIDIA A10G", None),                 # AWS's part: no NVIDIA datasheet
    ("NVIDIA A10", None),
    ("Tesla V100-SXM2-16GB", "V100 SXM2"),
    ("Tesla V100-SXM2-32GB", "V100 SXM2"),
    ("Tesla V100-PCIE-16GB", "V100 PCIe"),
    ("Tesla V100S-PCIE-32GB", None),       # the V100S has figures of its own
    ("Tesla V100-SXM3-32GB", None),
    ("NVIDIA A100-SXM4-40GB", "A100 SXM 40GB"),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB"),
    ("NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB"),
    ("NVIDIA A100 80GB PCIe", "A100 PCIe 80GB"),
    ("NVIDIA A100-SXM-64GB", None),        # a variant with its own bandwidth
    ("NVIDIA A800-SXM4-80GB", None),
    ("NVIDIA H100 80GB HBM3", "H100 SXM"),
    ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA H100 NVL", "H100 NVL"),
    ("NVIDIA H100", None),                 # which H100? no guess
    ("NVIDIA H800", None),
    ("NVIDIA GH200 480GB", None),
    ("NVIDIA H200", "H200"),
    ("NVIDIA H200 NVL", "H200 NVL"),
    ("NVIDIA GeForce RTX 4090", None),
    ("Intel(R) Data Center GPU Max 1550", "Intel Data Center GPU Max 1550"),
    ("Intel(R) Data Center GPU Max 1100", None),
    ("Apple M1 Max", "Apple M1 Max"),
    ("Apple M1 Pro", "Apple M1 Pro"),
    ("Apple M1", None),
    ("Apple M3 Max", None),
])
def test_peak_for_a_name(name, row):
    peak = d2lgpu.peak_for(name)
    assert (peak.name if peak else None) == row


def test_the_h100_sxm_row_is_the_datasheets():
    peak = d2lgpu.peak_for("NVIDIA H100 80GB HBM3")
    assert (peak.fp32, peak.tf32, peak.bf16, peak.fp16, peak.bandwidth) == (
        67, 494.5, 989.5, 989.5, 3350)
    assert "nvidia.com" in peak.source


@pytest.fixture
def fake_names(monkeypatch):
    """``fake_names(gpu=..., mps=...)``: what the probes say a GPU (CUDA or XPU) and the Mac's chip are called."""
    def fake(gpu=None, mps=None):
        monkeypatch.setattr(peaks, "_gpu_name", lambda device: gpu)
        monkeypatch.setattr(peaks, "_mps_chip", lambda: mps)
    return fake


def test_peak_for_a_device(fake_names):
    fake_names(gpu="NVIDIA A100-SXM4-80GB", mps="Apple M1 Pro")
    assert d2lgpu.peak_for(torch.device("cuda", 0)).name == "A100 SXM 80GB"
    assert d2lgpu.peak_for("cuda:1").name == "A100 SXM 80GB"
    assert d2lgpu.peak_for("mps").name == "Apple M1 Pro"
    assert d2lgpu.peak_for("cpu") is None
    fake_names(gpu=None, mps=None)  # an XPU this torch cannot name; not a Mac
    assert d2lgpu.peak_for("xpu:0") is None
    assert d2lgpu.peak_for("mps") is None


def test_peak_for_bad_input():
    with pytest.raises(TypeError, match=r"peak_for\(name_or_device\)"):
        d2lgpu.peak_for(0)


# --- share_of_peak. ---------------------------------------------------------------

def test_share_of_peak_on_cuda(fake_names):
    fake_names(gpu="NVIDIA H100 80GB HBM3")
    assert d2lgpu.share_of_peak(52.3e12, "cuda:0", "fp32") == (
        "78% of the NVIDIA H100 SXM FP32 peak (67 TFLOP/s)")
    # 989.5: half of the datasheet's 1,979 with sparsity.
    assert d2lgpu.share_of_peak(718e12, torch.device("cuda", 0), "bf16") == (
        "73% of the NVIDIA H100 SXM BF16 tensor-core peak (989.5 TFLOP/s)")
    assert d2lgpu.share_of_peak(2.68e12, "cuda:0", "bandwidth") == (
        "80% of the NVIDIA H100 SXM memory bandwidth peak (3,350 GB/s)")


@pytest.mark.parametrize("rate, share", [
    (52.3e12, "78%"), (52.9e12, "79%"), (67e12, "100%"), (0.2e12, "0%"), (6.6e12, "10%"),
])
def test_share_of_peak_has_no_decimals(rate, share):
    # A datasheet peak assumes the boost clock: a finer share claims more
    # than a GPU at its power limit can tell.
    line = d2lgpu.share_of_peak(rate, "NVIDIA H100 80GB HBM3", "fp32")
    assert line.startswith(f"{share} of the NVIDIA H100 SXM FP32 peak")
    assert not re.search(r"\d\.\d+%", line)


def test_share_of_peak_above_the_fp32_peak_names_tensor_cores():
    line = d2lgpu.share_of_peak(150e12, "NVIDIA A100-SXM4-80GB", "fp32")
    assert line.startswith("769% of the NVIDIA A100 SXM 80GB FP32 peak (19.5 TFLOP/s); "
                           "above it, so these float32 products ran on the tensor cores")
    assert "TF32" in line
    assert "above it" not in d2lgpu.share_of_peak(19.5e12, "NVIDIA A100-SXM4-80GB", "fp32")


def test_share_of_peak_in_16_bit_on_a_t4():
    assert d2lgpu.share_of_peak(26e12, "Tesla T4", "fp16") == (
        "40% of the NVIDIA T4 FP16 tensor-core peak (65 TFLOP/s)")


def test_share_of_peak_on_xpu_and_mps(fake_names):
    fake_names(gpu="Intel(R) Data Center GPU Max 1550", mps="Apple M1 Max")
    assert d2lgpu.share_of_peak(1.6384e12, "xpu:0", "bandwidth") == (
        "50% of the Intel Data Center GPU Max 1550 memory bandwidth peak "
        "(3,276.8 GB/s)")
    assert d2lgpu.share_of_peak(1e12, "xpu:0", "bf16") == (
        "no BF16 tensor-core peak for the Intel Data Center GPU Max 1550: "
        "its vendor publishes none")
    assert d2lgpu.share_of_peak(300e9, "mps", "bandwidth") == (
        "75% of the Apple M1 Max memory bandwidth peak (400 GB/s)")


def test_share_of_peak_without_a_row(fake_names):
    fake_names(gpu="NVIDIA A10G", mps=None)
    assert d2lgpu.share_of_peak(1e12, "cuda:0", "fp32") == (
        "no datasheet peak in d2lgpu's table for NVIDIA A10G")
    assert d2lgpu.share_of_peak(1e12, "mps", "fp32") == (
        "no datasheet peak in d2lgpu's table for mps")
    assert d2lgpu.share_of_peak(1e12, "cpu", "fp32") == (
        "no datasheet peak for the CPU")


@pytest.mark.parametrize("name, kind, part", [
    ("Tesla T4", "tf32", "NVIDIA T4"), ("Tesla T4", "bf16", "NVIDIA T4"),
    ("Tesla V100-SXM2-16GB", "bf16", "NVIDIA V100 SXM2"),
])
def test_share_of_peak_where_the_part_lacks_the_units(name, kind, part):
    # The T4 and V100 have tensor cores for FP16 only: no vendor could
    # publish a TF32 or BF16 peak for them.
    label = kind.upper()
    assert d2lgpu.share_of_peak(1e12, name, kind) == (
        f"no {label} tensor-core peak for the {part}: it has no {label} tensor cores")


@pytest.mark.parametrize("name", [
    "NVIDIA A100-SXM4-40GB MIG 1g.5gb", "NVIDIA H100 80GB HBM3 MIG 3g.40gb",
    "NVIDIA A100-SXM4-80GB MIG 7g.80gb",
])
def test_a_mig_slice_gets_no_peak(fake_names, name):
    # A 1g slice has 1/7 of the A100's compute: the whole GPU's row would
    # understate its share of peak about sevenfold.
    assert d2lgpu.peak_for(name) is None
    fake_names(gpu=name)
    assert d2lgpu.peak_for("cuda:0") is None
    line = f"no datasheet peak for a MIG slice ({name}): the datasheet's figures are the whole GPU's"
    assert d2lgpu.share_of_peak(1e12, "cuda:0", "fp32") == line
    assert d2lgpu.share_of_peak(1e12, name, "bandwidth") == line


def test_share_of_peak_by_name_needs_no_gpu():
    assert d2lgpu.share_of_peak(15.6e12, "NVIDIA A100-SXM4-40GB", "tf32") == (
        "10% of the NVIDIA A100 SXM 40GB TF32 tensor-core peak (156 TFLOP/s)")


@pytest.mark.parametrize("args, error, message", [
    ((1e12, "cuda:0", "fp64"), ValueError, "share_of_peak(kind): kind must be one of"),
    ((-1.0, "cuda:0", "fp32"), ValueError, "share_of_peak(rate): rate must be a finite number >= 0"),
    (("fast", "cuda:0", "fp32"), TypeError, "share_of_peak(rate): rate must be a finite number"),
    ((1e12, 3, "fp32"), TypeError, "share_of_peak(name_or_device): name_or_device must be"),
])
def test_share_of_peak_bad_input(args, error, message):
    with pytest.raises(error, match=re.escape(message)):
        d2lgpu.share_of_peak(*args)


def test_format_rate_is_exported():
    assert d2lgpu.format_rate(52.3456e12) == "52.3 TFLOP/s"


def test_probes_ask_torch(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA L4")
    assert peaks._gpu_name(torch.device("cuda", 0)) == "NVIDIA L4"
    monkeypatch.setattr(torch.xpu, "get_device_name", lambda device=None: "Intel(R) Arc(TM) A770",
                        raising=False)
    assert peaks._gpu_name(torch.device("xpu", 0)) == "Intel(R) Arc(TM) A770"
    monkeypatch.delattr(torch.xpu, "get_device_name")  # as in PyTorch < 2.4
    assert peaks._gpu_name(torch.device("xpu", 0)) is None
    monkeypatch.setattr(peaks.platform, "system", lambda: "Linux")
    assert peaks._mps_chip() is None
