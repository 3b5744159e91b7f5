"""The recorded GPU runs (runs/<machine>/) against the stored chapter notebooks.

Without a GPU this proves that what nbval compares is hardware-neutral: every
stored output that nbval would check must equal, under nbval's own comparison
and tests/sanitize.cfg, what the same cell printed on the recorded GPU machine.
Cells are paired by name (hardware cells) or by equal source. Cells whose
source changed since the recording are skipped and counted, and so are cells
whose stored output changed since the recording for a reason that is not the
hardware: it differs from the output stored at the recorded commit (git),
e.g. a cell printing the source of a function edited since. A cell whose
stored output is the one stored then, but not the recording's, is a real
hardware difference and fails.
"""
from __future__ import annotations

import copy
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest
from nbval.plugin import IPyNbFile

from booktools import i18n, runs
from booktools.ext import recorded_runs as ext

ROOT = Path(__file__).resolve().parent.parent
try:  # a folder under runs/ that is no recording fails test_a_recording_exists
    RUNS, RUNS_ERROR = runs.runs(), None
except ValueError as error:
    RUNS, RUNS_ERROR = [], str(error)
CHAPTER_NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))
NbvalComparison = runs.NbvalComparison


def test_nbval_skip_keys_are_nbvals_own(request):
    # What a real nbval collector of a chapter skips (this run has --nbval,
    # not --nbdime): the comparison of recordings must skip exactly that.
    collector = IPyNbFile.from_parent(request.session, path=CHAPTER_NOTEBOOKS[0])
    assert NbvalComparison.SKIP_COMPARE == collector.skip_compare


@dataclass
class Neutrality:
    """One chapter against one run; cells numbered as nbval numbers them."""
    failures: list = field(default_factory=list)        # (cell, why)
    compared: int = 0                                    # cells whose output was compared
    changed_source: list = field(default_factory=list)  # skipped: it or the code above changed
    changed_output: list = field(default_factory=list)  # skipped: stored output changed
    unrecorded: list = field(default_factory=list)      # no recorded cell at all


def neutrality_failures(chapter_nb, recorded_nb, comparison: NbvalComparison,
                        base=None) -> Neutrality:
    """Compare one chapter's stored notebook with a recording of it.

    ``base`` is the chapter as stored at the recorded commit; where it is None
    (or lacks the cell), every compared cell whose output differs fails.
    """
    chapter_cells = runs.code_cells(chapter_nb)
    recorded_cells = runs.code_cells(recorded_nb)
    matches = runs.pair_cells(chapter_cells, recorded_cells)
    result = Neutrality()
    for index, cell in enumerate(chapter_cells):
        if not runs.nbval_compares(cell):
            continue
        status, why = runs.cell_status(cell, matches.get(index), recorded_cells, base,
                                       comparison, above=chapter_cells[:index])
        if status == runs.UNRECORDED:
            result.unrecorded.append(index)
        elif status in (runs.STALE_SOURCE, runs.STALE_ABOVE):  # another program ran
            result.changed_source.append(index)
        elif status == runs.OUTPUT_CHANGED:
            result.changed_output.append(index)
        else:
            result.compared += 1
            if status in (runs.RECORDED_ERROR, runs.HARDWARE):
                result.failures.append((index, why))
    return result


@pytest.mark.parametrize("run", RUNS, ids=[r.machine for r in RUNS])
@pytest.mark.parametrize("chapter", CHAPTER_NOTEBOOKS, ids=[p.stem for p in CHAPTER_NOTEBOOKS])
def test_stored_outputs_hold_on_the_recorded_machine(chapter, run):
    """nbval's comparison of each stored notebook against the recorded run passes."""
    recorded = run.notebooks.get(chapter.stem)
    if recorded is None:
        pytest.skip(f"{run.machine} has no recording of {chapter.stem}")
    base = runs.notebook_at(run.meta["commit"], chapter.stem)
    assert base is not None, (f"no chapters/{chapter.name} at the recorded commit "
                              f"{run.meta['commit']} in git (a shallow clone?)")
    nb = nbformat.read(chapter, as_version=4)
    if sum(map(runs.nbval_compares, runs.code_cells(nb))) <= 1:
        # A page whose only code is the install cell (the summary) prints
        # nothing a GPU could change.
        pytest.skip(f"{chapter.stem} has no code cell besides the install cell")
    result = neutrality_failures(nb, recorded, NbvalComparison(), base)
    print(f"{chapter.stem} vs {run.machine}: {result.compared} cells compared, "
          f"{len(result.changed_source)} skipped (source changed since the recording: "
          f"{result.changed_source}), {len(result.changed_output)} skipped (output changed "
          f"since the recording: {result.changed_output}), {len(result.unrecorded)} with "
          f"no recorded cell {result.unrecorded}")
    assert result.compared > 0
    assert not result.failures, (
        f"{len(result.failures)} cell(s) of {chapter.name} (numbered as nbval numbers them) "
        f"print something else on {run.meta['label']} (recorded {run.meta['date']}) than on "
        f"the build machine, whose output is unchanged since the recording:\n"
        + "\n\n".join(f"Cell {i}: {why}" for i, why in result.failures))


def test_a_recording_exists():
    assert RUNS_ERROR is None, RUNS_ERROR
    assert RUNS, "runs/ holds no recorded run (runs/<machine>/run.json)"


@pytest.mark.parametrize("run", RUNS, ids=[r.machine for r in RUNS])
def test_recording_is_well_formed(run):
    """run.json complete, every notebook a chapter's, executed, errors only where
    tagged, names unique."""
    assert runs.check_run(run) == []


@pytest.mark.parametrize("run", RUNS, ids=[r.machine for r in RUNS])
def test_the_recorded_commits_own_notebooks_fail_where_the_recording_differs(run):
    """With the notebooks stored at the recorded commit as the current ones, the
    check fails on exactly the cells whose output nbval would reject, although
    their stored output is unchanged: the baseline hides no hardware difference."""
    comparison = NbvalComparison()
    for chapter, recorded in run.notebooks.items():
        base = runs.notebook_at(run.meta["commit"], chapter)
        assert base is not None, f"no chapters/{chapter}.ipynb at {run.meta['commit']}"
        result = neutrality_failures(base, recorded, comparison, base)
        assert result.changed_source == [] and result.changed_output == [], chapter
        pairs = runs.pair_cells(runs.code_cells(base), runs.code_cells(recorded))
        rejected = [i for i, cell in enumerate(runs.code_cells(base))
                    if runs.nbval_compares(cell) and i in pairs
                    and comparison.differs(cell.outputs,
                                           runs.code_cells(recorded)[pairs[i].recorded].outputs)]
        assert [i for i, _ in result.failures] == rejected, chapter


# Cells whose stored output does not hold on the H100 recording (at 03da82f,
# 2026-11-27): none. The recording at a4a08a8 had one, performance's cell 7,
# which printed which memory counters the machine has; that line went into
# a hardware cell. The planted-difference tests above show that differences
# are found.
H100_DIFFERENCES = {}


