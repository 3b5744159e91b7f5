"""The recorded GPU runs (runs/<machine>/) against the stored chapter notebooks.

Without a GPU this proves that what nbval compares is hardware-neutral: every
stored output that nbval would check must equal, under nbval's own comparison
and tests/sanitize.cfg, what the same cell printed on the recorded GPU machine.
Cells whose source changed since the recording are skipped and counted, and so
are cells whose stored output changed since the recording for a reason that is
not the hardware (it differs from the baseline: the build machine's stored
output at the recorded commit), e.g. a cell printing the source of a function
that was edited since. A cell whose stored output is the baseline's but not the
recording's is a real hardware difference and fails.
"""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest
from nbval import plugin as nbval_plugin

import runs as runs_module  # scripts/runs.py (pyproject.toml: pythonpath)

ROOT = Path(__file__).resolve().parent.parent
RUNS = runs_module.runs()
CHAPTER_NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))


NbvalComparison = runs_module.NbvalComparison


def test_nbval_skip_keys_are_nbvals_own():
    # The keys IPyNbFile.__init__ gives self.skip_compare: its tuple, plus the
    # images it adds without --nbdime. Fail if nbval changes them.
    tree = ast.parse(Path(nbval_plugin.__file__).read_text())
    ipynb_file = next(node for node in tree.body
                      if isinstance(node, ast.ClassDef) and node.name == "IPyNbFile")
    keys = ()
    for node in ast.walk(ipynb_file):
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == [
                "self.skip_compare"]:
            value = node.value.right if isinstance(node.value, ast.BinOp) else node.value
            keys += ast.literal_eval(value)
    assert NbvalComparison.SKIP_COMPARE == keys


@dataclass
class Neutrality:
    """One chapter against one run; cells numbered as nbval numbers them."""
    failures: list = field(default_factory=list)        # (cell, why)
    compared: int = 0                                    # cells whose output was compared
    changed_source: list = field(default_factory=list)  # skipped: source changed
    changed_output: list = field(default_factory=list)  # skipped: stored output changed
    unrecorded: list = field(default_factory=list)      # no recorded cell at all


def neutrality_failures(chapter_nb, recorded_nb, comparison: NbvalComparison,
                        baseline_nb=None) -> Neutrality:
    """Compare one chapter's stored notebook with a recording of it (and its baseline).

    Where baseline_nb is None (or lacks the recorded cell), every compared
    cell whose output differs from the recording fails (strict).
    """
    chapter_cells = runs_module.code_cells(chapter_nb)
    recorded_cells = runs_module.code_cells(recorded_nb)
    matches = runs_module.align([c.source for c in chapter_cells],
                                [c.source for c in recorded_cells])
    result = Neutrality()
    for index, cell in enumerate(chapter_cells):
        if not runs_module.nbval_compares(cell):
            continue
        status, why = runs_module.cell_status(cell, matches.get(index), recorded_cells,
                                              baseline_nb, comparison)
        if status == runs_module.UNRECORDED:
            result.unrecorded.append(index)
        elif status == runs_module.STALE_SOURCE:
            result.changed_source.append(index)
        elif status == runs_module.OUTPUT_CHANGED:
            result.changed_output.append(index)
        else:
            result.compared += 1
            if status in (runs_module.RECORDED_ERROR, runs_module.HARDWARE):
                result.failures.append((index, why))
    return result


@pytest.mark.parametrize("run", RUNS, ids=[r.machine for r in RUNS])
@pytest.mark.parametrize("chapter", CHAPTER_NOTEBOOKS, ids=[p.stem for p in CHAPTER_NOTEBOOKS])
def test_stored_outputs_hold_on_the_recorded_machine(chapter, run, record_property):
    """nbval's comparison of each stored notebook against the recorded run passes."""
    recorded = run.notebooks.get(chapter.stem)
    if recorded is None:
        pytest.skip(f"{run.machine} has no recording of {chapter.stem}")
    nb = nbformat.read(chapter, as_version=4)
    result = neutrality_failures(nb, recorded, NbvalComparison(),
                                 run.baselines.get(chapter.stem))
    record_property("compared", result.compared)
    record_property("skipped_changed_source", result.changed_source)
    record_property("skipped_changed_output", result.changed_output)
    print(f"{chapter.stem} vs {run.machine}: {result.compared} cells compared, "
          f"{len(result.changed_source)} skipped (source changed since the recording: "
          f"{result.changed_source}), {len(result.changed_output)} skipped (output changed "
          f"since the recording: {result.changed_output}), {len(result.unrecorded)} with "
          f"no recorded cell {result.unrecorded}")
    assert not result.failures, (
        f"{len(result.failures)} cell(s) of {chapter.name} (numbered as nbval numbers them) "
        f"print something else on {run.meta['label']} (recorded {run.meta['date']}) than on "
        f"the build machine, whose output is unchanged since the recording:\n"
        + "\n\n".join(f"Cell {i}: {why}" for i, why in result.failures))


