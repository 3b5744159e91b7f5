"""Whether a build has kernels for a GPU: NVIDIA's rules, and device_report's line."""

import re
from types import SimpleNamespace

import pytest
import torch

import d2lgpu
from d2lgpu.cuda_arch import entry_capability

# The arch lists of two real wheels: CUDA 13.0 (from Turing, 7.5, with PTX
# for 12.0) and CUDA 12.6 (from Maxwell, 5.0, to Hopper, 9.0).
CUDA_13 = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]
CUDA_12_6 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]


@pytest.mark.parametrize("capability, arch_list, found", [
    ((7, 0), CUDA_13, []),                      # V100: dropped by CUDA 13
    ((6, 1), CUDA_13, []),                      # GTX 10xx
    ((7, 0), CUDA_12_6, ["sm_70"]),
    ((6, 1), CUDA_12_6, ["sm_60"]),             # same major, higher minor
    ((7, 5), CUDA_13, ["sm_75"]),               # T4
    ((8, 9), CUDA_13, ["sm_80", "sm_86"]),      # L4: 8.0 and 8.6 cubins run
    ((9, 0), CUDA_13, ["sm_90"]),               # H100
    ((12, 1), CUDA_13, ["sm_120", "compute_120"]),
    ((12, 0), CUDA_12_6, []),                   # too new for 12.6: no PTX
    ((10, 0), ["sm_90", "compute_90"], ["compute_90"]),  # PTX runs on any later GPU
    ((8, 6), ["compute_90"], []),               # but not on an earlier one
    ((9, 0), ["sm_80"], []),                    # a cubin never crosses a major
    ((9, 0), ["sm_90a", "compute_90a"], ["sm_90a", "compute_90a"]),
    ((9, 1), ["sm_90a", "compute_90a"], []),    # arch-specific: 9.0 only
    ((10, 3), ["sm_100a", "sm_100f"], ["sm_100f"]),  # family: 10.x from 10.0
    ((10, 0), ["sm_103f"], []),
    ((9, 0), ["gfx90a", "sm_90"], ["sm_90"]),   # not a CUDA entry: ignored
    ((9, 0), [], []),
])
def test_kernels_for_follows_nvidias_rules(capability, arch_list, found):
    assert d2lgpu.kernels_for(capability, arch_list) == found


def test_entry_capability_reads_the_last_digit_as_minor():
    assert entry_capability("sm_86") == (8, 6)
    assert entry_capability("sm_120") == (12, 0)
    assert entry_capability("compute_90a") == (9, 0)
    assert entry_capability("gfx90a") is None


@pytest.mark.parametrize("capability, error", [
    (8.6, TypeError), ("8.6", TypeError), ((8,), TypeError), ((8, 6, 0), TypeError),
    ((8.0, 6), TypeError), ((True, 0), TypeError), ((-1, 0), ValueError),
])
def test_kernels_for_bad_capability(capability, error):
    with pytest.raises(error, match=re.escape(
            f"kernels_for(capability): capability must be a (major, minor) "
            f"pair of non-negative ints, such as (8, 6), got {capability!r}")):
        d2lgpu.kernels_for(capability, CUDA_13)


@pytest.mark.parametrize("arch_list", ["sm_90", None, [90], ["sm_90", None]])
def test_kernels_for_bad_arch_list(arch_list):
    with pytest.raises(TypeError, match=re.escape(
            "kernels_for(arch_list): arch_list must be a list of str")):
        d2lgpu.kernels_for((9, 0), arch_list)


# --- device_report: one line per CUDA GPU. ------------------------------------

@pytest.fixture
def fake_gpus(monkeypatch, hardware):
    """``fake_gpus(arch_list, *capabilities)``: CUDA GPUs of those capabilities
    and a build with that arch list, read where device_report reads them."""

    def make(arch_list, *capabilities):
        hardware(cuda=len(capabilities))
        monkeypatch.setattr(torch.version, "hip", None, raising=False)
        monkeypatch.setattr(torch.version, "cuda", "13.0")
        monkeypatch.setattr(torch.cuda, "get_arch_list", lambda: list(arch_list))
        monkeypatch.setattr(
            torch.cuda, "get_device_properties",
            lambda i: SimpleNamespace(name=f"NVIDIA Fake {i}",
                                      total_memory=16 * 2**30,
                                      major=capabilities[i][0],
                                      minor=capabilities[i][1]))
        monkeypatch.setattr(torch.cuda, "memory_reserved", lambda i: 0)
        monkeypatch.setattr(torch.cuda, "memory_allocated", lambda i: 0)
        return d2lgpu.device_report().splitlines()

    return make


def test_report_says_which_gpu_this_build_can_run_on(fake_gpus):
    lines = fake_gpus(CUDA_13, (9, 0), (7, 0))
    first = lines.index("cuda:0: NVIDIA Fake 0")
    assert lines[first + 1] == (
        "  compute capability 9.0: this PyTorch has kernels for it (sm_90)")
    second = lines.index("cuda:1: NVIDIA Fake 1")
    assert lines[second + 1] == (
        "  compute capability 7.0: this PyTorch has no kernels for it (built for "
        "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120), so its first "
        "operation will fail: install a PyTorch built for an older CUDA "
        "(pytorch.org)")


def test_report_for_a_gpu_newer_than_the_build(fake_gpus):
    lines = fake_gpus(CUDA_12_6, (12, 0))
    assert lines[2].endswith(
        "its first operation will fail: install a PyTorch built for a newer "
        "CUDA (pytorch.org)")
    lines = fake_gpus(["sm_90", "compute_90"], (12, 0))
    assert lines[2] == ("  compute capability 12.0: no kernels built for it; "
                        "CUDA compiles them from compute_90 at first use")


@pytest.mark.parametrize("arch_list, hip", [([], None),
                                            (["gfx90a", "gfx942"], "6.2")])
def test_report_has_no_kernel_line_where_nothing_can_be_compared(
        fake_gpus, monkeypatch, arch_list, hip):
    # An empty arch list (PyTorch cannot tell), or a ROCm build.
    lines = fake_gpus(arch_list, (9, 0))
    if hip:
        monkeypatch.setattr(torch.version, "hip", hip, raising=False)
        lines = d2lgpu.device_report().splitlines()
    assert not any("compute capability" in line for line in lines)
    assert lines[1:3] == ["cuda:0: NVIDIA Fake 0", "  memory: 16.0 GiB total"]