@pytest.mark.skipif("nvidia-h100" not in [r.machine for r in RUNS], reason="no H100 run")
def test_the_h100s_differences_are_found():
    run = next(r for r in RUNS if r.machine == "nvidia-h100")
    found = {}
    for chapter, recorded in run.notebooks.items():
        base = runs.notebook_at(run.meta["commit"], chapter)
        failures = neutrality_failures(base, recorded, NbvalComparison(), base).failures
        if failures:
            found[chapter] = [i for i, _ in failures]
    assert found == H100_DIFFERENCES


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
    """A notebook of executed code cells: (source, outputs, tags[, name]) each."""
    book = nbformat.v4.new_notebook()
    for source, outputs, tags, *name in cells:
        cell = nbformat.v4.new_code_cell(source, execution_count=1, outputs=outputs)
        cell.metadata["tags"] = tags
        if name:
            cell.metadata["name"] = name[0]
        book.cells.append(cell)
    return book


def test_pairing_by_name_survives_moves_edits_and_new_cells():
    hw = ["hardware"]
    recorded = _nb([("setup()", [], []), ("a()", [], hw, "a"), ("b()", [], hw, "b"),
                    ("c()", [], hw, "c"), ("plain()", [], [])])
    # b and a swapped, c edited, a new named cell first, a plain cell moved.
    chapter = _nb([("new()", [], hw, "new"), ("setup()", [], []), ("b()", [], hw, "b"),
                   ("a()", [], hw, "a"), ("plain()", [], []), ("c(1)", [], hw, "c")])
    pairs = runs.pair_cells(runs.code_cells(chapter), runs.code_cells(recorded))
    assert pairs == {1: runs.Match(0, True), 2: runs.Match(2, True), 3: runs.Match(1, True),
                     4: runs.Match(4, True), 5: runs.Match(3, False)}
    # An unnamed cell of equal source never takes the recording a named cell
    # claims; unclaimed, it pairs by source (a notebook from before names).
    twin = _nb([("a()", [], []), ("a()", [], hw, "a")])
    assert runs.pair_cells(runs.code_cells(twin), runs.code_cells(recorded)) == {
        1: runs.Match(1, True)}
    unnamed = _nb([("a()", [], [])])
    assert runs.pair_cells(runs.code_cells(unnamed), runs.code_cells(recorded)) == {
        0: runs.Match(1, True)}
    # Trailing whitespace is not a change.
    assert runs.pair_cells(runs.code_cells(_nb([("c()  \n", [], hw, "c")])),
                           runs.code_cells(recorded)) == {0: runs.Match(3, True)}


PRINTED = 'print(f"{m.label}: {rate(m)}, {share_of_peak(rate(m), device)}")  # per second'


@pytest.mark.parametrize("edited, current", [
    # The same program: a line split for 80 columns, a comment reworded or gone.
    ('print(f"{m.label}: {rate(m)}, "\n      f"{share_of_peak(rate(m), device)}")', True),
    ('# FLOP/s\nprint(f"{m.label}: {rate(m)}, {share_of_peak(rate(m), device)}")', True),
    # Another program, though it prints the same; another argument; another text.
    ('share = share_of_peak(rate(m), device)\nprint(f"{m.label}: {rate(m)}, {share}")', False),
    ('print(f"{m.label}: {rate(m)}, {share_of_peak(rate(m), device, 1)}")', False),
    ('print(f"{m.label}: {rate(m)}; {share_of_peak(rate(m), device)}")', False),
    # IPython's syntax is read as IPython runs it: a comment line beside a magic is
    # layout, another magic or argument is another program.
    ("%timeit f()", False),
])
def test_a_recording_stays_current_while_its_cell_is_the_same_program(edited, current):
    hw = ["hardware"]
    recorded = _nb([(PRINTED, [], hw, "rate")])
    chapter = _nb([(edited, [], hw, "rate")])
    assert runs.pair_cells(runs.code_cells(chapter), runs.code_cells(recorded)) == {
        0: runs.Match(0, current)}


def test_a_cell_that_is_not_plain_python_is_current_while_its_text_is_the_same():
    magic = _nb([("%timeit f()", [], ["hardware"], "rate")])
    assert runs.pair_cells(runs.code_cells(magic), runs.code_cells(magic)) == {
        0: runs.Match(0, True)}


@pytest.mark.parametrize("edited, same", [
    ("# 每张 GPU 一行\n!nvidia-smi -L", True),   # a translated comment line
    ("!nvidia-smi -L  # 每张 GPU 一行", False),   # a comment inside the magic is its argument
    ("!nvidia-smi", False),
    ("%pip install -q d2lgpu\n!nvidia-smi -L", False),
])
def test_ipython_syntax_is_compared_as_ipython_runs_it(edited, same):
    assert runs.same_program("# one line per GPU\n!nvidia-smi -L", edited) is same


GPUS = 'def gpus():\n    """All GPUs, or [CPU] if there is none."""\n    return [CPU]\n'


@pytest.mark.parametrize("original, edited, same", [
    # Editions translate docstrings: a function's, a class's and its method's, a cell's.
    (GPUS, 'def gpus():\n    """所有 GPU；没有 GPU 时为 [CPU]。"""\n    return [CPU]\n', True),
    ('class A:\n    """A class."""\n\n    async def f(self):\n        """A method."""\n',
     'class A:\n    """Uma classe."""\n\n    async def f(self):\n        """Um método."""\n', True),
    ('"""The cell."""\nx = 1', '"""セル。"""\nx = 1', True),
    # Every other string is the program: assigned, printed, second in a body, an
    # f-string, a cell's lone string (IPython shows it), a docstring inside a child
    # program written from a string.
    ('doc = "All GPUs"', 'doc = "所有 GPU"', False),
    ('print("All GPUs")', 'print("所有 GPU")', False),
    ('def f():\n    """One."""\n    """Two."""\n', 'def f():\n    """One."""\n    """二。"""\n', False),
    ('def f():\n    f"""{x} GPUs."""\n', 'def f():\n    f"""{x} 个 GPU。"""\n', False),
    ('"All GPUs"', '"所有 GPU"', False),
    ('child = """\ndef f():\n    \'\'\'All GPUs.\'\'\'\n"""\nrun(child)',
     'child = """\ndef f():\n    \'\'\'所有 GPU。\'\'\'\n"""\nrun(child)', False),
])
def test_a_translated_docstring_is_the_same_program(original, edited, same):
    assert runs.same_program(original, edited) is same