def test_a_recording_exists():
    assert RUNS, "runs/ holds no recorded run (runs/<machine>/run.json)"


@pytest.mark.parametrize("run", RUNS, ids=[r.machine for r in RUNS])
def test_recording_is_well_formed(run):
    """run.json complete, every notebook a chapter's, executed, errors only where tagged."""
    assert runs_module.check_run(run) == []


def test_hardware_cells_with_a_current_recording():
    """Report how many `hardware` cells each chapter has and how many are recorded.

    The table is this test's output: `pytest -rA` (or -rP) prints it, also
    under xdist.
    """
    report = runs_module.hardware_report(recorded=RUNS)
    assert set(report) == {p.stem for p in CHAPTER_NOTEBOOKS}
    for chapter, entry in report.items():
        nb = nbformat.read(ROOT / "chapters" / f"{chapter}.ipynb", as_version=4)
        cells = runs_module.code_cells(nb)
        hardware = [i for i, c in enumerate(cells)
                    if runs_module.HARDWARE_TAG in c.metadata.get("tags", [])]
        assert entry["hardware"] == len(hardware), chapter
        for run in RUNS:
            counts = entry["machines"][run.machine]
            assert set(counts) == set(runs_module.REPORT_KEYS), counts
            # Every hardware cell paired with a recorded cell is counted once.
            paired = run.match(chapter, [c.source for c in cells])
            assert sum(counts.values()) == sum(i in paired for i in hardware), (chapter, run.machine)
    print("hardware cells with a current recording per machine (current: source and "
          "output as recorded; stale-source: source changed since; stale-output: "
          "stored output changed since):")
    print(runs_module.format_report(report))


def test_alignment_pairs_changed_cells_and_skips_new_ones():
    chapter = ["a = 1", "b = 2  \n", "print(c + 1)", "new()", "d = 4"]
    recorded = ["a = 1", "b = 2", "print(c)", "d = 4"]
    matches = runs_module.align(chapter, recorded)
    assert matches[0] == runs_module.Match(0, True)
    assert matches[1] == runs_module.Match(1, True)   # trailing whitespace ignored
    assert matches[2] == runs_module.Match(2, False)  # changed: paired, not current
    assert 3 not in matches                           # new: no recording
    assert matches[4] == runs_module.Match(3, True)


def _stream(text, name="stdout"):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_comparison_uses_the_sanitizer_and_catches_real_changes():
    compare = NbvalComparison()
    assert compare.differs([_stream("took 3.2 ms\n")], [_stream("took 41 us\n")]) is None
    # Split streams are coalesced, as nbval does.
    assert compare.differs([_stream("a\nb\n")], [_stream("a\n"), _stream("b\n")]) is None
    assert compare.differs([_stream("cpu\n")], [_stream("cuda:0\n")]) is not None
    error = nbformat.v4.new_output("error", ename="RuntimeError", evalue="boom", traceback=[])
    assert compare.differs([error], [_stream("fine\n")]) is not None


def _nb(cells):
    """A notebook of executed code cells: (source, outputs, tags) each."""
    book = nbformat.v4.new_notebook()
    for source, outputs, tags in cells:
        cell = nbformat.v4.new_code_cell(source, execution_count=1, outputs=outputs)
        cell.metadata["tags"] = tags
        book.cells.append(cell)
    return book


def test_neutrality_check_flags_an_untagged_error_and_skips_changed_cells():
    nb = _nb
    error = nbformat.v4.new_output("error", ename="AcceleratorError", evalue="x", traceback=[])
    stored = nb([("x()", [_stream("ok\n")], []), ("y()", [_stream("1\n")], []),
                 ("z()", [_stream("cpu\n")], ["nbval-ignore-output"])])
    recorded = nb([("x()", [error], []), ("y(0)", [_stream("2\n")], []),
                   ("z()", [_stream("cuda\n")], ["nbval-ignore-output"])])
    result = neutrality_failures(stored, recorded, NbvalComparison(), baseline_nb=recorded)
    assert [i for i, _ in result.failures] == [0]
    assert "AcceleratorError" in result.failures[0][1]
    assert (result.compared, result.changed_source, result.unrecorded) == (1, [1], [])


