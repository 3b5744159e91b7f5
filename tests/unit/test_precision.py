"""Mixed precision helpers: the real CPU, and fakes of what older PyTorch versions and other devices do."""

import warnings

import pytest
import torch

import d2lgpu
from d2lgpu import precision

BF16, FP16 = torch.bfloat16, torch.float16


class FakeAutocast:
    """torch.autocast and torch.is_autocast_enabled as an MPS without bfloat16
    autocast has them (macOS < 14 or an older PyTorch): asked for bfloat16,
    autocast warns and turns itself off; float16 works.

    It is a PyTorch that autocasts on MPS (2.5 and later), so
    ``torch.amp.is_autocast_available`` says so too, whatever the PyTorch
    running the tests says (2.4 answers False for "mps")."""

    def __init__(self, monkeypatch):
        self.on = {}
        fake = self
        monkeypatch.setattr(torch.amp, "is_autocast_available",
                            lambda device_type: device_type in ("cuda", "cpu", "mps"),
                            raising=False)

        class Autocast:
            def __init__(self, device_type, dtype=None, enabled=True):
                self.device_type = device_type
                self.enabled = enabled and not (device_type == "mps" and dtype == BF16)
                if enabled and not self.enabled:
                    warnings.warn("In MPS autocast, but the target dtype is not "
                                  "supported. Disabling autocast.")

            def __enter__(self):
                self.before = fake.on.get(self.device_type, False)
                fake.on[self.device_type] = self.enabled

            def __exit__(self, *exc):
                fake.on[self.device_type] = self.before
                return False

        monkeypatch.setattr(torch, "autocast", Autocast)
        monkeypatch.setattr(torch, "is_autocast_enabled",
                            lambda device_type: self.on.get(device_type, False))


class FakeScaler:
    """torch.amp.GradScaler on a device; ``refuses``: its step raises
    TypeError, as on MPS before PyTorch 2.8."""

    def __init__(self, monkeypatch, refuses):
        self.made = []
        fake = self

        class GradScaler:
            def __init__(self, device="cuda", enabled=True):
                fake.made.append((device, enabled))

            def scale(self, loss):
                return loss

            def step(self, optimizer):
                if refuses:
                    raise TypeError("unsupported operand type(s) for *: "
                                    "'NoneType' and 'Tensor'")
                optimizer.step()

        monkeypatch.setattr(torch.amp, "GradScaler", GradScaler)
        # The trial parameter lives on the CPU: this machine has no MPS.
        monkeypatch.setattr(precision, "_parameter",
                            lambda device: torch.zeros(1, requires_grad=True))


@pytest.fixture
def capability(monkeypatch):
    """``capability(major, minor)``: the CUDA GPU's compute capability."""
    return lambda *cc: monkeypatch.setattr(
        torch.cuda, "get_device_capability", lambda device=None: cc)


# --- autocast_device. ---------------------------------------------------------------

@pytest.mark.parametrize("device, kept", [
    ("cuda:0", True), ("cpu", True), ("mps", False), ("xpu:0", False)])
def test_autocast_device_before_pytorch_2_4(monkeypatch, device, kept):
    # No torch.amp.is_autocast_available: autocast on CUDA and the CPU only.
    monkeypatch.delattr(torch.amp, "is_autocast_available")
    expected = torch.device(device) if kept else torch.device("cpu")
    assert d2lgpu.autocast_device(torch.device(device)) == expected


@pytest.mark.parametrize("device, kept", [
    ("cuda:1", True), ("cpu", True), ("mps", True), ("xpu:0", False)])
def test_autocast_device_asks_pytorch(monkeypatch, device, kept):
    monkeypatch.setattr(torch.amp, "is_autocast_available",
                        lambda device_type: device_type in ("cuda", "cpu", "mps"))
    expected = torch.device(device) if kept else torch.device("cpu")
    assert d2lgpu.autocast_device(device) == expected


# --- autocasts_to. -------------------------------------------------------------------

def test_autocasts_to_on_the_cpu_quietly():
    # The real CPU autocast: bfloat16 yes; float64 it refuses with a warning,
    # which does not escape.
    with warnings.catch_warnings(record=True) as escaped:
        warnings.simplefilter("always")
        assert d2lgpu.autocasts_to(torch.device("cpu"), BF16)
        assert not d2lgpu.autocasts_to("cpu", torch.float64)
    assert escaped == []
    assert not torch.is_autocast_enabled("cpu")  # left as it was


def test_autocasts_to_on_an_mps_without_bfloat16(monkeypatch):
    FakeAutocast(monkeypatch)
    assert not d2lgpu.autocasts_to("mps", BF16)
    assert d2lgpu.autocasts_to("mps", FP16)


def test_the_mps_fake_autocasts_on_a_pytorch_without_mps_autocast(monkeypatch):
    # As PyTorch 2.4 answers: no autocast on MPS. The fake stands for one
    # that has it, so the tests of MPS autocast hold on 2.4 too.
    monkeypatch.setattr(torch.amp, "is_autocast_available",
                        lambda device_type: device_type in ("cuda", "cpu"))
    FakeAutocast(monkeypatch)
    assert d2lgpu.autocast_device("mps") == torch.device("mps")
    assert d2lgpu.autocasts_to("mps", FP16)