def test_a_hardware_cell_without_a_name_or_with_a_taken_name_is_refused(tmp_path):
    hw = ["hardware"]
    nb = _nb([("a()", [], hw), ("b()", [], hw, "twice"), ("c()", [], [], "twice"),
              ("d()", [], hw, "Not_A_Name")])
    problems = "\n".join(runs.name_problems(nb, "toy.ipynb"))
    assert "code cell 0 is tagged hardware but has no name" in problems
    assert "code cells 1 and 2 are both named 'twice'" in problems
    assert "code cell 3 has name 'Not_A_Name'" in problems
    assert runs.name_problems(_nb([("a()", [], hw, "a"), ("b()", [], [])]), "ok") == []
    # Recording refuses such a chapter before executing anything.
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    nbformat.write(_nb([("a()", [], hw)]), chapters / "toy.ipynb")
    with pytest.raises(SystemExit, match="no name"):
        runs.record("toy-gpu", None, chapters=chapters, root=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


def _toy_run(tmp_path, recorded: dict, meta=None) -> runs.Run:
    folder = tmp_path / "runs" / "toy-gpu"
    folder.mkdir(parents=True)
    meta = meta or {"label": "NVIDIA Toy", "gpus": ["NVIDIA Toy 80GB"], "gpu_count": 1,
                    "torch": "9.9", "cuda": "13", "python": "3", "driver": "1",
                    "date": "2026-01-02", "commit": "abc1234", "recorded_with": "a test"}
    (folder / "run.json").write_text(json.dumps(meta))
    for chapter, nb in recorded.items():
        nbformat.write(nb, folder / f"{chapter}.ipynb")
    return runs.read_run(folder)


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
    book = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("gpu(9)", execution_count=None)
    cell.outputs = [nbformat.v4.new_output("error", ename="RuntimeError", evalue="no", traceback=[])]
    cell.metadata["execution"] = {"iopub.execute_input": "2026-11-23T08:00:00Z"}
    book.cells.append(cell)
    book.cells.append(nbformat.v4.new_code_cell("a()", execution_count=2, metadata={"name": "x"}))
    book.cells.append(nbformat.v4.new_code_cell("b()", execution_count=3, metadata={"name": "x"}))
    run = _toy_run(tmp_path, {"nochapter": book},
                   meta={"label": "X", "gpus": ["A", "B"], "gpu_count": 1,
                         "date": "23.11.2026", "commit": "main"})
    problems = "\n".join(runs.check_run(run, tmp_path / "chapters"))
    for expected in ["'torch' missing", "'driver' missing", "gpu_count 1 but 2 GPU names",
                     "not YYYY-MM-DD", "'main' is not a hash", "no chapter chapters/nochapter.md",
                     "code cell 0 was not executed", "raised RuntimeError but is not tagged",
                     "volatile cell metadata 'execution'", "code cells 1 and 2 are both named 'x'"]:
        assert expected in problems


def test_write_run_stores_a_clean_run_and_refuses_an_incomplete_one(tmp_path):
    meta = {"label": "GPU", "gpus": ["G"], "gpu_count": 1, "torch": "2", "cuda": "13",
            "python": "3", "driver": "1", "date": "2026-11-23", "commit": "abc1234",
            "recorded_with": "a test"}
    nb = _nb([("a()", [_stream("1\n")], ["hardware"], "a")])
    nb.cells[0].metadata["execution"] = {"iopub.execute_input": "2026-11-23T08:00:00Z"}
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "toy.md").write_text("")
    folder = runs.write_run("gpu", {"toy": nb}, meta, root=tmp_path / "runs")
    run = runs.read_run(folder)
    assert runs.check_run(run, tmp_path / "chapters") == []
    assert runs.cell_name(run.notebooks["toy"].cells[0]) == "a"
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["gpu"]


def test_a_machine_name_that_is_no_folder_name_is_refused(capsys):
    for command in (["stale", "../up"], ["record", "GPU_1"]):
        with pytest.raises(SystemExit) as stopped:
            runs.main(command)
        assert stopped.value.code == 2
        assert "machine name" in capsys.readouterr().err, command


def test_statuses_tell_earlier_versions_and_changed_outputs_from_hardware(tmp_path):
    hw, ignore = ["hardware"], ["hardware", "nbval-ignore-output"]
    # b, edited, comes last: an edited cell stales the recordings below it too.
    chapter = _nb([("a()", [_stream("cpu\n")], hw, "a"),
                   ("show()", [_stream("def f(x, y):\n")], hw, "show"),
                   ("t()", [_stream("12 ms, cpu\n")], ignore, "t"), ("plain()", [], []),
                   ("b(1)", [_stream("x\n")], hw, "b"), ("new()", [], hw, "new")])
    nbformat.write(chapter, tmp_path / "toy.ipynb")
    recorded = _nb([("a()", [_stream("cuda:0\n")], hw, "a"),
                    ("show()", [_stream("def f(x):\n")], hw, "show"),
                    ("t()", [_stream("3 ms, cuda:0\n")], ignore, "t"), ("plain()", [], []),
                    ("b(0)", [_stream("x\n")], hw, "b")])
    base = _nb([("a()", [_stream("cpu\n")], hw), ("show()", [_stream("def f(x):\n")], hw),
                ("t()", [_stream("14 ms, cpu\n")], ignore), ("plain()", [], []),
                ("b(0)", [_stream("x\n")], hw)])
    run = runs.Run("toy-gpu", tmp_path, {"commit": "abc1234"}, {"toy": recorded})
    # The stored notebook at the recorded commit, as git would give it.
    runs.notebook_at.cache_clear()
    original = runs.notebook_at
    try:
        runs.notebook_at = lambda commit, chapter, root=None: base
        statuses = {runs.cell_name(cell): status
                    for _, _, cell, status, _ in runs.hardware_statuses(run, tmp_path)}
        stale = runs.stale_cells(run, tmp_path)
    finally:
        runs.notebook_at = original
    assert statuses == {"a": runs.HARDWARE, "show": runs.OUTPUT_CHANGED,
                        "t": runs.NOT_COMPARED, "b": runs.STALE_SOURCE, "new": runs.UNRECORDED}
    assert stale == ["toy: show (its stored output changed since the recording)",
                     "toy: b (recorded from an earlier version)", "toy: new (not recorded)"]


def test_baseline_tells_changed_output_from_a_hardware_difference():
    """Same source everywhere; the notebook stored at the recorded commit decides."""
    cells = ["same()", "shows_source()", "device()", "unbased()"]
    stored = _nb([(c, [_stream(out)], []) for c, out in zip(
        cells, ["1\n", "def f(x, y):\n", "cpu\n", "cpu\n"])])
    recorded = _nb([(c, [_stream(out)], []) for c, out in zip(
        cells, ["1\n", "def f(x):\n", "cuda:0\n", "cuda:0\n"])])
    base = _nb([(c, [_stream(out)], []) for c, out in zip(
        cells[:3], ["1\n", "def f(x):\n", "cpu\n"])])
    result = neutrality_failures(stored, recorded, NbvalComparison(), base)
    assert result.compared == 3 and result.changed_output == [1]
    # Cell 2: the CPU output is unchanged, the GPU's differs; cell 3: no base cell, strict.
    assert [i for i, _ in result.failures] == [2, 3]
    assert "compared strictly" in result.failures[1][1]
    strict = neutrality_failures(stored, recorded, NbvalComparison())
    assert [i for i, _ in strict.failures] == [1, 2, 3] and strict.changed_output == []


def test_an_untagged_error_on_the_gpu_fails_and_edited_cells_are_skipped():
    error = nbformat.v4.new_output("error", ename="AcceleratorError", evalue="x", traceback=[])
    stored = _nb([("x()", [_stream("ok\n")], []), ("y(1)", [_stream("1\n")], [], "y"),
                  ("z()", [_stream("cpu\n")], ["nbval-ignore-output"])])
    recorded = _nb([("x()", [error], []), ("y(0)", [_stream("2\n")], [], "y"),
                    ("z()", [_stream("cuda\n")], ["nbval-ignore-output"])])
    result = neutrality_failures(stored, recorded, NbvalComparison(), recorded)
    assert [i for i, _ in result.failures] == [0]
    assert "AcceleratorError" in result.failures[0][1]
    assert (result.compared, result.changed_source, result.unrecorded) == (1, [1], [])


