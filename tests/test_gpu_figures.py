"""Every GPU figure in the chapters' prose is a recorded output's or a datasheet's.

A figure measured on a GPU (a rate, time, size, ratio, share or count of
waits) must be quoted verbatim from a text output of a recorded run,
runs/<machine>/<chapter>.ipynb, in a sentence that names that machine; a
vendor's datasheet figure must be listed in tests/gpu_figures.yml with its
source. booktools.gpu_figures says what counts as prose, as a GPU figure and
as the same figure. So a new recording cannot leave the prose quoting an older
one's numbers, and no figure is typed from memory.
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import nbformat
import pytest

from booktools import gpu_figures as gf

ROOT = Path(__file__).resolve().parent.parent


def gpu_figures(markdown: str, chapter: str = "ch") -> list:
    return [f for f in gf.find_figures(textwrap.dedent(markdown), chapter) if f.is_gpu]


def keys(figures) -> list:
    return [f.key for f in figures]


# A recording: one machine, one cell's outputs.
RECORDED = {("NVIDIA H100", "H100", "NVIDIA H100 80GB HBM3"):
            "best: 52827.9 GFLOP/s\n.item() at every step: 5.24 ms (1.4x)\n"
            "one copy of 4.00 MiB: 368 µs (1.0x)\n79% of the H100 SXM FP32 peak\n"
            "waits reported by CUDA: 1001 per-step, 1 at the end\n"}
LISTED = {"datasheet": [{"chapter": "ch", "figures": ["80 GB", "1.6–4.8 TB/s"],
                         "vendor": "NVIDIA", "source": "NVIDIA H100 datasheet"}],
          "not_measured": []}


def problems(markdown: str, listed=None) -> list:
    return gf.check_figures(gpu_figures(markdown), RECORDED, listed or LISTED)


# --- the extractor -------------------------------------------------------

def test_code_cells_code_blocks_inline_code_and_front_matter_are_not_prose():
    text = """\
    ---
    note: 783.8 TFLOP/s on the GPU
    ---
    On the GPU `x = 783.8 TFLOP/s` and $t = 5 ms$ stay code and math.

    ```{code-cell} ipython3
    :tags: [hardware]
    print("on the GPU: 783.8 TFLOP/s")
    ```

    ```python
    gpu_rate = "783.8 TFLOP/s"
    ```
    """
    assert gpu_figures(text) == []


def test_exercises_solutions_admonitions_and_alt_texts_are_prose():
    text = """\
    ```{exercise} The GPU at 1.5 TFLOP/s
    :label: ex
    Time it on the GPU: 2.5 ms.
    ```

    ```{solution-start} ex
    :class: dropdown
    ```
    The H100 ran at 3.5 TFLOP/s.
    ```{solution-end}
    ```

    :::{note}
    A GPU took 4.5 ms.
    :::

    ```{code-cell} ipython3
    ---
    mystnb:
      image:
        alt: "A plot: the GPU reaches 6.5 TFLOP/s"
    ---
    plot()
    ```
    """
    assert keys(gpu_figures(text)) == ["1.5TFLOP/s", "2.5ms", "3.5TFLOP/s", "4.5ms",
                                       "6.5TFLOP/s"]


def test_line_numbers_and_sentences():
    text = "Intro line.\n\nThe CPU is slow. On the H100 it ran\nat 1.4x the speed.\n"
    [figure] = gpu_figures(text)
    assert (figure.line, figure.sentence) == (4, "On the H100 it ran at 1.4x the speed.")


def test_units_need_a_gpu_in_the_sentence_rates_do_not():
    text = """\
    A step took 5 ms and 1.4x as long; a copy moved 3 GB/s.

    On a CPU a step took 6 ms and 2.4x as long at 4 GB/s.

    On the GPU a step took 7 ms. Each wait cost 8 µs, 9% of it, 10 waits.
    The CPU took 11 ms.
    """
    assert keys(gpu_figures(text)) == ["3GB/s", "7ms", "8µs", "9%", "10waits"]


def test_ranges_lists_and_spellings():
    text = ("On the H100 copies ran at 7–54 GB/s, took 1.2 to 1.4 times as long, "
            "and 51.5 TFLOP/s with one setting, 399.5 with another and 783.8 in bfloat16 "
            "(PyTorch 2.11, 16 μs, 2 ×).")
    assert keys(gpu_figures(text)) == ["7GB/s", "54GB/s", "1.2x", "1.4x", "51.5TFLOP/s",
                                       "399.5TFLOP/s", "783.8TFLOP/s", "16µs", "2x"]


def test_a_number_ending_inline_math_before_a_unit_is_a_figure():
    text = r"On the H100 $\ell \approx 14$ µs and $n = 16$ steps; $2^{10}$ B."
    assert keys(gpu_figures(text)) == ["14µs"]


def test_a_link_target_names_no_machine():
    text = "The [CPU's notes](https://docs.pytorch.org/docs/stable/notes/cuda.html) say 5 ms."
    assert gf.find_figures(text)[0].about == "cpu"


def test_sizes_of_the_work_and_products_are_not_figures():
    text = ("On the GPU a 64 MiB copy, a 200 GiB request, a 24-byte tensor and a "
            "4096 × 4096 product ran; 2 MiB stayed reserved.")
    assert keys(gpu_figures(text)) == ["2MiB"]


# --- the matcher ---------------------------------------------------------

def test_a_recorded_figure_in_a_sentence_naming_the_machine_passes():
    assert problems("On the H100, `.item()` at every step took 1.4x as long.") == []
    assert problems("On an NVIDIA H100 one copy took 368 µs; 79% of the peak.") == []


def test_a_typed_figure_fails():
    [problem] = problems("On the NVIDIA H100 a product ran at 783.8 TFLOP/s.")
    assert problem.figure.key == "783.8TFLOP/s" and "no recorded output" in problem.why


def test_the_digits_must_be_the_same():
    # 52827.9 GFLOP/s is recorded; 52.8 TFLOP/s is the same speed typed anew.
    assert len(problems("On the H100 the best was 52.8 TFLOP/s.")) == 1
    # 1.4x is recorded: 11.4x, 1.45x and 4x are not.
    assert len(problems("On the H100: 11.4x, 1.45x and 4x.")) == 3


def test_a_recorded_figure_needs_the_machine_named():
    [problem] = problems("On a GPU, `.item()` at every step took 1.4x as long.")
    assert "does not name" in problem.why
    # ... in the sentence or its paragraph
    assert problems("This is the H100. On that GPU it took 1.4x as long.") == []


def test_a_datasheet_figure_passes_only_when_listed_and_its_vendor_named():
    text = "NVIDIA's datasheet gives the H100 80 GB; the A100 moves 1.6–4.8 TB/s."
    assert problems(text) == []
    unlisted = {"datasheet": [], "not_measured": []}
    assert [p.figure.key for p in problems(text, unlisted)] == ["80GB", "1.6TB/s", "4.8TB/s"]
    [problem] = problems("An H100 GPU holds 80 GB.")
    assert "name the vendor" in problem.why


def test_a_not_measured_figure_needs_its_context():
    listed = {"datasheet": [], "not_measured": [
        {"chapter": "ch", "figures": ["40 GB"], "context": "with 40 GB or more",
         "why": "a threshold"}]}
    assert problems("A GPU with 40 GB or more gets large sizes.", listed) == []
    assert len(problems("The GPU had 40 GB free.", listed)) == 1


def test_recorded_texts_read_run_json_and_every_text_output(tmp_path):
    run = tmp_path / "gpu-x"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"label": "NVIDIA X9", "gpus": ["NVIDIA X9 8GB"]}))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="1.5 ms\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": "'2.5 GB/s'"},
                               execution_count=1),
        nbformat.v4.new_output("error", ename="E", evalue="3.5 GiB free", traceback=[])])])
    nbformat.write(nb, run / "ch.ipynb")
    [(names, text)] = gf.recorded_texts(tmp_path).items()
    assert names == ("NVIDIA X9", "NVIDIA X9 8GB", "X9")
    assert all(s in text for s in ("1.5 ms", "2.5 GB/s", "3.5 GiB"))


def test_the_failure_message_says_where_and_what_to_do():
    message = gf.format_problems(problems("On the H100 it ran at 783.8 TFLOP/s."))
    assert "chapters/ch.md:1: 783.8 TFLOP/s: in no recorded output" in message
    assert "On the H100 it ran at 783.8 TFLOP/s." in message
    assert "tests/gpu_figures.yml" in message and "recorded run" in message


# --- the book ------------------------------------------------------------

def test_every_listed_figure_is_in_its_chapter():
    listed = gf.load_datasheet()
    figures = gf.chapter_figures()
    stale = [(section, entry["chapter"], written)
             for section, entries in listed.items() for entry in entries
             for written in entry["figures"]
             if not any(gf.listed_for(f, [dict(entry, figures=[written])]) for f in figures)]
    assert not stale, f"tests/gpu_figures.yml lists figures no chapter quotes: {stale}"


def test_every_gpu_figure_in_the_chapters_is_recorded_or_a_datasheets():
    problems_ = gf.check_book()
    if problems_:
        pytest.fail(f"{len(problems_)} GPU figure(s) neither recorded nor a datasheet's:\n"
                    + gf.format_problems(problems_), pytrace=False)



def test_an_alt_text_or_caption_is_read_at_its_own_line():
    text = ("Prose.\n\n```{code-cell} ipython3\n---\ntags: [hide-input]\nmystnb:\n  image:\n"
            "    alt: A plot of the H100 at 6.5 TFLOP/s\n  figure:\n"
            "    caption: The H100 at 7.5 TFLOP/s\n---\nplot()\n```\n")
    assert [(f.line, f.number) for f in gpu_figures(text)] == [(8, "6.5"), (10, "7.5")]
