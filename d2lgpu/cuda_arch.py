"""Whether a PyTorch build has kernels for a CUDA GPU (pure functions).

A CUDA build of PyTorch carries machine code for some GPU architectures and
portable code for others; ``torch.cuda.get_arch_list()`` lists them, and
``torch.cuda.get_device_capability(i)`` gives a GPU's compute capability.
``torch.cuda.is_available()`` is True whenever a driver runs the build, even
for a GPU the build has no kernels for: the first operation on it then fails
with "no kernel image is available for execution on the device" (the CUDA 13
builds, for instance, start at capability 7.5 and leave out the V100's 7.0).

NVIDIA's compatibility rules, which ``kernels_for`` applies to each entry:

- ``sm_XY``: machine code (a cubin) for capability X.Y; it runs on GPUs of
  the same major version X and a minor version of at least Y (``sm_80`` runs
  on 8.0, 8.6 and 8.9, not on 9.0). ``sm_XYf`` (family-specific, CUDA 12.9
  and later) follows the same rule;
- ``sm_XYa``: architecture-specific machine code, for X.Y only;
- ``compute_XY``: portable code (PTX) that the driver compiles, at first use,
  for any capability of at least X.Y; ``compute_XYa`` for X.Y only and
  ``compute_XYf`` for X.Y and later minor versions of X.

The last digit of the number is the minor version: ``sm_90`` is 9.0,
``sm_120`` is 12.0. Entries of another form (a ROCm build's ``gfx90a``) are
no CUDA architecture and are ignored.
"""

from __future__ import annotations

import re

__all__ = ["kernels_for"]

_ENTRY = re.compile(r"(sm|compute)_(\d+)(\d)([af]?)")


def entry_capability(entry: str) -> tuple[int, int] | None:
    """The compute capability an arch-list entry is built for (``'sm_86'``: (8, 6)); None for no CUDA entry."""
    match = _ENTRY.fullmatch(entry)
    return None if match is None else (int(match.group(2)), int(match.group(3)))


def _capability(capability) -> tuple[int, int]:
    """``capability`` as (major, minor); TypeError or ValueError otherwise."""
    message = (f"kernels_for(capability): capability must be a (major, minor) "
               f"pair of non-negative ints, such as (8, 6), got {capability!r}")
    try:
        major, minor = capability
    except (TypeError, ValueError):
        raise TypeError(message) from None
    if any(isinstance(v, bool) or not isinstance(v, int) for v in (major, minor)):
        raise TypeError(message)
    if major < 0 or minor < 0:
        raise ValueError(message)
    return major, minor


def _runs_on(entry: str, major: int, minor: int) -> bool:
    """Whether the kernels of one arch-list entry run on capability major.minor."""
    match = _ENTRY.fullmatch(entry)
    if match is None:
        return False
    kind, arch_major, arch_minor, variant = match.groups()
    arch_major, arch_minor = int(arch_major), int(arch_minor)
    if variant == "a":
        return (major, minor) == (arch_major, arch_minor)
    if kind == "sm" or variant == "f":
        return major == arch_major and minor >= arch_minor
    return (major, minor) >= (arch_major, arch_minor)  # PTX: compiled at first use


def kernels_for(capability, arch_list) -> list[str]:
    """The entries of ``arch_list`` (``torch.cuda.get_arch_list()``) whose kernels run on a GPU of compute ``capability``, e.g. ``(8, 6)``; empty: this build cannot run on it (chapter "Using GPUs from PyTorch")."""
    major, minor = _capability(capability)
    message = (f"kernels_for(arch_list): arch_list must be a list of str such "
               f"as ['sm_80', 'sm_90', 'compute_90'], got {arch_list!r}")
    if isinstance(arch_list, str):
        raise TypeError(message)
    try:
        entries = list(arch_list)
    except TypeError:
        raise TypeError(message) from None
    if not all(isinstance(entry, str) for entry in entries):
        raise TypeError(message)
    return [entry for entry in entries if _runs_on(entry, major, minor)]