# --- the website's tabs (booktools.ext.recorded_runs) on a doctree, without a build ---

def _page(nb, docname="chapters/toy"):
    """The doctree myst-nb makes of nb's code cells (source, output as text)."""
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document
    document = new_document(f"{docname}.ipynb", get_default_settings(Parser))
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        node = nodes.container(nb_element="cell_code", cell_index=index,
                               cell_metadata=dict(cell.metadata), classes=["cell"])
        node += nodes.container("", nodes.literal_block(cell.source, cell.source),
                                nb_element="cell_code_source", classes=["cell_input"])
        node += nodes.container("", nodes.literal_block(text, text),
                                nb_element="cell_code_output", classes=["cell_output"])
        document += node
    return document


def _printed(cell) -> str:
    """All a recorded cell printed (its streams), as one text."""
    return "".join(str(o.get("text", "")) for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream")


def _tabs_of(document, run, srcdir, nb, chapter, language="en"):
    """Apply the transform; return {cell name: [(tab label, tab text), ...]}."""
    from types import SimpleNamespace

    from docutils import nodes
    (srcdir / "chapters").mkdir(exist_ok=True)
    nbformat.write(nb, srcdir / "chapters" / f"{chapter}.ipynb")
    app = SimpleNamespace(recorded_runs=[run], recorded_runs_images=str(srcdir / "images"),
                          srcdir=str(srcdir), config=SimpleNamespace(language=language))
    document.settings.env = SimpleNamespace(app=app, docname=f"chapters/{chapter}")
    ext.RecordedRunsTransform(document).apply()
    shown = {}
    for cell in document.findall(nodes.container):
        if cell.get("nb_element") == "cell_code" and runs.is_hardware(
                {"metadata": cell["cell_metadata"]}):
            items = [n for n in cell.findall(nodes.container)
                     if n.get("design_component") == "tab-item"]
            shown[cell["cell_metadata"]["name"]] = (
                [(item[0].astext(), item[1].astext()) for item in items] or cell.astext())
    return shown


@pytest.mark.skipif("nvidia-h100" not in [r.machine for r in RUNS], reason="no H100 run")
def test_tabs_follow_names_in_a_copy_of_a_chapter_with_moved_edited_and_new_cells(tmp_path):
    """In a copy of tensors: a new hardware cell, two cells swapped, one edited,
    one renamed. Every tab shows the recording of its own cell, and only that."""
    run = next(r for r in RUNS if r.machine == "nvidia-h100")
    nb = nbformat.read(ROOT / "chapters" / "tensors.ipynb", as_version=4)
    recorded = runs.named_cells(run.notebooks["tensors"])
    position = {c.metadata.get("name"): i for i, c in enumerate(nb.cells)}
    i, j = position["tensor-on-gpu"], position["free-memory"]
    nb.cells[i], nb.cells[j] = nb.cells[j], nb.cells[i]
    nb.cells[position["device-report"]].source += "\nprint('edited')"
    nb.cells[position["copy-timings"]].metadata["name"] = "copy-timings-renamed"
    new = nbformat.v4.new_code_cell("print(torch.cuda.is_available())", execution_count=1,
                                    metadata={"tags": ["hardware"], "name": "brand-new"},
                                    outputs=[_stream("False\n")])
    nb.cells.insert(position["device-report"], new)
    shown = _tabs_of(_page(nb, "chapters/tensors"), run, tmp_path, nb, "tensors")

    assert {"brand-new", "copy-timings-renamed", "tensor-on-gpu"} <= set(shown)
    for name, tabs in shown.items():
        if name not in recorded:
            # New or renamed: its recording is not this cell's.
            assert "Not yet recorded on a GPU." in tabs, name
            continue
        assert [label for label, _ in tabs][0] == "CPU (book’s output)", name
        assert len(tabs) == 2 and tabs[1][0].startswith(run.tab_label), name
        first = (_printed(recorded[name]).strip().splitlines() or [""])[0]
        assert first in tabs[1][1], f"{name} shows another recording"
        # No other cell's whole printed text (a line two cells both print proves nothing).
        own = _printed(recorded[name])
        others = [n for n, c in recorded.items() if n != name and _printed(c).strip()
                  and _printed(c) not in own and _printed(c) in tabs[1][1]]
        assert not others, f"{name} shows the recording of {others}"
    assert "earlier version" in shown["device-report"][1][1]
    assert "print(device_report())" in shown["device-report"][1][1]
    assert "earlier version" not in shown["tensor-on-gpu"][1][1]
    # A recording is shown nowhere once no cell has its name: the renamed copy-timings.
    text = _printed(recorded["copy-timings"])
    assert "copy-timings" not in shown and text.strip()
    assert not any(text in tab for tabs in shown.values() if isinstance(tabs, list)
                   for _, tab in tabs[1:])


def test_site_tabs_current_stale_and_unrecorded(tmp_path):
    png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
           "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")
    hw = ["hardware"]
    recorded = _nb([("setup()", [], []), ("print(device)", [_stream("cuda:0\n")], hw, "device"),
                    ("plot(old=True)", [nbformat.v4.new_output(
                        "display_data", data={"image/png": png, "text/plain": "<Figure>"})],
                     hw, "plot")])
    run = _toy_run(tmp_path, {"toy": recorded})
    chapter = _nb([("setup()", [], []), ("print(device)", [_stream("cpu\n")], hw, "device"),
                   ("plot(old=False)", [_stream("<Figure>")], hw, "plot"),
                   ("brand_new()", [_stream("new\n")], hw, "new")])
    shown = _tabs_of(_page(chapter), run, tmp_path, chapter, "toy")
    assert [label for label, _ in shown["device"]][0] == "CPU (book’s output)"
    assert shown["device"][1][0].startswith("Toy")
    assert shown["device"][0][1] == "cpu\n" and shown["device"][1][1].endswith("cuda:0\n")
    assert "NVIDIA Toy 80GB · PyTorch 9.9 · January 2, 2026" in shown["device"][1][1]
    assert "abc1234" not in shown["plot"][1][1]
    assert "earlier version" in shown["plot"][1][1] and "plot(old=True)" in shown["plot"][1][1]
    assert "Not yet recorded on a GPU." in shown["new"]
    assert (tmp_path / "images" / "toy-gpu").is_dir()


