"""booktools.claims: the prose's conclusions held to the stored and recorded outputs.

A toy chapter (chapters/toy.md, chapters/toy.ipynb, chapters/claims/toy.yml)
and a toy recording (runs/toy-gpu/) in a temporary folder; then the book's
own claims against its own outputs and recordings.
"""
from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import nbformat
import pytest

from booktools import claims, runs

ROOT = Path(__file__).resolve().parent.parent
HEAD = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                      text=True).stdout.strip()
SOURCE = "compare(one_big, many_small)"
CPU_OUT = ("one copy: 55.4 µs ± 1.65 µs (reference)\n"
           "1024 copies: 2.19 ms ± 43.9 µs (0.0253x as fast)\n")
GPU_OUT = ("one copy: 379 µs ± 79.4 µs (reference)\n"
           "1024 copies: 13.7 ms ± 64.2 µs (0.0277x as fast)\n"
           "noisy: the spread of \"one copy\" is 42% of its median\n")
REVERSED = ("one copy: 13.7 ms ± 64.2 µs (reference)\n"
            "1024 copies: 379 µs ± 79.4 µs (36.1x as fast)\n")
MD = """# Toy

Some words.

On the toy GPU one copy beat the 1024 rows: **copy few, large pieces.**
On the CPU too.
"""
CLAIM = """\
# a comment
- says: "copy few, large pieces"
  cell: copy-timings
  faster: [one copy, 1024 copies]
  by: [2, null]
"""


def _nb(source: str, output: str, name: str = "copy-timings"):
    book = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(source, execution_count=1, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text=output)])
    cell.metadata.update(tags=["hardware"], name=name)
    book.cells.append(cell)
    return book


def _book(tmp_path, claim=CLAIM, recorded=GPU_OUT, recorded_source=SOURCE, meta=None) -> Path:
    """A toy book: one chapter, its claims, and a recording of it on runs/toy-gpu/."""
    chapters = tmp_path / "chapters"
    (chapters / "claims").mkdir(parents=True)
    (chapters / "toy.md").write_text(MD, encoding="utf-8")
    nbformat.write(_nb(SOURCE, CPU_OUT), chapters / "toy.ipynb")
    (chapters / "claims" / "toy.yml").write_text(claim, encoding="utf-8")
    folder = tmp_path / "runs" / "toy-gpu"
    folder.mkdir(parents=True)
    meta = {"label": "NVIDIA Toy", "gpus": ["NVIDIA H100 80GB HBM3"], "gpu_count": 1,
            "torch": "2.9", "cuda": "13.0", "python": "3", "driver": "1",
            "compute_capability": ["9.0"], "date": "2026-11-28", "commit": HEAD, "recorded_with": "a test", **(meta or {})}
    (folder / "run.json").write_text(json.dumps(meta))
    if recorded is not None:
        nbformat.write(_nb(recorded_source, recorded), folder / "toy.ipynb")
    return tmp_path


def _check(root: Path) -> tuple[int, list[str], list[str]]:
    out, err = io.StringIO(), io.StringIO()
    status = claims.check(root, out=out, err=err)
    return status, out.getvalue().splitlines(), err.getvalue().splitlines()


def test_a_claim_that_holds_on_the_cpu_and_the_recording(tmp_path):
    status, out, err = _check(_book(tmp_path))
    assert (status, out, err) == (0, ["claims: 2 held, 0 unchecked, 0 contradicted"], [])


def test_reversing_the_recorded_comparison_fails_the_claim(tmp_path):
    status, out, _ = _check(_book(tmp_path, recorded=REVERSED))
    assert status == 1
    assert out == [
        'chapters/toy.md:5: claim "copy few, large pieces" (faster: one copy, 1024 copies; '
        'by: [2, null]) contradicted by runs/toy-gpu/toy cell copy-timings: speed-up 0.0277x',
        "claims: 1 held, 0 unchecked, 1 contradicted"]


def test_a_contradiction_in_a_noisy_output_says_so_and_still_fails(tmp_path):
    noisy = REVERSED + 'noisy: the spread of "1024 copies" is 30% of its median\n'
    status, out, _ = _check(_book(tmp_path, recorded=noisy))
    assert status == 1 and out[0].endswith("speed-up 0.0277x (noisy)")


def test_the_stored_cpu_output_is_checked_too(tmp_path):
    root = _book(tmp_path)
    nbformat.write(_nb(SOURCE, REVERSED), root / "chapters" / "toy.ipynb")
    # The recording now differs from the stored output in its source's output, but
    # nbval does not see that (times are sanitised); the CPU side contradicts.
    status, out, _ = _check(root)
    assert status == 1 and out[0].endswith(
        "contradicted by chapters/toy.ipynb cell copy-timings: speed-up 0.0277x")