def test_baseline_tells_changed_output_from_a_hardware_difference():
    """Same source everywhere; the CPU baseline of the recorded commit decides."""
    cells = ["same()", "shows_source()", "device()", "unbased()"]
    stored = _nb([(c, [_stream(out)], []) for c, out in zip(
        cells, ["1\n", "def f(x, y):\n", "cpu\n", "cpu\n"])])
    recorded = _nb([(c, [_stream(out)], []) for c, out in zip(
        cells, ["1\n", "def f(x):\n", "cuda:0\n", "cuda:0\n"])])
    # The build machine printed at the recorded commit: the old source; "cpu".
    baseline = _nb([(c, [_stream(out)], []) for c, out in zip(
        cells[:3], ["1\n", "def f(x):\n", "cpu\n"])])
    result = neutrality_failures(stored, recorded, NbvalComparison(), baseline)
    assert result.compared == 3 and result.changed_output == [1]
    # Cell 2: the CPU output is unchanged, the GPU's differs; cell 3: no baseline, strict.
    assert [i for i, _ in result.failures] == [2, 3]
    assert "no baseline cell" in result.failures[1][1]
    # Without any baseline every difference fails.
    strict = neutrality_failures(stored, recorded, NbvalComparison())
    assert [i for i, _ in strict.failures] == [1, 2, 3] and strict.changed_output == []
    # A baseline cell of another source is not used.
    moved = _nb([("other()", [_stream("x\n")], [])] + [(c, [_stream("0\n")], []) for c in cells])
    assert [i for i, _ in neutrality_failures(stored, recorded, NbvalComparison(),
                                              moved).failures] == [1, 2, 3]


def test_report_counts_current_stale_source_and_stale_output(tmp_path):
    hw, ignore = ["hardware"], ["hardware", "nbval-ignore-output"]
    chapter = _nb([("a()", [_stream("cpu\n")], hw), ("b(1)", [_stream("x\n")], hw),
                   ("show()", [_stream("def f(x, y):\n")], hw),
                   ("t()", [_stream("12 ms, cpu\n")], ignore), ("plain()", [], []),
                   ("new()", [], hw)])
    nbformat.write(chapter, tmp_path / "toy.ipynb")
    recorded = _nb([("a()", [_stream("cuda:0\n")], hw), ("b(0)", [_stream("x\n")], hw),
                    ("show()", [_stream("def f(x):\n")], hw),
                    ("t()", [_stream("3 ms, cuda:0\n")], ignore), ("plain()", [], [])])
    baseline = _nb([("a()", [_stream("cpu\n")], hw), ("b(0)", [_stream("x\n")], hw),
                    ("show()", [_stream("def f(x):\n")], hw),
                    ("t()", [_stream("14 ms, cpu\n")], ignore), ("plain()", [], [])])
    run = runs_module.Run("toy-gpu", tmp_path, {}, {"toy": recorded}, {"toy": baseline})
    report = runs_module.hardware_report(tmp_path, [run])
    assert report == {"toy": {"hardware": 5, "machines": {"toy-gpu": {
        "current": 2, "stale_source": 1, "stale_output": 1}}}}
    assert "toy" in runs_module.format_report(report).splitlines()[1]
    assert runs_module.format_report(report).splitlines()[1].endswith(" 2/1/1")


# The cells whose stored output at the recorded commit (3880a84) does not hold on
# the H100 under today's sanitizer: real hardware differences, fixed since by
# changing those cells' sources. Compared with the baseline as the stored
# notebooks, the test must find exactly these (exercises 16 and tensors 5
# failed too before the sanitizer rules of the recorded runs were added).
HARDWARE_CELLS_OF_3880A84 = {"devices": [6], "exercises": [2, 4, 8, 17, 20, 21]}


@pytest.mark.parametrize("run", [r for r in RUNS if r.meta["commit"] == "3880a84"],
                         ids=lambda r: r.machine)
def test_the_recorded_commits_own_notebooks_fail_on_its_hardware_cells(run):
    """With the recorded commit's stored notebooks as the current ones, the real
    hardware differences fail although the baseline is used."""
    found = {}
    for chapter, recorded in run.notebooks.items():
        baseline = run.baselines[chapter]
        result = neutrality_failures(baseline, recorded, NbvalComparison(), baseline)
        assert result.changed_source == [] and result.changed_output == [], chapter
        if result.failures:
            found[chapter] = [i for i, _ in result.failures]
    assert found == HARDWARE_CELLS_OF_3880A84


