"""Mixed precision on any device: where autocast works, in which 16-bit type, and whether to scale the loss.

What differs between PyTorch versions and devices is settled here, once:
``torch.amp.is_autocast_available`` exists from PyTorch 2.4 (before, autocast
ran on CUDA and the CPU only); ``torch.amp.GradScaler`` from 2.3 (before,
``torch.cuda.amp.GradScaler``); MPS autocasts to ``bfloat16`` only from macOS
14 and a recent PyTorch, and its GradScaler takes a step only from PyTorch
2.8. CUDA GPUs compute ``bfloat16`` fast from compute capability 8.0 (A100,
L4, H100); older ones (T4, V100) use ``float16``.
"""

from __future__ import annotations

import warnings

import torch

__all__ = [
    "autocast_device",
    "autocasts_to",
    "autocast_dtype",
    "scaler_works",
    "mixed_precision",
    "grad_scaler",
]


def autocast_device(device) -> torch.device:
    """``device`` if this PyTorch can autocast there, otherwise the CPU (chapter "Neural networks and GPUs")."""
    device = torch.device(device)
    available = getattr(torch.amp, "is_autocast_available", None)
    if available is None:  # PyTorch < 2.4 autocasts on CUDA and the CPU
        return device if device.type in ("cuda", "cpu") else torch.device("cpu")
    return device if available(device.type) else torch.device("cpu")


def autocasts_to(device, dtype: torch.dtype) -> bool:
    """Whether autocast on ``device`` runs in ``dtype`` (where it cannot, autocast warns and turns itself off) (chapter "Neural networks and GPUs")."""
    device = torch.device(device)
    if autocast_device(device) != device:
        return False  # no autocast on this device at all
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autocast(device_type=device.type, dtype=dtype):
            return _autocast_enabled(device.type)


def _autocast_enabled(device_type: str) -> bool:
    """Whether autocast is on for ``device_type`` here and now."""
    try:
        return torch.is_autocast_enabled(device_type)
    except TypeError:  # PyTorch < 2.4: no argument, CUDA's; the CPU has its own
        if device_type == "cpu":
            return torch.is_autocast_cpu_enabled()
        return torch.is_autocast_enabled()


def autocast_dtype(device) -> torch.dtype:
    """The 16-bit type autocast should use on ``device``: bfloat16, or float16 where bfloat16 is slow or refused (chapter "Neural networks and GPUs")."""
    device = torch.device(device)
    if device.type == "mps" and not autocasts_to(device, torch.bfloat16):
        return torch.float16
    if (device.type == "cuda"
            and torch.cuda.get_device_capability(device) < (8, 0)):
        return torch.float16
    return torch.bfloat16


def _parameter(device: torch.device) -> torch.Tensor:
    """A one-element parameter on ``device``, for a trial step."""
    return torch.zeros(1, device=device, requires_grad=True)


def scaler_works(device) -> bool:
    """Whether a GradScaler can take an optimizer step on ``device`` (on MPS from PyTorch 2.8) (chapter "Neural networks and GPUs")."""
    device = torch.device(device)
    if not hasattr(torch.amp, "GradScaler"):  # PyTorch < 2.3: CUDA's only
        return device.type == "cuda"
    p = _parameter(device)
    scaler = torch.amp.GradScaler(device.type)
    try:
        scaler.scale(p.sum()).backward()
        scaler.step(torch.optim.SGD([p], lr=0.0))
    except (TypeError, RuntimeError):  # PyTorch < 2.8 on MPS
        return False
    return True


def mixed_precision(device) -> tuple[torch.dtype | None, bool]:
    """(autocast dtype, or None for float32; whether to scale the loss) for training on ``device`` (chapter "Neural networks and GPUs")."""
    device = torch.device(device)
    dtype = autocast_dtype(device)
    if dtype != torch.float16:
        return dtype, False
    if device.type == "mps" and not scaler_works(device):
        return None, False  # float16 unscaled would lose small gradients
    return dtype, True


def grad_scaler(device, enabled: bool):
    """A GradScaler for ``device``, scaling only if ``enabled`` (disabled, it passes everything through) (chapter "Neural networks and GPUs")."""
    device = torch.device(device)
    if hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler(device.type, enabled=enabled)
    return torch.cuda.amp.GradScaler(enabled=enabled)  # PyTorch < 2.3
