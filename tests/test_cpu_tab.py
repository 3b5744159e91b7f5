"""The CPU tab names the CPU its outputs were made on, as a GPU tab names its GPU.

``booktools.notebooks refresh`` records the machine in the notebook's
metadata (``stored_outputs``); booktools.ext.recorded_runs shows it first in
the CPU tab of every hardware cell, in each edition's words; a notebook
executed before that shows no such line.
"""
from __future__ import annotations

import nbformat
import pytest
from test_notebook_tools import MYST_HEADER
from test_recorded_runs import _nb, _page, _stream, _tabs_of, _toy_run

from booktools import i18n, notebooks

MACHINE = {"cpu": "AMD EPYC 7763 64-Core Processor", "threads": 2, "torch": "2.9.1+cpu"}
TINY = MYST_HEADER + """
# Tiny

```{code-cell} ipython3
print("ran")
```
"""


def _shown(tmp_path, machine=None, language="en"):
    hw = ["hardware"]
    run = _toy_run(tmp_path, {"toy": _nb([("print(device)", [_stream("cuda:0\n")], hw, "device")])})
    chapter = _nb([("print(device)", [_stream("cpu\n")], hw, "device")])
    if machine is not None:
        chapter.metadata[notebooks.MACHINE_KEY] = machine
    return _tabs_with_language(_page(chapter), run, tmp_path, chapter, language)


def _tabs_with_language(page, run, srcdir, nb, language):
    if language == "en":
        return _tabs_of(page, run, srcdir, nb, "toy")["device"]
    original = i18n.for_sphinx
    try:
        i18n.for_sphinx = lambda _language, *a, **k: original(language, *a, **k)
        return _tabs_of(page, run, srcdir, nb, "toy")["device"]
    finally:
        i18n.for_sphinx = original


def test_the_cpu_tab_names_the_cpu_threads_and_pytorch(tmp_path):
    (label, text), gpu = _shown(tmp_path, MACHINE)
    assert label == "CPU (book’s output)"
    assert text == "AMD EPYC 7763 64-Core Processor, 2 threads · PyTorch 2.9.1+cpu\n\ncpu\n"
    assert gpu[1].startswith("NVIDIA Toy 80GB · PyTorch 9.9")


CPU = "AMD EPYC 7763 64-Core Processor"


@pytest.mark.parametrize("language, label, line", [
    ("zh_CN", "CPU（随书输出）", f"{CPU}，2 个线程 · PyTorch 2.9.1+cpu"),
    ("ja", "CPU（本書の出力）", f"{CPU}、2 スレッド · PyTorch 2.9.1+cpu"),
    ("pt_BR", "CPU (saída do livro)", f"{CPU} com 2 threads · PyTorch 2.9.1+cpu"),
])
def test_every_edition_names_it_in_its_words(tmp_path, language, label, line):
    lang = i18n.for_sphinx(language)
    assert lang.ui["build_tab"] == label
    (shown_label, text), _ = _shown(tmp_path, MACHINE, language)
    assert (shown_label, text) == (label, line + "\n\ncpu\n")


@pytest.mark.parametrize("machine", [None, {"cpu": "AMD EPYC"}, "AMD EPYC"])
def test_a_notebook_without_the_machine_shows_the_output_alone(tmp_path, machine):
    (label, text), _ = _shown(tmp_path, machine)
    assert (label, text) == ("CPU (book’s output)", "cpu\n")


def test_refresh_records_the_machine(tmp_path):
    md = tmp_path / "tiny.md"
    md.write_text(TINY)
    ipynb = notebooks.refresh(md)
    facts = nbformat.read(ipynb, as_version=4).metadata[notebooks.MACHINE_KEY]
    assert facts == notebooks.machine()
    assert set(facts) == {"cpu", "threads", "torch"} and facts["threads"] >= 1
    assert notebooks.pair_problem(md) is None
