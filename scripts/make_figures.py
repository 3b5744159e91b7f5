"""Write the figure the README shows, drawn by d2lgpu's code, as figures/copy-to-device.svg.

    python scripts/make_figures.py [--check]   # --check: exit 1 if the committed file is stale
"""
import io
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from d2lgpu.figures import copy_figure  # noqa: E402

FIGURE = Path(__file__).resolve().parent.parent / "figures" / "copy-to-device.svg"


def main(argv: list[str]) -> int:
    if argv not in ([], ["--check"]):
        print("usage: python scripts/make_figures.py [--check]", file=sys.stderr)
        return 2
    # the same SVG on every run: no date, fixed ids
    with matplotlib.rc_context({"svg.hashsalt": "d2lgpu", "svg.fonttype": "path"}):
        fig, svg = copy_figure(), io.StringIO()
        fig.savefig(svg, format="svg", metadata={"Date": None}, bbox_inches="tight")
        plt.close(fig)
    if not argv:
        FIGURE.write_text(svg.getvalue(), encoding="utf-8")
        print(f"make_figures: {FIGURE.name}")
    elif not FIGURE.is_file() or FIGURE.read_text(encoding="utf-8") != svg.getvalue():
        print(f"figures/{FIGURE.name} is stale: run python scripts/make_figures.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