def test_a_contributed_tab_names_its_date_and_who_recorded_it(tmp_path):
    """A reader's recording shows like a lent machine's, naming them where run.json has
    recorded_by (notebooks/record.ipynb), in the page's language."""
    hw = ["hardware"]
    meta = {"label": "NVIDIA T4 (Colab)", "gpus": ["Tesla T4"], "gpu_count": 1,
            "torch": "2.9", "cuda": "12.6", "python": "3", "driver": "1", "date": "2026-11-28",
            "commit": "abc1234", "recorded_with": "a test", "recorded_by": "ada"}
    run = _toy_run(tmp_path, {"toy": _nb([("print(device)", [_stream("cuda:0\n")], hw,
                                           "device")])}, meta)
    chapter = _nb([("print(device)", [_stream("cpu\n")], hw, "device")])
    shown = _tabs_of(_page(chapter), run, tmp_path, chapter, "toy")
    assert shown["device"][1][0].startswith("T4 (Colab)")
    assert "Tesla T4 · PyTorch 2.9 · November 28, 2026 · recorded by ada" in shown["device"][1][1]
    del run.meta["recorded_by"]
    shown = _tabs_of(_page(chapter), run, tmp_path, chapter, "toy")
    assert "recorded by" not in shown["device"][1][1]


def test_a_recorded_tab_shows_what_a_cell_printed_in_parts_as_one_block(tmp_path):
    """As nb_merge_streams (_config.yml) shows the build's own output."""
    from docutils import nodes
    hw = ["hardware"]
    recorded = _nb([("train()", [_stream("epoch 1\n"), _stream("epoch 2\n"),
                                 _stream("done\n")], hw, "train")])
    run = _toy_run(tmp_path, {"toy": recorded})
    chapter = _nb([("train()", [_stream("epoch 1\nepoch 2\ndone\n")], hw, "train")])
    document = _page(chapter)
    _tabs_of(document, run, tmp_path, chapter, "toy")
    tab = next(n for n in document.findall(nodes.container)
               if n.get("design_component") == "tab-item" and "Toy" in n[0].astext())
    printed = [b.astext() for b in tab.findall(nodes.literal_block) if "stream" in b["classes"]]
    assert printed == ["epoch 1\nepoch 2\ndone\n"]
    assert len(recorded.cells[0].outputs) == 3  # the recording itself is left as it is


# --- files a hardware cell writes (runs/<machine>/artifacts/), kept and linked ---

def test_record_keeps_the_files_named_hardware_cells_write(tmp_path, monkeypatch, capsys):
    """A real kernel runs a toy chapter: what each named hardware cell writes in
    the chapters' folder is kept under its name; what other cells write, what
    no cell touched, hidden files and files over the size limit are not."""
    hw = ["hardware"]
    chapters = tmp_path / "chapters"
    (chapters / "outputs").mkdir(parents=True)
    (chapters / "toy.md").write_text("")
    (chapters / "outputs" / "old.json").write_text("[1]")
    (chapters / "outputs" / "untouched.json").write_text("[]")
    cells = [
        ("from pathlib import Path\nPath('plain.txt').write_text('not hardware')", []),
        ("Path('outputs/trace.json').write_text('{\"traceEvents\": []}')\n"
         "Path('.hidden').write_text('x')", hw, "trace"),
        ("Path('outputs/old.json').write_text('[1, 2]')", hw, "rewrite"),
        ("Path('outputs/big.bin').write_bytes(bytes(2000))", hw, "big"),
        ("Path('unnamed.txt').write_text('a hardware cell without a name')", hw),
        ("print('writes nothing')", hw, "quiet"),
    ]
    nb = _nb([(source, [], tags, *name) for source, tags, *name in cells])
    for cell in nb.cells:
        cell.execution_count = None
    nb.cells[4].metadata["tags"] = []  # record refuses unnamed hardware cells
    nbformat.write(nb, chapters / "toy.ipynb")
    monkeypatch.setattr(runs, "ARTIFACT_MAX_BYTES", 1000)

    assert runs.record("toy-gpu", "Toy", chapters=chapters, root=tmp_path / "runs") == 0
    run = runs.read_run(tmp_path / "runs" / "toy-gpu")
    kept = {name: [p.name for p in run.artifacts("toy", name)]
            for name in ("trace", "rewrite", "big", "quiet")}
    assert kept == {"trace": ["trace.json"], "rewrite": ["old.json"], "big": [], "quiet": []}
    assert run.artifacts("toy", "trace")[0].read_text() == '{"traceEvents": []}'
    assert run.artifacts("toy", "rewrite")[0].read_text() == "[1, 2]"
    assert sorted(p.name for p in (run.folder / runs.ARTIFACTS / "toy").iterdir()) == [
        "rewrite", "trace"]
    err = capsys.readouterr().err
    assert "cell 'big': outputs/big.bin has 2000 bytes, more than 1000: not kept" in err
    assert runs.check_run(run, chapters) == []

    # Recording again replaces the files: a cell that now writes nothing keeps none.
    nb.cells[1].source = "print('no trace this time')"
    nbformat.write(nb, chapters / "toy.ipynb")
    assert runs.record("toy-gpu", "Toy", chapters=chapters, root=tmp_path / "runs") == 0
    run = runs.read_run(run.folder)
    assert run.artifacts("toy", "trace") == []
    assert [p.name for p in run.artifacts("toy", "rewrite")] == ["old.json"]


def test_check_run_flags_files_of_no_cell_and_files_too_large(tmp_path, monkeypatch):
    recorded = _nb([("trace()", [_stream("ok\n")], ["hardware"], "trace")])
    run = _toy_run(tmp_path, {"toy": recorded})
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "toy.md").write_text("")
    files = run.folder / runs.ARTIFACTS
    for relative in ["toy/trace/trace.json", "toy/gone/x.json", "other/trace/y.json",
                     "toy/trace/deeper/z.json", "toy/loose.json"]:
        (files / relative).parent.mkdir(parents=True, exist_ok=True)
        (files / relative).write_text("{}")
    (files / "toy" / "trace" / "big.bin").write_bytes(bytes(50))
    monkeypatch.setattr(runs, "ARTIFACT_MAX_BYTES", 10)
    problems = "\n".join(runs.check_run(run, tmp_path / "chapters"))
    for expected in ["artifacts/other: no recording of chapter 'other'",
                     "artifacts/toy/gone: the recording of toy has no cell named 'gone'",
                     "artifacts/toy/trace/deeper: a folder inside a cell's files",
                     "artifacts/toy/loose.json: not in artifacts/<chapter>/<cell name>/",
                     "artifacts/toy/trace/big.bin: 50 bytes, more than 10"]:
        assert expected in problems
    assert "trace.json" not in problems


def test_a_tab_links_the_files_its_cell_wrote(tmp_path):
    from docutils import nodes
    from sphinx import addnodes
    hw = ["hardware"]
    recorded = _nb([("trace()", [_stream("wrote trace.json\n")], hw, "trace"),
                    ("plain()", [_stream("no files\n")], hw, "plain")])
    run = _toy_run(tmp_path, {"toy": recorded})
    target = run.folder / runs.ARTIFACTS / "toy" / "trace"
    target.mkdir(parents=True)
    (target / "trace.json").write_bytes(bytes(1536))
    (target / "snapshot.pickle").write_bytes(bytes(812))
    chapter = _nb([("trace()", [_stream("wrote trace.json\n")], hw, "trace"),
                   ("plain()", [_stream("no files\n")], hw, "plain")])
    document = _page(chapter)
    shown = _tabs_of(document, run, tmp_path, chapter, "toy")
    assert "Files this cell wrote there: snapshot.pickle (812 B), trace.json (1.5 KiB)" \
        in shown["trace"][1][1]
    assert "Files this cell wrote there" not in shown["plain"][1][1]
    assert "Files this cell wrote there" not in shown["trace"][0][1]  # the build's own tab
    links = [(n["reftarget"], n.astext()) for n in document.findall(addnodes.download_reference)]
    assert links == [("/runs/toy-gpu/artifacts/toy/trace/snapshot.pickle", "snapshot.pickle"),
                     ("/runs/toy-gpu/artifacts/toy/trace/trace.json", "trace.json")]
    assert all(isinstance(n[0], nodes.literal)
               for n in document.findall(addnodes.download_reference))


