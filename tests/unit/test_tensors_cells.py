"""Timing and profiling cells (tensors, measuring) run under a fake accelerator.

The chapter's timing cells must wait for the device before every clock read
that ends a measurement, on every accelerator, not only on CUDA. Without an
MPS or XPU device here, the device is faked: ``device`` names it, tensors
created on it are small CPU tensors, and its ``synchronize`` only records
that it was called. The clock records its reads, so the test sees the order
of waits and reads.
"""

import pytest
import torch

from chapter_code import cell_source  # tests/unit/chapter_code.py
from d2lgpu import format_time


class FakeTime:
    """Stands for the ``time`` module: each ``perf_counter`` read is logged."""

    def __init__(self, events):
        self.events = events
        self.now = 0.0

    def perf_counter(self):
        self.events.append("clock")
        self.now += 1e-3
        return self.now


@pytest.fixture(params=["mps", "xpu"])
def fake_accelerator(request, monkeypatch):
    """(device, events): tensors on device are CPU tensors; waits are logged."""
    kind = request.param
    device = torch.device(kind)
    events = []
    real_randn = torch.randn

    def randn(*size, device=None, **kwargs):
        if device is not None and torch.device(device).type == kind:
            return real_randn(16, 16, **kwargs)  # small: the cell asks 4096
        return real_randn(*size, device=device, **kwargs)

    def synchronize(*args, **kwargs):
        events.append("wait")

    monkeypatch.setattr(torch, "randn", randn)
    monkeypatch.setattr(getattr(torch, kind), "synchronize", synchronize,
                        raising=False)
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and hasattr(accelerator, "synchronize"):
        monkeypatch.setattr(accelerator, "synchronize", synchronize)
    return device, events


def chapter_namespace(device, events):
    """What the chapter's earlier cells define, as far as these cells use it."""
    import d2lgpu

    return {"torch": torch, "time": FakeTime(events), "device": device,
            "format_time": format_time, "synchronize": d2lgpu.synchronize}


def test_timing_cells_wait_for_the_accelerator(fake_accelerator, capsys):
    device, events = fake_accelerator
    namespace = chapter_namespace(device, events)
    for name in ("timing-that-waits", "cuda-events"):
        events.clear()
        exec(compile(cell_source(name=name), f"<{name}>", "exec"), namespace)
        clocks = [i for i, event in enumerate(events) if event == "clock"]
        assert clocks, f"{name}: no clock read"
        assert events[clocks[0] - 1:clocks[0]] == ["wait"], (
            f"{name} on {device.type}: the clock starts without a wait "
            f"for the device: {events}")
        assert events[clocks[-1] - 1] == "wait", (
            f"{name} on {device.type}: the last clock read, which ends the "
            f"measurement, comes without a wait for the device: {events}")
    printed = capsys.readouterr().out
    assert "A @ A took" in printed


@pytest.mark.parametrize("kind", ["cpu", "cuda", "mps", "xpu"])
def test_profiler_cell_asks_only_for_activities_the_device_has(kind, monkeypatch,
                                                              capsys):
    """profiler-table profiles the CPU always, the GPU's kernels on CUDA (and
    XPU where PyTorch has that activity), and never assumes one for MPS."""
    from torch import profiler

    asked = []
    real_profile = profiler.profile

    def profile(*, activities, **kwargs):
        asked.append(list(activities))
        return real_profile(activities=[profiler.ProfilerActivity.CPU], **kwargs)

    real_randn = torch.randn

    def randn(*size, device=None, **kwargs):
        return real_randn(*size, **kwargs)  # a CPU tensor stands in for W, v

    monkeypatch.setattr(profiler, "profile", profile)
    monkeypatch.setattr(torch, "randn", randn)
    namespace = {"torch": torch, "device": torch.device(kind)}
    exec(compile(cell_source(name="profiler-table"), "<profiler-table>", "exec"),
         namespace)
    activity = profiler.ProfilerActivity
    expected = [activity.CPU]
    if kind == "cuda":
        expected.append(activity.CUDA)
    elif kind == "xpu" and hasattr(activity, "XPU"):
        expected.append(activity.XPU)
    assert asked == [expected]
    assert "aten::" in capsys.readouterr().out