@pytest.mark.parametrize("stored, recorded, same", [
    # [runs-tflops]: the unit follows the magnitude.
    ("peak: 52.3 TFLOP/s\n", "peak: 880.1 GFLOP/s\n", True),
    ("peak: 52.3 TFLOP/s\n", "peak: 52.3 TFLOP/s at n = 4\n", False),
    # [runs-benchmark-device]: only the device after "of <BLOCKS>, ".
    ("x: 3 ms ± 1 ms (median ± IQR/2 of 5 blocks of 10 calls, cpu)\n",
     "x: 9 us ± 1 us (median ± IQR/2 of 7 blocks of 1 call, cuda:0)\n", True),
    ("on cpu\n", "on cuda:0\n", False),
    # [runs-share-of-peak]
    ("  51% of the H100 SXM FP32 peak (67 TFLOP/s)\n",
     "  79% of the H100 SXM FP32 peak (67 TFLOP/s)\n", True),
    ("  51% of the H100 SXM FP32 peak\n", "  51% of the A100 FP32 peak\n", False),
])
def test_sanitizer_rules_of_recorded_runs(stored, recorded, same):
    assert (NbvalComparison().differs([_stream(stored)], [_stream(recorded)]) is None) == same


def test_sanitizer_makes_device_mismatch_errors_agree_but_not_their_types():
    def error(ename, evalue):
        return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[])
    gpu = ("RuntimeError", "Expected all tensors to be on the same device, but found "
                           "at least two devices, cuda:0 and cpu!")
    meta = ("RuntimeError", "Tensor on device meta is not on the expected device cpu!")
    assert NbvalComparison().differs([error(*meta)], [error(*gpu)]) is None
    assert NbvalComparison().differs([error("AssertionError", meta[1])], [error(*gpu)])
    assert NbvalComparison().differs([error("RuntimeError", "CUDA out of memory")],
                                     [error(*gpu)])


def test_check_run_names_what_is_wrong(tmp_path):
    """A run folder with gaps is reported, item by item, not silently accepted."""
    folder = tmp_path / "broken-gpu"
    folder.mkdir()
    (folder / "run.json").write_text('{"label": "X", "gpus": ["A", "B"], "gpu_count": 1, '
                                     '"date": "23.11.2026", "commit": "main"}')
    book = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("gpu(9)", execution_count=None)
    cell.outputs = [nbformat.v4.new_output("error", ename="RuntimeError", evalue="no", traceback=[])]
    cell.metadata["execution"] = {"iopub.execute_input": "2026-11-23T08:00:00Z"}
    book.cells.append(cell)
    nbformat.write(book, folder / "nochapter.ipynb")
    problems = "\n".join(runs_module.check_run(runs_module.read_run(folder)))
    for expected in ["'torch' missing", "'driver' missing", "gpu_count 1 but 2 GPU names",
                     "not YYYY-MM-DD", "'main' is not a hash", "no chapter chapters/nochapter.md",
                     "code cell 0 was not executed", "raised RuntimeError but is not tagged",
                     "volatile cell metadata 'execution'",
                     "broken-gpu/baseline/nochapter.ipynb: missing"]:
        assert expected in problems


def test_check_run_names_what_is_wrong_with_a_baseline(tmp_path):
    folder = tmp_path / "gpu"
    (folder / "baseline").mkdir(parents=True)
    meta = {"label": "GPU", "gpus": ["G"], "gpu_count": 1, "torch": "2", "cuda": "13",
            "python": "3", "driver": "1", "date": "2026-11-23", "commit": "abc1234",
            "recorded_with": "a test"}
    (folder / "run.json").write_text(json.dumps(meta))
    png = nbformat.v4.new_output("display_data", data={"image/png": "iVBO", "text/plain": "<F>"})
    nbformat.write(_nb([("setup()", [], []), ("plot()", [png], [])]), folder / "intro.ipynb")
    nbformat.write(_nb([("setup()", [], []), ("plot(old)", [png], [])]),
                   folder / "baseline" / "intro.ipynb")
    nbformat.write(_nb([("x()", [], [])]), folder / "baseline" / "devices.ipynb")
    problems = "\n".join(runs_module.check_run(runs_module.read_run(folder)))
    for expected in ["gpu/baseline/intro.ipynb: code cells differ from the recording's "
                     "from cell 1 (2 vs 2 code cells)",
                     "gpu/baseline/intro.ipynb: code cell 1 keeps image data",
                     "gpu/baseline/devices.ipynb: no recording of devices"]:
        assert expected in problems
    # _write_run writes the baseline beside the recording, images dropped, ...
    recorded = runs_module.read_notebook(folder / "intro.ipynb")
    written = runs_module._write_run("gpu", {"intro": recorded}, meta, {"intro": recorded},
                                     root=tmp_path / "new")
    run = runs_module.read_run(written)
    assert runs_module.check_run(run) == []
    assert run.baselines["intro"].cells[1].outputs[0]["data"] == {"text/plain": "<F>"}
    # ... and refuses baselines that are not of the recorded chapters.
    with pytest.raises(SystemExit, match="baselines"):
        runs_module._write_run("gpu", {"intro": recorded}, meta, {}, root=tmp_path / "new")
    # A baseline from git needs a commit (an empty one would read git's index).
    with pytest.raises(SystemExit, match="not a hash"):
        runs_module.baselines_from_git("", ["intro"])
    # baseline_notebook drops the images nbval never compares, and keeps the rest.
    kept = runs_module.baseline_notebook(runs_module.read_notebook(folder / "intro.ipynb"))
    assert kept.cells[1].outputs[0]["data"] == {"text/plain": "<F>"}
    assert "image/png" in runs_module.read_notebook(folder / "intro.ipynb").cells[1].outputs[0].data


