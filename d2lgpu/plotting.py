"""Plots: a live plot of training progress, and plots of measured data drawn in
the book's languages.

A measured plot (:class:`Plot`: ``roofline``, ``loss_curves``,
d2lgpu.matmul.plot_rates) shows in a notebook as a PNG whose output metadata
carries its data (``PLOT_DATA``): :func:`redraw` draws it again from there in
another language (booktools.i18n for the editions' notebooks, the recorded
GPU tabs on their pages), without measuring again. Words: d2lgpu.figures.LABELS.
"""

from __future__ import annotations

import base64
import io
import math
import sys

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, ScalarFormatter

from .figures import fonts, labels

__all__ = ["ProgressBoard", "Plot", "PLOT_DATA", "roofline", "loss_curves", "redraw"]

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


PLOT_DATA = "d2lgpu/plot"  # the output metadata key of a measured plot's data


def _axes(words: dict, language: str | None, figsize=(5, 4.4)):
    """A figure sized and lettered to stay readable on a phone, and its font."""
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot(), fonts(language, words)


def _letter(ax, font, xlabel: str, ylabel: str, title: str | None = None) -> None:
    ax.tick_params(labelsize=13)
    ax.set_xlabel(xlabel, fontsize=14, family=font)
    ax.set_ylabel(ylabel, fontsize=14, family=font)
    if title:
        ax.set_title(title, fontsize=15, family=font)
    ax.grid(True, which="both", alpha=0.3)


def _draw_roofline(data: dict, language: str | None = None) -> Figure:
    words = labels(language)
    fig, ax, font = _axes(words, language, figsize=(5, 5))  # its legend below it
    points, bandwidth = data["points"], data["bandwidth"]  # points: [name, FLOP/byte, FLOP/s]
    best = max(rate for _, _, rate in points)
    roof_x = sorted([1 / 16, best / bandwidth, 1000])
    ax.loglog(roof_x, [min(best, i * bandwidth) for i in roof_x], "k-")
    for (label, intensity, rate), marker in zip(points, "osD^v<>ph*" * len(points)):
        ax.loglog(intensity, rate, marker, markersize=8, label=label)
    _letter(ax, font, words["intensity"], "FLOP/s")
    fig.legend(loc="outside lower center", ncols=3, prop={"size": 12})
    return fig


def _draw_loss(data: dict, language: str | None = None) -> Figure:
    words = labels(language)
    fig, ax, font = _axes(words, language, figsize=(5, 5))  # its legend below it
    one, many = data["single"], data["ddp"]
    steps = range(1, len(one["step_loss"]) + 1)
    ax.semilogy(steps, one["step_loss"], lw=4, alpha=0.5,
                label=words["one_process"].format(batch=one["global_batch"],
                                                  device=one["device"]))
    ax.semilogy(steps, many["step_loss"], "k--", lw=1.5,
                label=words["processes"].format(n=many["world_size"],
                                                batch=many["per_rank_batch"],
                                                backend=many["backend"], device=many["device"]))
    _letter(ax, font, words["loss_x"], words["loss_y"], words["loss_title"])
    fig.legend(loc="outside lower center", prop={"family": font, "size": 12})
    return fig


def _draw_rates(data: dict, language: str | None = None) -> Figure:
    words = labels(language)
    fig, ax, font = _axes(words, language)
    for curve in data["curves"]:
        name = (words["cpu"].format(threads=curve["threads"]) if curve["threads"]
                else curve["device"])
        ax.plot(curve["sizes"], curve["tflops"], "-" if curve["dtype"] == "float32" else "--",
                marker="o", markersize=4, linewidth=2,
                label=words["curve"].format(device=name, dtype=curve["dtype"]))
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.set_yscale("log")
    ax.tick_params(axis="x", labelrotation=45)
    _letter(ax, font, words["rates_x"], words["rates_y"], words["rates_title"])
    ax.legend(loc="lower right", prop={"family": font, "size": 12})
    return fig


_DRAW = {"roofline": _draw_roofline, "loss_curves": _draw_loss, "rates": _draw_rates}


class Plot:
    """A plot of measured data (``fig``: a matplotlib Figure, drawn in the book's
    language); a notebook shows it as a PNG that carries the data (``PLOT_DATA``)."""

    def __init__(self, kind: str, data: dict, language: str | None = None):
        self.kind, self.data = kind, data
        self.fig = _DRAW[kind](data, language)

    def _repr_mimebundle_(self, include=None, exclude=None) -> tuple[dict, dict]:
        png, size = _png(self.fig)
        return ({"image/png": png, "text/plain": f"<d2lgpu plot: {self.kind}>"},
                {"image/png": size, PLOT_DATA: {"kind": self.kind, "data": self.data}})


def _png(fig: Figure) -> tuple[str, dict]:
    """The figure as the notebook's retina backend stores it: base64 PNG drawn at
    twice its size, and the size to show it at."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=2 * fig.dpi)
    width, height = fig.get_size_inches() * fig.dpi
    return (base64.b64encode(buffer.getvalue()).decode("ascii"),
            {"width": round(width), "height": round(height)})


def redraw(metadata: dict, language: str) -> tuple[str, dict]:
    """A measured plot's PNG and its size, drawn again in ``language`` from the
    data an output's metadata carries (``PLOT_DATA``)."""
    stored = metadata[PLOT_DATA]
    return _png(_DRAW[stored["kind"]](stored["data"], language))


def roofline(points: dict, bandwidth: float) -> Plot:
    """The roofline: measured points ``{name: (FLOP per byte, FLOP/s)}`` under the roof of
    ``bandwidth`` (bytes/s) and the fastest point (chapter "Measuring and profiling")."""
    # A list, not a dict: a notebook stores its metadata's keys sorted.
    return Plot("roofline", {"points": [[name, float(i), float(rate)]
                                        for name, (i, rate) in points.items()],
                             "bandwidth": float(bandwidth)})


def loss_curves(single: dict, ddp: dict) -> Plot:
    """The loss per step of the one-process run and of the data-parallel run, as
    d2lgpu.ddp_train writes them (chapter "Beyond one device: data-parallel training")."""
    keys = ("step_loss", "device", "world_size", "backend", "global_batch", "per_rank_batch")
    return Plot("loss_curves", {run: {k: result[k] for k in keys}
                                for run, result in (("single", single), ("ddp", ddp))})
