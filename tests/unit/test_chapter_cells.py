"""Chapter cells run on hardware this machine lacks, faked.

nbval runs the chapters on the machine at hand only. These tests take a few
cells' code from the executed notebooks and run it, with ``exec``, on fake
hardware: Apple's MPS (which accepts any device index) and PyTorch's CUDA
build on a machine without a GPU (whose ``torch.accelerator`` still names
CUDA). Each cell runs in a namespace set up by the chapter's own import cell.
"""

from pathlib import Path

import pytest
import torch

from booktools import runs

CHAPTERS = Path(__file__).resolve().parents[2] / "chapters"


def source(chapter, name=None, marker=None):
    """The code of the one cell named ``name``, or containing ``marker``."""
    cells = runs.code_cells(runs.read_notebook(CHAPTERS / f"{chapter}.ipynb"))
    found = [c for c in cells if (name is not None and runs.cell_name(c) == name)
             or (marker is not None and marker in c.source)]
    assert len(found) == 1, (chapter, name or marker, len(found))
    return found[0].source


def run_cells(chapter, *names):
    """Run the chapter's import cell, then the cells named ``names``, in one namespace."""
    namespace = {}
    exec(source(chapter, marker="from d2lgpu import"), namespace)
    for name in names:
        exec(source(chapter, name=name), namespace)
    return namespace


# --- devices: a tensor on gpu(num_gpus()), the first index the machine lacks. --

@pytest.fixture
def fake_mps(monkeypatch, hardware):
    """MPS as a Mac has it: d2lgpu picks it, and any index is accepted."""
    hardware(mps=True)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    zeros = torch.zeros

    def zeros_on_mps(*args, device=None, **kwargs):
        if device is not None and torch.device(device).type == "mps":
            return zeros(*args, **kwargs)  # a CPU tensor stands in, no error
        return zeros(*args, device=device, **kwargs)

    monkeypatch.setattr(torch, "zeros", zeros_on_mps)


def test_missing_device_cells_on_mps(fake_mps, capsys):
    namespace = run_cells("devices", "missing-device-error")
    assert namespace["missing"] == torch.device("mps:1")
    out = capsys.readouterr().out
    assert "mps:1" in out
    assert "Error" not in out


def test_missing_device_cells_without_accelerator(monkeypatch, hardware, capsys):
    # gpu(0) is cuda:0 here: a CPU-only build raises AssertionError, a CUDA
    # build without a GPU a RuntimeError; the cells print the error either way.
    hardware(cuda=0)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    namespace = run_cells("devices", "missing-device-error")
    assert namespace["missing"] == torch.device("cuda:0")
    out = capsys.readouterr().out
    assert "Error" in out


# --- devices: torch.accelerator on PyTorch's CUDA build without a GPU. --------

@pytest.mark.skipif(not hasattr(torch, "accelerator"),
                    reason="torch.accelerator is new in PyTorch 2.6")
def test_torch_accelerator_cell_on_cuda_build_without_gpu(monkeypatch, hardware,
                                                         capsys):
    hardware()  # no accelerator for d2lgpu either
    monkeypatch.setattr(torch.accelerator, "current_accelerator",
                        lambda *args, **kwargs: torch.device("cuda"))
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    run_cells("devices", "torch-accelerator")
    lines = capsys.readouterr().out.splitlines()
    said = [line for line in lines if line.startswith("torch.accelerator:")]
    assert said == ["torch.accelerator: none"], lines
    assert "cpu" in next(line for line in lines if line.startswith("d2lgpu.try_gpu"))


# --- intro: does this build have kernels for the GPU? --------------------------

@pytest.mark.parametrize("capability, verdict", [
    ((7, 0), "none"),                 # a V100 under a CUDA 13 build
    ((9, 0), "sm_90"),                # an H100
    ((12, 1), "sm_120 compute_120"),  # a newer Blackwell: cubin and PTX
])
def test_kernel_check_cell_on_a_fake_gpu(monkeypatch, capsys, capability,
                                         verdict):
    import d2lgpu

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability",
                        lambda device=None: capability)
    monkeypatch.setattr(torch.cuda, "get_arch_list", lambda: [
        "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"])
    exec(source("intro", name="cuda-kernels"), {"torch": torch, "d2lgpu": d2lgpu})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"GPU 0 compute capability: {capability}"
    assert lines[-1] == f"of them, for this GPU:    {verdict}"


def test_kernel_check_cell_without_a_gpu(monkeypatch, capsys):
    import d2lgpu

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    exec(source("intro", name="cuda-kernels"), {"torch": torch, "d2lgpu": d2lgpu})
    assert capsys.readouterr().out == "No usable CUDA GPU: no kernels to look for.\n"


# --- networks: mixed precision on Apple's MPS, for an old and a new PyTorch. --