def test_a_stale_recording_leaves_the_claim_unchecked_with_why(tmp_path, monkeypatch):
    root = _book(tmp_path, recorded=REVERSED, recorded_source="compare(one, many)")
    status, out, _ = _check(root)
    assert status == 0
    assert out == [
        'chapters/toy.md:5: claim "copy few, large pieces" (faster: one copy, 1024 copies; '
        'by: [2, null]) unchecked on runs/toy-gpu/toy cell copy-timings: recorded from '
        'an earlier version; its earlier recording contradicted: speed-up 0.0277x',
        "claims: 1 held, 1 unchecked, 0 contradicted"]
    # The helpers the cell calls changed since the recorded commit: unchecked too.
    root = _book(tmp_path / "b", recorded=REVERSED)
    monkeypatch.setattr(runs, "package_changes", lambda run, *a, **k: [
        "d2lgpu: timing.py (changed since the recorded commit abc1234)"])
    status, out, _ = _check(root)
    assert status == 0 and out[0].endswith(
        "unchecked on runs/toy-gpu/toy cell copy-timings: d2lgpu changed since the recorded "
        "commit (timing.py); its earlier recording contradicted: speed-up 0.0277x")
    # Never recorded: unchecked, not held.
    status, out, _ = _check(_book(tmp_path / "c", recorded=None))
    assert status == 0 and out[0].endswith("cell copy-timings: not recorded")


def test_a_label_only_a_stale_recording_lacks_is_no_declaration_error(tmp_path):
    # The cell now prints lines its earlier version, recorded on the GPU, did not.
    root = _book(tmp_path, claim=CLAIM + "  where: gpu\n", recorded="old: 1 ms\n",
                 recorded_source="compare(old_one)")
    status, out, _ = _check(root)
    assert status == 0 and out[0].endswith(
        "unchecked on runs/toy-gpu/toy cell copy-timings: recorded from an earlier version")


def test_an_output_without_the_lines_leaves_it_unchecked(tmp_path):
    status, out, _ = _check(_book(tmp_path, recorded="Skipped: no GPU here.\n"))
    assert status == 0 and out[0].endswith("printed no 'one copy:' line with a quantity")


@pytest.mark.parametrize("where, meta, checked", [
    ("any", {}, ["chapters/toy.ipynb", "runs/toy-gpu/toy"]),
    ("cpu", {}, ["chapters/toy.ipynb"]),
    ("gpu", {}, ["runs/toy-gpu/toy"]),
    ("cuda", {}, ["runs/toy-gpu/toy"]),
    ("mps", {}, []),
    ("toy-*", {}, ["runs/toy-gpu/toy"]),
    ('"cc>=9.0"', {}, ["runs/toy-gpu/toy"]),
    ('"cc>=10.0"', {}, []),
    ('"cc<9.0"', {"compute_capability": ["8.0"]}, ["runs/toy-gpu/toy"]),
    ("cpu", {"gpus": [], "gpu_count": 0, "cuda": ""}, ["chapters/toy.ipynb",
                                                        "runs/toy-gpu/toy"]),
])
def test_a_scope_picks_the_outputs_it_is_checked_against(tmp_path, where, meta, checked):
    root = _book(tmp_path, claim=CLAIM + f"  where: {where}\n", recorded=REVERSED, meta=meta)
    loaded = claims.load_claims(root / "chapters" / "claims" / "toy.yml", root)
    results = claims.check_claims(loaded, root)
    judged = [r.place.name for r in results if r.status != "unchecked"]
    assert judged == checked
    if not checked:
        assert [r.detail for r in results] == [f"no output in scope {where.strip(chr(34))!r}"]


def test_an_unknown_compute_capability_leaves_it_unchecked(tmp_path):
    root = _book(tmp_path, claim=CLAIM + '  where: "cc>=8.0"\n',
                 meta={"compute_capability": None})
    status, out, _ = _check(root)
    assert status == 0 and out[0].endswith("unchecked on runs/toy-gpu/toy cell "
                                           "copy-timings: compute capability unknown")


BAD = [
    (CLAIM.replace("cell: copy-timings", "cell: copy-timing"), 3,
     "unknown cell 'copy-timing' in chapters/toy.md"),
    (CLAIM.replace("faster:", "fastr:"), 4, "unknown relation or key 'fastr'"),
    (CLAIM + "  slower: [1024 copies, one copy]\n", 6,
     "2 relations (faster, slower): a claim has exactly one of"),
    (CLAIM.replace("  faster: [one copy, 1024 copies]\n", ""), 2, "no relation"),
    (CLAIM.replace("copy few, large pieces", "copy many"), 2,
     "says 'copy many' is found on no line of chapters/toy.md"),
    (CLAIM.replace("copy few, large pieces", "On the"), 2,
     "says 'On the' is found on 2 lines of chapters/toy.md"),
    (CLAIM + "  where: gpus\n", 6, "bad scope 'gpus': not any, cpu, gpu, cuda, mps"),
    (CLAIM + "  where: cc>8.x\n", 6, "bad scope 'cc>8.x'"),
    (CLAIM + "  where: [gpu]\n", 6, "scope ['gpu'] is not text"),
    (CLAIM.replace("1024 copies]", "2048 copies]"), 4,
     "label ['one copy', '2048 copies']: no output of cell 'copy-timings' in scope 'any'"),
    (CLAIM.replace("[one copy, 1024 copies]", "[one copy]"), 4, "faster: wants a list of two"),
    (CLAIM.replace("by: [2, null]", "by: 2"), 5, "by: 2 is not [lo, hi]"),
    (CLAIM.replace("by: [2, null]", "within: 0.1"), 5, "'within' does not go with faster"),
    (CLAIM + "  tolerance: -1\n", 6, "tolerance: -1 is not a number >= 0"),
    (CLAIM + "- says: [unclosed\n", 6, "not valid YAML"),
    ("says: copy few\n", 1, "a claims file is a list of claims"),
]


