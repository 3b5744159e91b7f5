"""Write the figures the chapters draw by code as SVG files into figures/ (for the README).

    python scripts/make_figures.py [--check]   # --check: exit 1 if a committed file is stale
"""
from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from d2lgpu.figures import copy_figure  # noqa: E402

FIGURES = Path(__file__).resolve().parent.parent / "figures"
DRAWINGS = {"copy-to-device.svg": copy_figure}


def render(draw) -> str:
    """The figure as SVG text, the same on every run (no date, fixed ids)."""
    with matplotlib.rc_context({"svg.hashsalt": "d2lgpu", "svg.fonttype": "path"}):
        fig = draw()
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
        plt.close(fig)
    return buffer.getvalue()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    stale = []
    for name, draw in DRAWINGS.items():
        path, svg = FIGURES / name, render(draw)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != svg:
                stale.append(name)
        else:
            path.write_text(svg, encoding="utf-8")
            print(f"make_figures: {path.name}")
    for name in stale:
        print(f"figures/{name} is stale: run python scripts/make_figures.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
