"""Plots of measured data, drawn in the book's languages (chapters "Measuring and
profiling", "Exercises, with measured solutions" and "Beyond one device: data-parallel
training").

A :class:`Plot` (``roofline``, ``loss_curves``, d2lgpu.matmul.plot_rates) shows in a
notebook as a PNG whose output metadata carries its data (``PLOT_DATA``): :func:`redraw`
draws it again from there in another language (booktools.i18n for the editions'
notebooks, the recorded GPU tabs on their pages), without measuring again. Its words:
d2lgpu.figures.LABELS.
"""

from __future__ import annotations

import base64
import io

from matplotlib.figure import Figure
from matplotlib.ticker import ScalarFormatter

from .figures import fonts, labels

__all__ = ["PLOT_DATA", "Plot", "redraw", "roofline", "loss_curves"]

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
