"""Show recorded GPU runs (runs/<machine>/) under every `hardware` code cell, in tabs.

The first tab holds the build's stored output (and the CPU it was made on:
booktools.notebooks' ``stored_outputs``); one tab per machine holds the recorded cell
of the same name (booktools.runs): what ran it, a line where it is stale (the cell or
one above changed, with the cell's old source folded, its comments in the page's language
where its lines are the edition's cell's), its outputs, and downloads of
the files it wrote. A cell with no recording gets one line instead. Tabs print
(_static/book.css).
"""
from __future__ import annotations

import copy
import difflib
import hashlib
import os
import re
from base64 import b64decode
from datetime import date
from pathlib import Path

from babel.dates import format_date
from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.util import logging
from myst_nb.core.utils import coalesce_streams
from sphinx_design.dropdown import dropdown_main, dropdown_title
from sphinx_design.shared import create_component

from booktools import files, i18n, runs
from booktools.notebooks import MACHINE_KEY

LOGGER = logging.getLogger(__name__)


def _literal(text: str, classes: list[str], language: str = "none") -> nodes.literal_block:
    # The text as printed, its last newline too (as myst-nb keeps the build's own).
    text = files.ANSI_ESCAPE.sub("", text)
    node = nodes.literal_block(text, text, classes=classes)
    node["language"] = language
    return node


