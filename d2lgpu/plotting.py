"""A live plot of training progress that works in a notebook and headless."""

from __future__ import annotations

import base64
import io
import math
import sys

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

__all__ = ["ProgressBoard"]

_STYLES = {"train": "-", "val": "--"}
_DPI = 110  # pixels per inch at 1x; stored at twice that (retina)


def _in_notebook() -> bool:
    """Whether we run inside a Jupyter kernel (which has IPython imported)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


class ProgressBoard:
    """One matplotlib figure of named curves, redrawn in place once per update in a notebook (chapter "Neural networks and GPUs").

    Headless (no Jupyter kernel) it only draws into ``self.fig``, a plain
    ``matplotlib.figure.Figure`` that needs no pyplot and no backend. In a
    notebook it shows the figure once and then updates that same output
    (an IPython display handle), so the stored notebook holds one figure.
    """

    def __init__(self, xlabel="epoch", ylabel="loss", *, xlim=None, ylim=None,
                 yscale="linear", title=None, figsize=(4.5, 3.0), display=None):
        if yscale not in ("linear", "log"):
            raise ValueError(
                f"ProgressBoard(yscale): yscale must be 'linear' or 'log', "
                f"got {yscale!r}")
        if display is not None and not isinstance(display, bool):
            raise TypeError(
                f"ProgressBoard(display): display must be None (automatic), "
                f"True or False, got {display!r}")
        self.xlabel, self.ylabel = xlabel, ylabel
        self.xlim, self.ylim = xlim, ylim
        self.yscale = yscale
        self.title = title
        self.display = _in_notebook() if display is None else display
        self.fig = Figure(figsize=figsize, layout="constrained")
        self.ax = self.fig.add_subplot()
        self.data: dict[str, tuple[list[float], list[float]]] = {}
        self._handle = None

    def draw(self, x, y, label, refresh=True) -> None:
        """Append the point (x, y) to the curve ``label``; redraw unless ``refresh=False``."""
        xs, ys = self.data.setdefault(str(label), ([], []))
        xs.append(float(x))
        ys.append(float(y))
        if refresh:
            self.refresh()

    def refresh(self) -> None:
        """Redraw the figure from the stored points and, in a notebook, update its display."""
        ax = self.ax
        ax.clear()
        for label, (xs, ys) in self.data.items():
            ax.plot(xs, ys, _STYLES.get(label, "-"), marker="o", markersize=3,
                    label=label)
        ax.set_xlabel(self.xlabel)
        ax.set_ylabel(self.ylabel)
        all_y = [y for _, ys in self.data.values() for y in ys]
        positive = all(y > 0 and math.isfinite(y) for y in all_y)
        ax.set_yscale("log" if self.yscale == "log" and positive else "linear")
        if self.xlim is not None:
            ax.set_xlim(*self.xlim)
        if self.ylim is not None:
            ax.set_ylim(*self.ylim)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if self.title:
            ax.set_title(self.title)
        if self.data:
            ax.legend()
        ax.grid(True, alpha=0.3)
        if self.display:
            self._show()

    def to_png(self, dpi: int = _DPI) -> bytes:
        """The figure as PNG bytes."""
        buffer = io.BytesIO()
        self.fig.savefig(buffer, format="png", dpi=dpi)
        return buffer.getvalue()

    def _bundle(self) -> tuple[dict, dict]:
        # Drawn at twice the resolution and shown at half the pixel size, so
        # that it is sharp on high-density (retina) screens.
        width, height = self.fig.get_size_inches() * _DPI
        data = {
            "image/png": base64.b64encode(self.to_png(2 * _DPI)).decode("ascii"),
            "text/plain": f"<ProgressBoard: {self.ylabel} by {self.xlabel}>",
        }
        return data, {"image/png": {"width": round(width), "height": round(height)}}

    def _show(self) -> None:
        from IPython.display import display

        data, metadata = self._bundle()
        if self._handle is None:
            self._handle = display(data, raw=True, metadata=metadata,
                                   display_id=True)
        else:
            self._handle.update(data, raw=True, metadata=metadata)

    def _repr_png_(self) -> bytes:
        return self.to_png()