@pytest.mark.slow
def test_a_built_page_serves_the_files_for_download(tmp_path):
    """A small Sphinx build (myst-nb and this extension, in Japanese) of a
    chapter whose recorded cell wrote a file: the tab's link leads to a copy
    of that file in the built site, after the edition's own words."""
    import re
    import subprocess
    import sys
    hw = ["hardware"]
    src = tmp_path / "src"
    (src / "chapters").mkdir(parents=True)
    (src / "conf.py").write_text(
        "extensions = ['myst_nb', 'booktools.ext.recorded_runs']\n"
        "root_doc = 'chapters/toy'\nlanguage = 'ja'\nnb_execution_mode = 'off'\n"
        "exclude_patterns = ['chapters/*.md', 'runs', '_build']\n")
    chapter = _nb([("trace()", [_stream("wrote outputs/trace.json\n")], hw, "trace")])
    chapter.cells.insert(0, nbformat.v4.new_markdown_cell("# Toy"))
    chapter.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                      "language": "python"}
    nbformat.write(chapter, src / "chapters" / "toy.ipynb")
    (src / "chapters" / "toy.md").write_text("")
    run = _toy_run(src, {"toy": _nb([("trace()", [_stream("wrote outputs/trace.json\n")],
                                      hw, "trace")])})
    kept = run.folder / runs.ARTIFACTS / "toy" / "trace" / "trace.json"
    kept.parent.mkdir(parents=True)
    kept.write_text('{"traceEvents": []}')
    out = tmp_path / "html"
    build = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "-q",
                            str(src), str(out)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    page = (out / "chapters" / "toy.html").read_text()
    assert i18n.language("ja").ui["artifacts"] in page  # the edition's own words
    hrefs = re.findall(r'<a class="reference download internal"[^>]*href="([^"]+)"', page)
    assert len(hrefs) == 1 and hrefs[0].endswith("/trace.json"), hrefs
    assert (out / "chapters" / hrefs[0]).resolve().read_text() == '{"traceEvents": []}'


@pytest.mark.parametrize("code", [lang.code for lang in i18n.languages()])
def test_a_recorded_plots_alt_text_reads_as_one_phrase_in_every_edition(code):
    # A translated alt text ends with a full stop of its own language ("。"
    # in Chinese and Japanese); the machine then follows in that language's
    # form, not after ", " (which read "…。, 記録環境: …" on the ja pages).
    meta = {"label": "NVIDIA H100", "torch": "2.11.0", "date": "2026-05-01"}
    template, locale = i18n.language(code).ui["recorded_alt"], i18n.language(code).sphinx
    for alt in ("Two curves.", "两条曲线。", "2 本の曲線。"):
        text = ext.recorded_alt(template, alt, meta, locale)
        assert alt.rstrip(".。") in text
        assert not any(mark in text for mark in (".,", "。,", "。，", "。（", ".（", ".("))
        assert meta["label"] in text and meta["torch"] in text
        assert {"en": "May 1, 2026", "zh-CN": "2026年5月1日", "ja": "2026年5月1日",
                "pt-BR": "1 de maio de 2026"}[code] in text  # the date as its readers write it


@pytest.mark.parametrize("sphinx, code", [("en", None), ("pt_BR", "pt-BR"), ("ja", "ja")])
def test_a_recorded_plot_that_carries_its_data_shows_in_the_pages_language(
        tmp_path, sphinx, code):
    from base64 import b64decode

    from d2lgpu import plots
    hw = ["hardware"]
    data, metadata = plots.roofline({"x + y": (1 / 12, 2e9), "A @ A": (170.7, 1e12)},
                                       2.4e10)._repr_mimebundle_()
    shown = nbformat.v4.new_output("execute_result", data=data, metadata=metadata,
                                   execution_count=1)
    run = _toy_run(tmp_path, {"toy": _nb([("roofline(points)", [shown], hw, "plot")])})
    chapter = _nb([("roofline(points)", [_stream("<plot>")], hw, "plot")])
    _tabs_of(_page(chapter), run, tmp_path, chapter, "toy", sphinx)
    image, = (tmp_path / "images" / "toy-gpu").glob("*.png")
    expected = plots.redraw(metadata, code)[0] if code else data["image/png"]
    assert image.read_bytes() == b64decode(expected)
    assert (image.read_bytes() == b64decode(data["image/png"])) == (code is None)


# --- recording never loses a recording ---

def _recorded(tmp_path, gpus) -> Path:
    """runs/toy-gpu/ recorded on ``gpus``, with a file of a cell."""
    meta = {"label": "GPU", "gpus": gpus, "gpu_count": len(gpus), "torch": "2", "cuda": "13",
            "python": "3", "driver": "1", "date": "2026-11-23", "commit": "abc1234",
            "recorded_with": "a test"}
    folder = runs.write_run("toy-gpu", {"toy": _nb([("a()", [_stream("old\n")], ["hardware"], "a")])},
                            meta, root=tmp_path / "runs")
    return folder


def _toy_chapter(tmp_path, source="print('new')", name="a") -> Path:
    """chapters/toy.{md,ipynb}: one unexecuted hardware cell of ``source``, named ``name``."""
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    (chapters / "toy.md").write_text("")
    nb = _nb([(source, [], ["hardware"], name)])
    nb.cells[0].execution_count = None
    nbformat.write(nb, chapters / "toy.ipynb")
    return chapters


@pytest.mark.parametrize("here", [[], ["NVIDIA Other GPU"], ["NVIDIA H100 80GB HBM3"] * 2])
def test_record_refuses_to_replace_a_recording_of_other_gpus(tmp_path, monkeypatch, here):
    folder = _recorded(tmp_path, ["NVIDIA H100 80GB HBM3"])
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    chapters = _toy_chapter(tmp_path)
    facts = {"gpus": here, "gpu_count": len(here), "torch": "2", "cuda": "13", "python": "3",
             "driver": ""}
    monkeypatch.setattr(runs, "_machine_facts", lambda: facts)
    with pytest.raises(SystemExit, match=r"record: refused: .*toy-gpu was recorded on "
                                         r"NVIDIA H100 80GB HBM3.*--replace"):
        runs.record("toy-gpu", None, chapters=chapters, root=tmp_path / "runs")
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
    # Told explicitly, it replaces the recording.
    assert runs.record("toy-gpu", "Toy", chapters=chapters, root=tmp_path / "runs",
                       replace=True) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["run.json", "toy.ipynb"]
    assert json.loads((folder / "run.json").read_text())["gpus"] == here


