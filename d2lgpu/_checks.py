"""Argument checks and number formatting shared by d2lgpu's modules (private).

Every message has one shape: ``"<function>(<name>): <name> must be <what>, got
<value>"``, e.g. ``"try_gpu(i): i must be a non-negative int, got -1"``.
"""

from __future__ import annotations

import math
import numbers

__all__: list[str] = []  # private: imported by d2lgpu's modules only


def check_int(value, function: str, name: str, minimum: int) -> int:
    """``value`` as an int >= ``minimum``; TypeError or ValueError otherwise."""
    what = "a non-negative int" if minimum == 0 else f"an int >= {minimum}"
    message = f"{function}({name}): {name} must be {what}, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(message)
    if value < minimum:
        raise ValueError(message)
    return int(value)


def check_real(value, function: str, name: str, minimum: float | None = None,
               hint: str = "") -> float:
    """``value`` as a finite float (>= ``minimum`` unless None); TypeError or ValueError otherwise."""
    bound = "" if minimum is None else f" >= {minimum}"
    hint = f" ({hint})" if hint else ""
    message = (f"{function}({name}): {name} must be a finite number{bound}"
               f"{hint}, got {value!r}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(message)
    if not math.isfinite(value) or (minimum is not None and value < minimum):
        raise ValueError(message)
    return float(value)


def check_bool(value, function: str, name: str) -> bool:
    """``value`` if it is True or False; TypeError otherwise."""
    if not isinstance(value, bool):
        raise TypeError(
            f"{function}({name}): {name} must be True or False, got {value!r}")
    return value


def three_digits(value: float) -> str:
    """Three significant digits, keeping trailing zeros: 1.50, 12.0, 512."""
    if value >= 99.95:
        return f"{value:.0f}"
    if value >= 9.995:
        return f"{value:.1f}"
    return f"{value:.2f}"


def with_unit(value: float, units: tuple[tuple[str, float], ...]) -> str:
    """``value`` in the largest of ``units`` ((name, scale), largest first) it reaches, three digits.

    Below the smallest scale the smallest unit is used. Where rounding reaches
    the next unit up (999.7 µs: "1000 µs"), that unit is used (1.00 ms).
    """
    index = next((k for k, (_, scale) in enumerate(units) if value >= scale), len(units) - 1)
    text = three_digits(value / units[index][1])
    if index > 0 and float(text) >= round(units[index - 1][1] / units[index][1]):
        index -= 1
        text = three_digits(value / units[index][1])
    return f"{text} {units[index][0]}"