@pytest.mark.parametrize("text, line, message", BAD)
def test_a_malformed_declaration_is_one_line_naming_file_and_line(tmp_path, text, line,
                                                                    message):
    status, out, err = _check(_book(tmp_path, claim=text))
    assert status == 2 and out == [] and len(err) == 1
    assert err[0].startswith(f"chapters/claims/toy.yml:{line}: {message}"), err[0]


@pytest.mark.parametrize("text, value", [
    ("55.4 µs ± 1.65 µs", (55.4e-6, "time")), ("2.19 ms", (2.19e-3, "time")),
    ("13 us", (13e-6, "time")), ("4.00 MiB", (4 * 2**20, "size")), ("2 GB", (2e9, "size")),
    ("50.7 GiB/s", (50.7 * 2**30, "rate")), ("52.8 TFLOP/s", (52.8e12, "rate")),
    ("537 MFLOP/s", (537e6, "rate")), ("(36.2x)", (36.2, "ratio")),
    ("0.14x the CPU's", (0.14, "ratio")),
    ("65% of it", (0.65, "percent")), ("1024", (1024.0, "number")), ("0.46 s,", (0.46, "time")),
    ("no number", None),
])
def test_quantities_convert_to_base_units(text, value):
    found = claims.parse_quantity(text)
    assert found == value if value is None else (pytest.approx(found[0]) == value[0]
                                                 and found[1] == value[1])


def test_the_nth_quantity_of_a_line():
    assert claims.find_value("a: 0.46 s, 65% of it waiting\n", {"label": "a", "nth": 2}) == (
        0.65, "percent")
    assert claims.find_value("  n = 16: 2.49 µs\n", {"label": "n = 16", "nth": 1})[1] == "time"
    assert claims.find_value("b: 1 s\n", {"label": "a", "nth": 1}) is None


@pytest.mark.parametrize("relation, options, values, holds", [
    ("faster", {}, [(1.0, "time"), (2.0, "time")], True),
    ("faster", {"by": [3, None]}, [(1.0, "time"), (2.0, "time")], False),
    ("faster", {}, [(2.0, "rate"), (1.0, "rate")], True),
    ("slower", {}, [(2.0, "time"), (1.0, "time")], True),
    ("smaller", {}, [(1.0, "size"), (0.95, "size")], True),       # within 10% noise
    ("smaller", {}, [(1.0, "size"), (0.8, "size")], False),
    ("about", {}, [(1.0, "time"), (1.15, "time")], True),
    ("about", {"within": 0.1}, [(1.0, "time"), (1.15, "time")], False),
    ("ratio", {"between": [0.5, 1]}, [(0.64, "percent"), (1.0, "constant")], True),
    ("no_gain", {}, [(1.0, "time"), (1.05, "time")], True),
    ("no_gain", {}, [(1.0, "time"), (1.2, "time")], False),
    # a count of 0: smaller than 1, and a ratio of 0x
    ("smaller", {}, [(0.0, "number"), (1.0, "number")], True),
    ("ratio", {"between": [None, 0.01]}, [(0.0, "number"), (1.0, "constant")], True),
    ("ratio", {"between": [None, 0.01]}, [(1.0, "number"), (1.0, "constant")], False),
])
def test_relations(relation, options, values, holds):
    claim = claims.Claim(Path("x.yml"), 1, "x", "s", 1, "c", relation,
                         [{"label": str(i), "nth": 1} for i in range(len(values))], options)
    assert claims.evaluate(claim, values)[0] is holds


def test_compute_capability_from_run_json():
    assert claims.compute_capabilities({"compute_capability": ["7.5", "8.0"]}) == (7.5, 8.0)
    assert claims.compute_capabilities({"gpus": ["NVIDIA H100"]}) == ()
    assert claims.compute_capabilities({"compute_capability": ["9.x"]}) == ()


# The book's own claims against its own outputs and recordings. A
# contradiction here is a sentence of the prose that its measurement does not
# bear out: fix the prose (or the cell), never the claim.
def test_the_books_claims_hold_on_its_outputs_and_recordings():
    """python -m booktools.claims over the book: no contradiction, no malformed declaration."""
    loaded = [c for path in sorted((ROOT / "chapters" / "claims").glob("*.yml"))
              for c in claims.load_claims(path, ROOT)]  # DeclarationError: malformed
    found = claims.check_claims(loaded, ROOT)
    assert any(r.status == "held" for r in found), "no claim was checked at all"
    contradicted = [claims.format_result(r) for r in found if r.status == "contradicted"]
    assert not contradicted, "\n".join(contradicted)