def test_record_replaces_a_recording_of_the_same_gpus_or_of_none(tmp_path, monkeypatch):
    chapters = _toy_chapter(tmp_path)
    for recorded, here in [(["NVIDIA H100 80GB HBM3"], ["NVIDIA H100 80GB HBM3"]), ([], [])]:
        folder = _recorded(tmp_path, recorded)
        monkeypatch.setattr(runs, "_machine_facts", lambda: {
            "gpus": here, "gpu_count": len(here), "torch": "2", "cuda": "", "python": "3",
            "driver": ""})
        assert runs.record("toy-gpu", None, chapters=chapters, root=tmp_path / "runs") == 0
        cells = runs.code_cells(runs.read_run(folder).notebooks["toy"])
        assert cells[0].outputs[0]["text"] == "new\n"


def test_an_interrupted_write_leaves_the_previous_recording(tmp_path, monkeypatch):
    folder = _recorded(tmp_path, ["G"])
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    meta = json.loads((folder / "run.json").read_text())

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(nbformat, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        runs.write_run("toy-gpu", {"toy": _nb([("b()", [], [])])}, meta,
                       root=tmp_path / "runs")
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["toy-gpu"]


def test_a_recording_being_written_is_not_a_run(tmp_path):
    _recorded(tmp_path, ["G"])
    (tmp_path / "runs" / "toy-gpu").rename(tmp_path / "runs" / ".toy-gpu.new")
    assert runs.runs(tmp_path / "runs") == []


def test_chapters_run_in_a_kernel_of_this_interpreter():
    # Not whatever a "python3" kernelspec points at: run.json reports this torch.
    from jupyter_client.kernelspec import KernelSpecManager

    from booktools import kernels
    with kernels.kernel_caches():
        spec = KernelSpecManager().get_kernel_spec(kernels.KERNEL_NAME)
    assert spec.argv[:3] == [sys.executable, "-m", "ipykernel_launcher"]


def test_each_chapter_kernel_has_fresh_caches_and_is_shut_down_when_done(tmp_path, monkeypatch):
    # A kernel left running would hold its GPU memory while the next chapter runs;
    # one reading the machine's IPython or matplotlib settings could print otherwise.
    chapters = _toy_chapter(tmp_path, "import os\nprint(os.getpid(), os.environ['IPYTHONDIR'])",
                            "pid")
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "the-users"))
    monkeypatch.setattr(runs, "_machine_facts", lambda: {
        "gpus": [], "gpu_count": 0, "torch": "2", "cuda": "", "python": "3", "driver": ""})
    assert runs.record("toy-cpu", None, chapters=chapters, root=tmp_path / "runs") == 0
    cell = runs.code_cells(runs.read_run(tmp_path / "runs" / "toy-cpu").notebooks["toy"])[0]
    pid, ipython = cell.outputs[0]["text"].split()
    assert int(pid) != os.getpid()
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid), 0)
    assert Path(ipython).parent.name.startswith("book-kernel-") and not Path(ipython).exists()
    assert os.environ["IPYTHONDIR"] == str(tmp_path / "the-users")


# --- a folder that is no recording ---

@pytest.mark.parametrize("damage", ["no run.json", "no gpus"])
def test_record_refuses_a_folder_that_does_not_say_what_recorded_it(tmp_path, monkeypatch,
                                                                    damage):
    folder = _recorded(tmp_path, ["NVIDIA H100 80GB HBM3"])
    if damage == "no run.json":
        (folder / "run.json").unlink()
    else:
        (folder / "run.json").write_text('{"label": "NVIDIA H100"}')
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    chapters = _toy_chapter(tmp_path)
    monkeypatch.setattr(runs, "_machine_facts", lambda: {
        "gpus": [], "gpu_count": 0, "torch": "2", "cuda": "", "python": "3", "driver": ""})
    with pytest.raises(SystemExit, match=r"record: refused: .*toy-gpu.*--replace"):
        runs.record("toy-gpu", None, chapters=chapters, root=tmp_path / "runs")
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
    assert runs.record("toy-gpu", None, chapters=chapters, root=tmp_path / "runs",
                       replace=True) == 0
    assert json.loads((folder / "run.json").read_text())["gpus"] == []


def test_a_folder_without_run_json_is_an_error_for_stale(tmp_path, monkeypatch, capsys):
    _recorded(tmp_path, ["G"])
    orphan = tmp_path / "runs" / "nvidia-t4"
    orphan.mkdir()
    shutil.copy(tmp_path / "runs" / "toy-gpu" / "toy.ipynb", orphan)
    with pytest.raises(ValueError, match=r"nvidia-t4/: a folder under runs/ without run\.json"):
        runs.runs(tmp_path / "runs")
    monkeypatch.setattr(runs, "RUNS", tmp_path / "runs")
    # stale's runs() reads the default root bound at import.
    monkeypatch.setattr(runs, "runs", functools.partial(_real_runs, tmp_path / "runs"))
    for command in (["stale"], ["stale", "nvidia-t4"]):
        assert runs.main(command) == 2
        err = capsys.readouterr().err
        assert "nvidia-t4/: a folder under runs/ without run.json" in err, command
        assert len(err.splitlines()) == 1


_real_runs = runs.runs


def test_a_run_json_without_gpus_is_an_error_not_a_cpu_recording(tmp_path):
    folder = _recorded(tmp_path, ["G"])
    (folder / "run.json").write_text('{"label": "NVIDIA H100"}')
    with pytest.raises(ValueError, match=r"run\.json: the recorded run of toy-gpu names no "
                                         r"'gpus'"):
        runs.runs(tmp_path / "runs")


def test_the_site_build_warns_of_a_folder_without_run_json(tmp_path, monkeypatch):
    from types import SimpleNamespace
    _recorded(tmp_path, ["G"])
    (tmp_path / "runs" / "nvidia-t4").mkdir()
    said = []
    monkeypatch.setattr(ext.LOGGER, "warning", lambda message, **kwargs: said.append(message))
    app = SimpleNamespace(srcdir=str(tmp_path), outdir=str(tmp_path / "out"),
                          config=SimpleNamespace(language="en"))
    ext.load_runs(app)
    assert len(said) == 1 and "nvidia-t4/: a folder under runs/ without run.json" in said[0]


# --- staleness follows the data: the code above a hardware cell ---

def _edited_networks(tmp_path, old, new) -> Path:
    """chapters/networks.ipynb as the H100 recorded it, one line of a code cell edited,
    alone in a folder (today's chapter may differ from the recording in more ways)."""
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    run = next(r for r in RUNS if r.machine == "nvidia-h100")
    # notebook_at's is cached: a copy to edit
    nb = copy.deepcopy(runs.notebook_at(run.meta["commit"], "networks"))
    [cell] = [c for c in runs.code_cells(nb) if old in c.source]
    assert not runs.is_hardware(cell)
    cell.source = cell.source.replace(old, new)
    nbformat.write(nb, chapters / "networks.ipynb")
    return chapters