def autocast_helpers():
    """The networks chapter's autocast helpers, in a namespace of their own."""
    namespace = {"torch": torch}
    exec(source("networks", name="autocast-helpers"), namespace)
    return namespace


@pytest.mark.parametrize("supported, expected", [
    ((torch.float16,), torch.float16),                   # PyTorch 2.5, or macOS 13
    ((torch.float16, torch.bfloat16), torch.bfloat16),  # later releases
])
def test_autocast_dtype_on_mps_probes_bfloat16(monkeypatch, supported, expected):
    state = {"on": False}

    class FakeAutocast:
        """torch.autocast as on MPS: warns and turns off for a dtype it lacks."""

        def __init__(self, device_type, dtype):
            self.enabled = dtype in supported
            if not self.enabled:
                import warnings
                warnings.warn("In MPS autocast, but the target dtype is not "
                              "supported. Disabling autocast.")

        def __enter__(self):
            state["on"] = self.enabled

        def __exit__(self, *exc):
            state["on"] = False

    monkeypatch.setattr(torch, "autocast", FakeAutocast)
    monkeypatch.setattr(torch, "is_autocast_enabled", lambda kind: state["on"])
    namespace = autocast_helpers()
    assert namespace["autocast_dtype"](torch.device("mps")) == expected


@pytest.mark.parametrize("bfloat16, scaler_steps, expected", [
    (True, False, (torch.bfloat16, False)),  # bfloat16 needs no scaler
    (False, True, (torch.float16, True)),    # PyTorch 2.8 on: scale float16
    (False, False, (None, False)),           # no scaler: stay in float32
])
def test_mixed_precision_on_mps_never_float16_unscaled(bfloat16, scaler_steps,
                                                       expected):
    namespace = autocast_helpers()
    namespace["autocasts_to"] = lambda device, dtype: bfloat16
    namespace["scaler_works"] = lambda device: scaler_steps
    assert namespace["mixed_precision"](torch.device("mps")) == expected


@pytest.mark.skipif(not hasattr(torch.amp, "GradScaler"),
                    reason="torch.amp.GradScaler is new in PyTorch 2.3")
def test_scaler_works_says_no_where_a_step_fails(monkeypatch):
    namespace = autocast_helpers()
    cpu = torch.device("cpu")
    assert namespace["scaler_works"](cpu)

    class OldScaler(torch.amp.GradScaler):
        """GradScaler as PyTorch 2.5 to 2.7 had it on MPS."""

        def step(self, optimizer, *args, **kwargs):
            raise TypeError("Cannot convert a MPS Tensor to float64 dtype")

    monkeypatch.setattr(torch.amp, "GradScaler", OldScaler)
    assert not namespace["scaler_works"](cpu)


# --- tensors: Timer's clock waits for the device, whatever Timer does. --------

def test_timer_cell_clock_waits_for_the_device():
    # Timer's own clock waits for MPS only from PyTorch 2.9, for XPU from 2.7.
    waits = []
    namespace = {}
    exec(source("tensors", marker="from d2lgpu import"), namespace)
    namespace.update(device=torch.device("cpu"), A=torch.ones(2, 2),
                     wait=lambda: waits.append(1))
    exec(source("tensors", name="torch-benchmark-timer"), namespace)
    assert waits, "the clock given to Timer never waited for the device"


# --- tensors: memory counters for any GPU whose counters this PyTorch reads. --

@pytest.mark.skipif(not hasattr(getattr(torch, "accelerator", None),
                                "memory_allocated"),
                    reason="torch.accelerator's memory counters are new in 2.9")
@pytest.mark.parametrize("kind, readable", [("xpu", True), ("mps", False)])
def test_memory_counters_cell_on_other_gpus(monkeypatch, capsys, kind, readable):
    def allocated(device=None):
        if not readable:  # as MPS's allocator in releases that cannot read it
            raise RuntimeError("Allocator for mps is not a DeviceAllocator.")
        return 1024

    monkeypatch.setattr(torch.accelerator, "memory_allocated", allocated)
    monkeypatch.setattr(torch.accelerator, "memory_reserved",
                        lambda device=None: 2 * 1024 ** 2)
    monkeypatch.setattr(torch.accelerator, "max_memory_allocated",
                        lambda device=None: 4096)
    namespace = {}
    exec(source("tensors", marker="from d2lgpu import"), namespace)
    namespace["device"] = torch.device(kind)
    exec(source("tensors", name="memory-counters"), namespace)
    lines = capsys.readouterr().out.splitlines()
    if readable:
        assert [line.split()[0] for line in lines] == [
            "allocated:", "reserved:", "peak:"], lines
    else:
        assert lines == [f"{kind}: no memory counters for it in this PyTorch."]
