"""Fixtures that pretend to have accelerators on a machine without any, and the notebook sanitizer.

d2lgpu asks about the hardware only through three probes in
``d2lgpu.devices``; these fixtures replace them (and restore them after the
test). Nothing here touches a real GPU: tests that need one are marked
``cuda``, ``multi_gpu`` or ``mps`` and skip with a reason. ``sanitize``
applies tests/sanitize.cfg as nbval does, so output checks follow the file.
"""

from types import ModuleType, SimpleNamespace

import pytest
import torch

from booktools.runs import NbvalComparison
from d2lgpu import devices


@pytest.fixture(autouse=True)
def torch_xpu(monkeypatch):
    """A ``torch.xpu`` with no device where this torch has none (before 2.4), for fakes to fill.

    It answers what torch itself asks of any ``torch.xpu`` (``manual_seed``
    asks ``_is_in_bad_fork`` in 2.2) and what d2lgpu asks of an accelerator.
    """
    if not hasattr(torch, "xpu"):
        monkeypatch.setattr(torch, "xpu", SimpleNamespace(
            is_available=lambda: False, device_count=lambda: 0, _is_in_bad_fork=lambda: False,
            current_device=lambda: 0, synchronize=lambda device=None: None), raising=False)


@pytest.fixture
def torch_accelerator(monkeypatch):
    """``torch.accelerator``, or an empty stand-in where this torch has none (before 2.6),
    for fakes to fill; it is removed again after the test."""
    if not hasattr(torch, "accelerator"):
        monkeypatch.setattr(torch, "accelerator", ModuleType("torch.accelerator"), raising=False)
    return torch.accelerator


def fake_hardware(monkeypatch, cuda=0, mps=False, xpu=0):
    """Make d2lgpu see ``cuda`` CUDA devices, MPS if ``mps``, ``xpu`` XPUs.

    The faked machine is a fresh process: CUDA not yet initialised (a test
    that wants it so says so). On a machine with a real GPU, an earlier test in
    the same worker may have initialised CUDA, and d2lgpu would then wait for
    the real current GPU too (seen on an H100).
    """
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.setattr(devices, "_cuda_device_count", lambda: cuda)
    monkeypatch.setattr(devices, "_mps_is_available", lambda: mps)
    monkeypatch.setattr(devices, "_xpu_device_count", lambda: xpu)


@pytest.fixture
def cuda_count_0(monkeypatch):
    fake_hardware(monkeypatch, cuda=0)


@pytest.fixture
def cuda_count_1(monkeypatch):
    fake_hardware(monkeypatch, cuda=1)


@pytest.fixture
def cuda_count_2(monkeypatch):
    fake_hardware(monkeypatch, cuda=2)


@pytest.fixture
def mps_available(monkeypatch):
    fake_hardware(monkeypatch, mps=True)


@pytest.fixture
def xpu_count_2(monkeypatch):
    fake_hardware(monkeypatch, xpu=2)


@pytest.fixture
def hardware(monkeypatch):
    """``hardware(cuda=1, mps=True, ...)`` fakes any mix of devices."""
    return lambda **kinds: fake_hardware(monkeypatch, **kinds)


@pytest.fixture
def on_fake_device():
    """``on_fake_device(name)``: a CPU tensor that says it lives on ``name`` (as a GPU tensor would)."""

    def make(name):
        class OnFakeDevice(torch.Tensor):
            # As a plain tensor: its methods do not dispatch back to Python.
            __torch_function__ = torch._C._disabled_torch_function_impl

            @property
            def device(self):
                return torch.device(name)

        return torch.ones(3).as_subclass(OnFakeDevice)

    return make


@pytest.fixture
def sanitize():
    """``sanitize(text)``: ``text`` as nbval compares it, with tests/sanitize.cfg's patterns."""
    return NbvalComparison().sanitize