# --- the website's tabs (_ext/recorded_runs.py) on a small doctree, without a build ---

def _page(cells):
    """A doctree shaped as myst-nb makes it: (source, tags, stdout) per code cell."""
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document
    document = new_document("chapters/toy.md", get_default_settings(Parser))
    for index, (source, tags, stdout) in enumerate(cells):
        cell = nodes.container(nb_element="cell_code", cell_index=index,
                               cell_metadata={"tags": tags}, classes=["cell"])
        cell += nodes.container("", nodes.literal_block(source, source),
                                nb_element="cell_code_source", classes=["cell_input"])
        cell += nodes.container("", nodes.literal_block(stdout, stdout),
                                nb_element="cell_code_output", classes=["cell_output"])
        document += cell
    return document


def test_site_tabs_current_stale_and_unrecorded(tmp_path):
    from types import SimpleNamespace

    from docutils import nodes
    import recorded_runs as ext  # _ext/recorded_runs.py

    png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
           "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")
    recorded = nbformat.v4.new_notebook()
    for source, outputs in [("setup()", []),
                            ("print(device)", [_stream("cuda:0\n")]),
                            ("plot(old=True)", [nbformat.v4.new_output(
                                "display_data", data={"image/png": png, "text/plain": "<Figure>"})])]:
        recorded.cells.append(nbformat.v4.new_code_cell(source, execution_count=1, outputs=outputs))
    meta = {"label": "Toy GPU", "torch": "9.9", "date": "2026-01-02", "commit": "abc1234"}
    run = runs_module.Run("toy-gpu", tmp_path, meta, {"toy": recorded})
    document = _page([("setup()", [], ""), ("print(device)", ["hardware"], "cpu\n"),
                      ("plot(old=False)", ["hardware"], "<Figure>"),
                      ("brand_new()", ["hardware"], "new\n")])
    app = SimpleNamespace(recorded_runs=[run], recorded_runs_module=runs_module,
                          recorded_runs_images=str(tmp_path / "images"), srcdir=str(tmp_path))
    document.settings.env = SimpleNamespace(app=app, docname="chapters/toy",
                                            note_dependency=lambda path: None)
    ext.RecordedRunsTransform(document).apply()

    cells = [n for n in document.findall(nodes.container) if n.get("nb_element") == "cell_code"]
    assert not [n for n in cells[0].findall(nodes.container) if n.get("design_component")]

    def tabs(cell):
        items = [n for n in cell.findall(nodes.container) if n.get("design_component") == "tab-item"]
        return [(item[0].astext(), item[1]) for item in items]

    current = tabs(cells[1])
    assert [label for label, _ in current] == ["CPU (this build)", "Toy GPU · PyTorch 9.9 · 2026-01-02"]
    assert current[0][1].astext() == "cpu\n" and current[1][1].astext() == "cuda:0"
    stale = tabs(cells[2])
    assert stale[1][0].endswith("(earlier version)")
    assert "earlier version of this cell (commit abc1234)" in stale[1][1].astext()
    assert "plot(old=True)" in stale[1][1].astext()
    image = next(stale[1][1].findall(nodes.image))
    assert "Toy GPU" in image["alt"] and (tmp_path / "images" / "toy-gpu").is_dir()
    assert tabs(cells[3]) == [] and "Not yet recorded on a GPU." in cells[3].astext()