def test_autocasts_to_where_autocast_is_unavailable(monkeypatch):
    monkeypatch.setattr(torch.amp, "is_autocast_available", lambda device_type: False)
    assert not d2lgpu.autocasts_to("xpu", BF16)


def test_autocast_state_before_pytorch_2_4(monkeypatch):
    # torch.is_autocast_enabled() took no argument and answered for CUDA;
    # the CPU had torch.is_autocast_cpu_enabled().
    def old_is_autocast_enabled(*args):
        if args:
            raise TypeError("is_autocast_enabled() takes 0 positional arguments "
                            "but 1 was given")
        return True  # CUDA's autocast is on

    monkeypatch.setattr(torch, "is_autocast_enabled", old_is_autocast_enabled)
    monkeypatch.setattr(torch, "is_autocast_cpu_enabled", lambda: False,
                        raising=False)
    assert precision._autocast_enabled("cuda")
    assert not precision._autocast_enabled("cpu")


# --- autocast_dtype. ------------------------------------------------------------------

@pytest.mark.parametrize("cc, dtype", [((7, 0), FP16), ((7, 5), FP16),
                                       ((8, 0), BF16), ((9, 0), BF16)])
def test_autocast_dtype_on_cuda(capability, cc, dtype):
    capability(*cc)
    assert d2lgpu.autocast_dtype(torch.device("cuda", 0)) == dtype


def test_autocast_dtype_on_the_cpu():
    assert d2lgpu.autocast_dtype("cpu") == BF16


def test_autocast_dtype_on_mps(monkeypatch):
    monkeypatch.setattr(precision, "autocasts_to", lambda device, dtype: True)
    assert d2lgpu.autocast_dtype("mps") == BF16
    FakeAutocast(monkeypatch)  # an MPS that refuses bfloat16
    monkeypatch.setattr(precision, "autocasts_to", d2lgpu.autocasts_to)
    assert d2lgpu.autocast_dtype("mps") == FP16


# --- scaler_works. ---------------------------------------------------------------------

def test_scaler_works_on_the_cpu():
    assert d2lgpu.scaler_works(torch.device("cpu"))


@pytest.mark.parametrize("refuses", [True, False])
def test_scaler_works_on_mps(monkeypatch, refuses):
    scaler = FakeScaler(monkeypatch, refuses=refuses)
    assert d2lgpu.scaler_works("mps") is not refuses
    assert scaler.made == [("mps", True)]


def test_scaler_works_before_pytorch_2_3(monkeypatch):
    # No torch.amp.GradScaler: only CUDA's scaler existed.
    monkeypatch.delattr(torch.amp, "GradScaler")
    assert d2lgpu.scaler_works("cuda:0")
    assert not d2lgpu.scaler_works("mps")


# --- mixed_precision. --------------------------------------------------------------------

@pytest.mark.parametrize("cc, expected", [((7, 5), (FP16, True)), ((8, 0), (BF16, False))])
def test_mixed_precision_on_cuda(capability, cc, expected):
    capability(*cc)
    assert d2lgpu.mixed_precision(torch.device("cuda", 0)) == expected


def test_mixed_precision_on_the_cpu():
    assert d2lgpu.mixed_precision("cpu") == (BF16, False)


@pytest.mark.parametrize("refuses, expected", [(True, (None, False)),
                                               (False, (FP16, True))])
def test_mixed_precision_on_an_mps_without_bfloat16(monkeypatch, refuses, expected):
    # float16 needs loss scaling; where the scaler cannot step (PyTorch < 2.8
    # on MPS), the step stays in float32.
    FakeAutocast(monkeypatch)
    FakeScaler(monkeypatch, refuses=refuses)
    assert d2lgpu.mixed_precision("mps") == expected


def test_mixed_precision_on_an_mps_with_bfloat16(monkeypatch):
    monkeypatch.setattr(precision, "autocasts_to", lambda device, dtype: True)
    assert d2lgpu.mixed_precision("mps") == (BF16, False)


# --- grad_scaler. ---------------------------------------------------------------------------

@pytest.mark.parametrize("enabled", [True, False])
def test_grad_scaler(enabled):
    scaler = d2lgpu.grad_scaler(torch.device("cpu"), enabled)
    assert isinstance(scaler, torch.amp.GradScaler)
    assert scaler.is_enabled() is enabled
    assert scaler._device == "cpu"


def test_grad_scaler_before_pytorch_2_3(monkeypatch):
    monkeypatch.delattr(torch.amp, "GradScaler")
    made = []

    class OldGradScaler:
        def __init__(self, enabled=True):
            made.append(enabled)

    monkeypatch.setattr(torch.cuda.amp, "GradScaler", OldGradScaler)
    assert isinstance(d2lgpu.grad_scaler("cuda:0", enabled=False), OldGradScaler)
    assert made == [False]