@pytest.mark.skipif("nvidia-h100" not in [r.machine for r in RUNS], reason="no H100 run")
def test_a_change_above_a_hardware_cell_stales_its_recording(tmp_path):
    """The fault run's S1: LazyLinear(1) -> (4) in a plain cell changes what
    net-on-gpu prints; its H100 recording is then stale."""
    run = next(r for r in RUNS if r.machine == "nvidia-h100")
    chapters = _edited_networks(tmp_path, "nn.LazyLinear(1))", "nn.LazyLinear(4))")
    found = runs.stale_cells(run, chapters)
    assert "networks: net-on-gpu (code cell 3 above it changed since the recording)" in found


@pytest.mark.skipif("nvidia-h100" not in [r.machine for r in RUNS], reason="no H100 run")
def test_a_comment_above_a_hardware_cell_is_no_change(tmp_path):
    run = next(r for r in RUNS if r.machine == "nvidia-h100")
    chapters = _edited_networks(tmp_path, "nn.LazyLinear(1))", "nn.LazyLinear(1))  # one")
    assert runs.stale_cells(run, chapters) == []


def test_earlier_change_names_the_cell_or_the_added_one():
    recorded = runs.code_cells(_nb([("a = 1", [], []), ("f(a)", [], ["hardware"], "f")]))
    match = runs.Match(1, True)
    same = runs.code_cells(_nb([("a = (\n    1)  # one", [], [])]))
    assert runs.earlier_change(same, match, recorded) is None
    edited = runs.code_cells(_nb([("a = 2", [], [], "setup")]))
    assert runs.earlier_change(edited, match, recorded) == \
        "code cell 0 (setup) above it changed since the recording"
    added = runs.code_cells(_nb([("a = 1", [], []), ("print(a)", [], [])]))
    assert runs.earlier_change(added, match, recorded) == \
        "a code cell above it was added since the recording"


def test_the_page_says_the_code_above_changed(tmp_path):
    hw = ["hardware"]
    recorded = _nb([("x = 1", [], []), ("print(x)", [_stream("1\n")], hw, "show")])
    run = _toy_run(tmp_path, {"toy": recorded})
    chapter = _nb([("x = 4", [], []), ("print(x)", [_stream("4\n")], hw, "show")])
    shown = _tabs_of(_page(chapter), run, tmp_path, chapter, "toy")
    assert "Recorded when the code above this cell was different." in shown["show"][1][1]
    assert "The cell as it was then" not in shown["show"][1][1]
    same = _nb([("x = 1  # one", [], []), ("print(x)", [_stream("1\n")], hw, "show")])
    shown = _tabs_of(_page(same), run, tmp_path, same, "toy")
    assert "Recorded" not in shown["show"][1][1]


# --- a signal stops a record ---

def _alive(pid: int) -> bool:
    """Whether a process runs (a zombie nobody reaped does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_whole_record_with_no_kernel_left_and_nothing_written(tmp_path,
                                                                                  signum):
    """The fault run's C1: nbclient's handlers made a signal one failed chapter, and
    the record went on with the next one in a new kernel."""
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    pid_file, second = tmp_path / "kernel.pid", tmp_path / "second-ran"
    for chapter, source in [
            ("a", f"import os, pathlib, time\npathlib.Path({str(pid_file)!r}).write_text("
                  f"str(os.getpid()))\ntime.sleep(300)"),
            ("b", f"import pathlib\npathlib.Path({str(second)!r}).write_text('yes')")]:
        (chapters / f"{chapter}.md").write_text("")
        nbformat.write(_nb([(source, [], ["hardware"], "cell")]), chapters / f"{chapter}.ipynb")
    script = ("import sys\nfrom pathlib import Path\nfrom booktools import runs\n"
              "runs._machine_facts = lambda: {'gpus': [], 'gpu_count': 0, 'torch': '2', "
              "'cuda': '', 'python': '3', 'driver': ''}\n"
              f"sys.exit(runs.record('toy-cpu', None, chapters=Path({str(chapters)!r}), "
              f"root=Path({str(tmp_path / 'runs')!r})))\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not pid_file.is_file() or not pid_file.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
        kernel = int(pid_file.read_text())
        sent = time.monotonic()
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert time.monotonic() - sent < 15
    assert proc.returncode == 128 + signum, (out, err)
    assert err.strip().splitlines()[-1] == (f"record: stopped by {signal.Signals(signum).name}; "
                                            "nothing stored")
    deadline = time.monotonic() + 10
    while _alive(kernel) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(kernel)
    assert not second.exists() and not (tmp_path / "runs" / "toy-cpu").exists()


def test_a_kernel_says_nothing_of_its_transport(tmp_path, capfd):
    # ipykernel's "running over TCP without encryption" warning, once per chapter.
    from booktools import kernels
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("print('ran')"))
    kernels.execute(nb, tmp_path, 60)
    assert nb.cells[0].outputs[0]["text"] == "ran\n"
    assert "without encryption" not in capfd.readouterr().err


def test_a_record_killed_by_sigkill_between_its_renames_half_writes_nothing(tmp_path):
    """As the fault run did it: Path.rename kills the process after the first rename;
    the next record replaces the previous recording, left whole in .<m>.old."""
    folder = _recorded(tmp_path, ["NVIDIA H100 80GB HBM3"])
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    script = ("import json, os, signal, pathlib, nbformat\nfrom booktools import runs\n"
              "rename = pathlib.Path.rename\n"
              "def once(self, target):\n"
              "    rename(self, target)\n"
              "    os.kill(os.getpid(), signal.SIGKILL)\n"
              "pathlib.Path.rename = once\n"
              f"root = pathlib.Path({str(tmp_path / 'runs')!r})\n"
              "meta = json.loads((root / 'toy-gpu' / 'run.json').read_text())\n"
              "runs.write_run('toy-gpu', {'toy': nbformat.v4.new_notebook()}, meta, root=root)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    root = tmp_path / "runs"
    assert sorted(p.name for p in root.iterdir()) == [".toy-gpu.new", ".toy-gpu.old"]
    old = root / ".toy-gpu.old"
    assert {p.name: p.read_bytes() for p in old.iterdir() if p.is_file()} == before
    assert runs.runs(root) == []
    runs.write_run("toy-gpu", {"toy": nbformat.v4.new_notebook()}, json.loads(before["run.json"]),
                   root=root)
    assert sorted(p.name for p in root.iterdir()) == ["toy-gpu"]


def test_an_editions_earlier_cell_shows_its_comments_where_the_code_is_the_same():
    then = ("# warm-up: the first product loads libraries\n"
            "X = torch.ones(3)  # on the CPU\n\n"
            "for _ in range(3):\n    Y = X @ X  # a product\nprint(Y)")
    now = ("# 预热：第一次乘法会加载库\n"
           "X = torch.ones(3)  # 在 CPU 上\n\n"
           "for _ in range(5):\n    Y = X @ X  # 乘法\nprint(Y.item())")
    assert ext.with_comments_of(then, now).splitlines() == [
        "# 预热：第一次乘法会加载库", "X = torch.ones(3)  # 在 CPU 上", "",
        "for _ in range(3):", "    Y = X @ X  # 乘法", "print(Y)"]
    # where the tokenizer fails, the cell as it was
    assert ext.with_comments_of('s = """\n# x', '# y') == 's = """\n# x'
