"""Write the figures the chapters draw by code as SVG files into figures/ (for the README).

    python scripts/make_figures.py [--check]   # --check: exit 1 if a committed file is stale
"""
import io
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from d2lgpu.figures import copy_figure  # noqa: E402

FIGURES = Path(__file__).resolve().parent.parent / "figures"


def main(argv: list[str]) -> int:
    if argv not in ([], ["--check"]):
        print("usage: python scripts/make_figures.py [--check]", file=sys.stderr)
        return 2
    stale = []
    for name, draw in {"copy-to-device.svg": copy_figure}.items():
        # the same SVG on every run: no date, fixed ids
        with matplotlib.rc_context({"svg.hashsalt": "d2lgpu", "svg.fonttype": "path"}):
            fig, svg = draw(), io.StringIO()
            fig.savefig(svg, format="svg", metadata={"Date": None}, bbox_inches="tight")
            plt.close(fig)
        path = FIGURES / name
        if argv == ["--check"]:
            if not path.exists() or path.read_text(encoding="utf-8") != svg.getvalue():
                stale.append(name)
                print(f"figures/{name} is stale: run python scripts/make_figures.py",
                      file=sys.stderr)
        else:
            path.write_text(svg.getvalue(), encoding="utf-8")
            print(f"make_figures: {path.name}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