class RecordedRunsTransform(SphinxTransform):
    """Wrap each `hardware` cell's outputs in tabs with the recorded runs' outputs."""

    default_priority = 500

    def apply(self, **kwargs) -> None:
        recorded = getattr(self.app, "recorded_runs", None)
        docname = self.env.docname
        if recorded is None or not docname.startswith("chapters/"):
            return
        chapter = docname.split("/", 1)[1]
        self.lang = i18n.for_sphinx(self.app.config.language)
        self.ui = self.lang.ui  # the page's words
        path = Path(self.app.srcdir) / "chapters" / f"{chapter}.ipynb"
        nb = runs.read_notebook(path) if path.is_file() else {"cells": [], "metadata": {}}
        stored = {i: c for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"}
        self.stored_machine = self._stored_machine(nb["metadata"].get(MACHINE_KEY))
        for cell in self.document.findall(nodes.container):
            metadata = cell.get("cell_metadata", {})
            if cell.get("nb_element") == "cell_code" and runs.HARDWARE_TAG in metadata.get("tags", []):
                self._add_tabs(chapter, cell, metadata.get("name"), stored, recorded)

    def _stored_machine(self, facts) -> str | None:
        """The line naming the machine of the stored outputs, in the page's words, or None."""
        if not isinstance(facts, dict) or not {"cpu", "threads", "torch"} <= set(facts):
            return None
        return self.ui["build_machine"].format(**{k: facts[k] for k in ("cpu", "threads", "torch")})

    def _add_tabs(self, chapter, cell, name, stored, recorded_runs) -> None:
        """Put the cell's output and the recordings of the cell named so into tabs."""
        output = next((c for c in cell.children if isinstance(c, nodes.container)
                       and c.get("nb_element") == "cell_code_output"), None)
        index = cell.get("cell_index")
        above = [c for i, c in sorted(stored.items()) if index is not None and i < index]
        source = stored.get(index, {}).get("source")
        tabs = []
        for run in recorded_runs:
            recorded = run.cell(chapter, name)
            if recorded is None:
                continue
            cells = runs.code_cells(run.notebooks[chapter])
            match = runs.Match(next(j for j, c in enumerate(cells) if c is recorded), True)
            stale = ("earlier_version" if source is None
                     or not runs.same_program(recorded.source, source)
                     else "earlier_above" if runs.earlier_change(above, match, cells) else None)
            tabs.append(self._run_tab(chapter, name, cell, run, recorded, stale, source))
        if not tabs:
            note = nodes.paragraph("", "", nodes.Text(self.ui["not_recorded"]),
                                   classes=["recorded-runs-none"])
            cell.insert(cell.index(output) + 1 if output is not None else len(cell), note)
            return
        if output is not None:
            position = cell.index(output)
            cell.remove(output)
            build_content = [output]
        else:
            position = len(cell)
            build_content = [nodes.paragraph("", "", nodes.Text(self.ui["no_output"]))]
        if self.stored_machine:
            build_content.insert(0, nodes.paragraph("", "", nodes.Text(self.stored_machine),
                                                    classes=["recorded-run-meta"]))
        build = self._tab(self.ui["build_tab"], build_content, ["recorded-run-build"],
                          selected=True)
        tab_set = create_component("tab-set", ["sd-tab-set", "recorded-runs"],
                                   children=[build, *tabs])
        cell.insert(position, tab_set)

    @staticmethod
    def _tab(label: str, content: list, classes: list[str], selected=False) -> nodes.container:
        title = nodes.rubric(label, "", nodes.Text(label), classes=["sd-tab-label"])
        body = create_component("tab-content", ["sd-tab-content", *classes], children=content)
        return create_component("tab-item", ["sd-tab-item"], children=[title, body],
                                selected=selected)

    def _run_tab(self, chapter, index, cell, run, recorded, stale, source) -> nodes.container:
        """One machine's tab (``stale``: the ui key saying why, None when current)."""
        classes = ["recorded-run", f"recorded-run-{run.machine}"]
        about = run.about.removesuffix(run.meta["date"]) + long_date(run.meta, self.lang.sphinx)
        if run.meta.get("recorded_by"):  # a contributor who chose to be named
            about += " · " + self.ui["recorded_by"].format(name=run.meta["recorded_by"])
        content = [nodes.paragraph("", "", nodes.Text(about), classes=["recorded-run-meta"])]
        if stale:
            classes += ["recorded-run-stale"] + (
                ["recorded-run-stale-above"] if stale == "earlier_above" else [])
            content.append(nodes.paragraph("", "", nodes.Text(self.ui[stale]),
                                           classes=["recorded-run-stale-note"]))
        if stale == "earlier_version":
            then = recorded.source if self.lang.english else \
                with_comments_of(recorded.source, source or "")
            content.append(dropdown_main("", dropdown_title("", nodes.Text(self.ui["cell_then"])),
                                         _literal(then, [], "ipython3"),
                                         classes=["recorded-run-stale-source"]))
        outputs = self._outputs(chapter, index, cell, run, recorded)
        # Not "cell_output": that class is the build's own output (its count is tested).
        content.append(nodes.container("", *outputs, classes=["recorded-output"])
                       if outputs else nodes.paragraph("", "", nodes.Text(self.ui["no_output"])))
        files = run.artifacts(chapter, index)
        if files:
            content.append(self._downloads(files))
        return self._tab(run.tab_label, content, classes)

    def _downloads(self, files: list[Path]) -> nodes.paragraph:
        """"Files this cell wrote there: a.json (1.2 MiB), ...", each a download."""
        line = nodes.paragraph("", "", nodes.Text(self.ui["artifacts"] + " "),
                               classes=["recorded-run-files"])
        for k, path in enumerate(files):
            if k:
                line += nodes.Text(", ")
            target = "/" + Path(os.path.relpath(path, self.app.srcdir)).as_posix()
            line += addnodes.download_reference(
                "", "", nodes.literal(path.name, path.name), reftarget=target,
                refdoc=self.env.docname, refdomain="", reftype="download", refexplicit=True,
                refwarn=False)
            line += nodes.Text(f" ({_size(path.stat().st_size)})")
        return line

    def _outputs(self, chapter, index, cell, run, recorded) -> list[nodes.Node]:
        found = []
        tags = cell.get("cell_metadata", {}).get("tags", [])
        # A stream's parts as one block, as myst-nb's nb_merge_streams shows the build's own.
        outputs = coalesce_streams(copy.deepcopy(recorded.get("outputs", [])))
        for k, output in enumerate(outputs):
            kind = output.get("output_type")
            if kind == "stream" and f"remove-{output.get('name')}" in tags:
                continue  # as myst-nb treats the build's own output
            if kind == "stream":
                found.append(_literal(output.get("text", ""), ["output", "stream"]))
            elif kind == "error":
                text = "\n".join(output.get("traceback", [])) or \
                    f"{output.get('ename')}: {output.get('evalue')}"
                found.append(_literal(text, ["output", "traceback"]))
            elif kind in ("display_data", "execute_result"):
                data = output.get("data", {})
                if "image/png" in data:
                    png = data["image/png"]
                    if i18n.PLOT_DATA in output.get("metadata", {}) and not self.lang.english:
                        from d2lgpu.plots import redraw  # d2lgpu imports torch: only here
                        png = redraw(output["metadata"], self.lang.code)[0]  # in its words
                    found.append(self._image(chapter, index, k, cell, run, png))
                elif "text/plain" in data:
                    found.append(_literal(data["text/plain"], ["output", "text_plain"]))
        return found

    def _image(self, chapter, index, k, cell, run, png: str) -> nodes.image:
        blob = b64decode(png)
        name = f"{chapter}-{index}-{k}-{hashlib.sha1(blob).hexdigest()[:10]}.png"
        path = Path(self.app.recorded_runs_images) / run.machine / name
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(blob)
        mystnb = cell.get("cell_metadata", {}).get("mystnb", {})
        # The chapter's own alt text (or figure caption, markup removed) describes the plot.
        alt = (mystnb.get("image", {}).get("alt")
               or re.sub(r"[`*_]", "", mystnb.get("figure", {}).get("caption", ""))
               or "Plot made by this cell")
        alt = recorded_alt(self.ui["recorded_alt"], alt, run.meta, self.lang.sphinx)
        uri = "/" + os.path.relpath(path, self.app.srcdir)
        return nodes.image(uri=uri, alt=alt)


def _code(source: str) -> list[str] | None:
    """Each line without its comment (a comment's own line: "#"); None if it won't tokenize."""
    found, lines = runs.comments(source), source.splitlines()
    if found is None:
        return None
    for token in found:
        row, column = token.start
        lines[row - 1] = lines[row - 1][:column].rstrip() or "#"  # a comment's line
    return lines


def with_comments_of(old: str, current: str) -> str:
    """The old source, lines whose code is the current cell's taken from it (an edition's comments)."""
    old_code, current_code = _code(old), _code(current)
    if old_code is None or current_code is None:
        return old
    lines, current_lines = old.splitlines(), current.splitlines()
    matcher = difflib.SequenceMatcher(None, old_code, current_code, autojunk=False)
    for a, b, n in reversed(matcher.get_matching_blocks()):
        lines[a:a + n] = current_lines[b:b + n]
    return "\n".join(lines)


def _size(n: int) -> str:
    """Bytes in binary units, three significant digits: '812 B', '1.20 MiB'."""
    for unit in ("B", "KiB", "MiB"):
        if n < 1000 or unit == "MiB":
            return f"{n} B" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024


def long_date(meta: dict, locale: str = "en") -> str:
    """The recording's date as a reader of the locale writes it: "27 de novembro de 2026"."""
    return format_date(date.fromisoformat(meta["date"]), format="long", locale=locale)


def recorded_alt(template: str, alt: str, meta: dict, locale: str = "en") -> str:
    """A recorded plot's alt text: the chapter's own, then where it was recorded, in the page's language."""
    return template.format(alt=alt.rstrip(".。 "), machine=meta["label"],
                           torch=meta["torch"], date=long_date(meta, locale))


def load_runs(app: Sphinx) -> None:
    srcdir = Path(app.srcdir)
    try:
        app.recorded_runs = runs.runs(srcdir / "runs")
    except ValueError as error:  # a recording that cannot be read: a warning naming it
        LOGGER.warning(f"recorded run: {error}", type="recorded_runs")
        app.recorded_runs = []
    app.recorded_runs_images = str(Path(app.outdir).parent / "recorded_runs")
    # An edition's chapters have English's code (booktools.i18n): English checks the runs.
    checked = app.recorded_runs if i18n.for_sphinx(app.config.language).english else []
    for run in checked:
        problems = runs.check_run(run, srcdir / "chapters")
        for problem in problems:
            LOGGER.warning(f"recorded run: {problem}", type="recorded_runs")


def _fingerprint(folder: Path) -> list:
    """Names, sizes and times of every file under runs/: changes when a run does."""
    return sorted((str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns)
                  for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []


def outdated_by_runs(app: Sphinx, env, added, changed, removed) -> list[str]:
    """Re-read every chapter when a run is added, removed or re-recorded (any file of runs/)."""
    fingerprint = _fingerprint(Path(app.srcdir) / "runs")
    if getattr(env, "recorded_runs_fingerprint", None) == fingerprint:
        return []
    env.recorded_runs_fingerprint = fingerprint
    return [doc for doc in env.found_docs if doc.startswith("chapters/")]


def setup(app: Sphinx) -> dict:
    app.setup_extension("sphinx_design")
    app.connect("builder-inited", load_runs)
    app.connect("env-get-outdated", outdated_by_runs)
    app.add_transform(RecordedRunsTransform)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
