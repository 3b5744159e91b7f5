"""The translated editions (booktools.i18n): English's structure, English's code and
outputs, and a lag that shows on the page but never fails a test."""
from __future__ import annotations

import re
import shutil
from types import SimpleNamespace

import nbformat
import pytest
import yaml

from booktools import i18n
from booktools.runs import same_program
from booktools.ext import languages as ext
from sphinx.errors import ConfigError

EDITIONS = [lang.code for lang in i18n.translations()]
CHAPTERS = i18n.english_chapters()


@pytest.mark.parametrize("chapter", CHAPTERS)
@pytest.mark.parametrize("code", EDITIONS)
def test_translation_has_englishs_structure(code, chapter):
    """Code cells (source, tags, names), labels, references, exercises and the
    hardware note as in English, and the notebook in step (booktools.i18n check)."""
    assert i18n.structure_problems(code, chapter) == []


def _without_images(outputs) -> list:
    return [{**o, "data": {k: v for k, v in o.get("data", {}).items() if k != "image/png"}}
            for o in outputs]


def _plotted(cell) -> bool:
    """Whether a cell shows a measured plot, its data in its output (d2lgpu.plots)."""
    from d2lgpu.plots import PLOT_DATA
    return any(PLOT_DATA in o.get("metadata", {}) for o in cell.get("outputs", []))


@pytest.mark.parametrize("chapter, name", [("measuring", "roofline-plot"),
                                           ("exercises", "rates-plot"),
                                           ("distributed", "loss-plot")])
def test_the_measured_plots_carry_their_data_so_each_edition_redraws_them(chapter, name):
    english = nbformat.read(i18n.CHAPTERS / f"{chapter}.ipynb", as_version=4)
    cell, = [c for c in english.cells if c.metadata.get("name") == name]
    assert _plotted(cell)  # the pairing test above then finds them redrawn


@pytest.mark.parametrize("chapter", CHAPTERS)
@pytest.mark.parametrize("code", EDITIONS)
def test_translated_notebook_has_englishs_code_and_outputs_and_its_own_text(code, chapter):
    english = nbformat.read(i18n.CHAPTERS / f"{chapter}.ipynb", as_version=4)
    translated = nbformat.read(i18n.notebook(code, chapter), as_version=4)
    pairs = list(zip(*[[c for c in nb.cells if c.cell_type == "code"]
                       for nb in (english, translated)]))
    assert len(pairs) == sum(c.cell_type == "code" for c in english.cells)
    for a, b in pairs:
        assert same_program(a.source, b.source), b.source  # comments may be translated
        assert (b.metadata.get("tags"), b.metadata.get("name")) == \
               (a.metadata.get("tags"), a.metadata.get("name"))
        if i18n.FIGURE_CODE.search(a.source) or _plotted(a):  # drawn again in its words
            assert _without_images(b.outputs) == _without_images(a.outputs)
            assert [o["data"]["image/png"] for o in b.outputs if "image/png" in o.get("data", {})] \
                != [o["data"]["image/png"] for o in a.outputs if "image/png" in o.get("data", {})]
            assert b.outputs == i18n.drawn_in(code, a)
        else:
            assert b.outputs == a.outputs
    prose = [c.source for c in english.cells if c.cell_type == "markdown"]
    translated_prose = [c.source for c in translated.cells if c.cell_type == "markdown"]
    assert translated_prose != prose, "the notebook holds the English text"
    assert translated.metadata.get("colab") == english.metadata.get("colab")


@pytest.fixture
def book(tmp_path):
    """A copy of devices in English and in zh-CN: (chapters folder, i18n folder)."""
    chapters, root = tmp_path / "chapters", tmp_path / "i18n"
    chapters.mkdir()
    for suffix in (".md", ".ipynb"):
        shutil.copy(i18n.CHAPTERS / f"devices{suffix}", chapters)
    shutil.copytree(i18n.I18N / "zh-CN" / "_snippets", root / "zh-CN" / "_snippets")
    (root / "zh-CN" / "chapters").mkdir(parents=True)
    for suffix in (".md", ".ipynb"):
        shutil.copy(i18n.notebook("zh-CN", "devices").with_suffix(suffix),
                    root / "zh-CN" / "chapters")
    # Current, whether or not the book's own translation is behind English today.
    i18n.stamp("zh-CN", ["devices"], chapters, root)
    return chapters, root


def _edit(path, old, new):
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


CODE = "torch.device('cpu'), torch.device('cuda'), torch.device('cuda:1')"


def test_an_english_prose_edit_is_a_lag_not_a_structure_problem(book):
    chapters, root = book
    assert i18n.structure_problems("zh-CN", "devices", chapters, root) == []
    assert not i18n.lags("zh-CN", "devices", chapters, root)
    _edit(chapters / "devices.md", "\n## ", "\nA new English sentence.\n\n## ")
    assert i18n.lags("zh-CN", "devices", chapters, root)
    assert i18n.structure_problems("zh-CN", "devices", chapters, root) == []
    i18n.stamp("zh-CN", ["devices"], chapters, root)  # the translator caught up
    assert not i18n.lags("zh-CN", "devices", chapters, root)
    assert i18n.structure_problems("zh-CN", "devices", chapters, root) == []


def test_an_english_code_edit_is_carried_over_by_sync(book):
    chapters, root = book
    new = CODE + ", torch.device('meta')"
    for suffix in (".md", ".ipynb"):  # as refresh.sh would leave them
        _edit(chapters / f"devices{suffix}", CODE, new)
    problems = i18n.structure_problems("zh-CN", "devices", chapters, root)
    # The file and line of the cell, counted from 1 as a reader counts, and the command.
    text = i18n.source("zh-CN", "devices", root).read_text()
    line = text[:text.index(CODE)].count("\n")  # the ```{code-cell} line above the code
    assert text.splitlines()[line - 1].startswith("```{code-cell}")
    number = text[:text.index(CODE)].count("```{code-cell}")
    assert problems == [f"i18n/zh-CN/chapters/devices.md:{line}: code cell {number} differs from "
                        "English's in its program: python -m booktools.i18n sync zh-CN copies "
                        "English's"]
    assert not i18n.lags("zh-CN", "devices", chapters, root)  # no prose changed
    heading = next(line for line in i18n.source("zh-CN", "devices", root).read_text().splitlines()
                   if line.startswith("# "))
    i18n.sync(["zh-CN"], chapters, root)
    assert i18n.structure_problems("zh-CN", "devices", chapters, root) == []
    text = i18n.source("zh-CN", "devices", root).read_text()
    assert new in text and heading in text  # English's code, the translated text


def test_a_translated_comment_is_kept_until_english_changes_the_program(book):
    chapters, root = book
    path = i18n.source("zh-CN", "devices", root)
    _edit(path, CODE, CODE + "  # 译注：同一个程序")
    # The same program: no structure problem, only its notebook is behind its .md.
    [problem] = i18n.structure_problems("zh-CN", "devices", chapters, root)
    assert "out of step with its .md" in problem
    i18n.sync(["zh-CN"], chapters, root)
    assert i18n.structure_problems("zh-CN", "devices", chapters, root) == []
    notebook = nbformat.read(i18n.notebook("zh-CN", "devices", root), as_version=4)
    assert any("# 译注：同一个程序" in c.source for c in notebook.cells if c.cell_type == "code")
    for suffix in (".md", ".ipynb"):  # English rewords a comment: the translation stays
        _edit(chapters / f"devices{suffix}", CODE, CODE + "  # reworded")
    i18n.sync(["zh-CN"], chapters, root)
    assert "# 译注：同一个程序" in path.read_text()
    new = CODE + ", torch.device('meta')"
    for suffix in (".md", ".ipynb"):  # English changes the program: English's cell comes over
        _edit(chapters / f"devices{suffix}", CODE + "  # reworded", new)
    i18n.sync(["zh-CN"], chapters, root)
    assert new in path.read_text() and "# 译注" not in path.read_text()


def test_sync_refuses_a_new_english_cell_and_writes_nothing(book):
    chapters, root = book
    _edit(chapters / "devices.md", "\n## ", "\n```{code-cell} ipython3\n1 + 1\n```\n\n## ")
    before = {p: p.read_bytes() for p in (root / "zh-CN" / "chapters").iterdir()}
    with pytest.raises(ValueError, match="13 code cells|place the new or removed cells"):
        i18n.sync(["zh-CN"], chapters, root)
    assert {p: p.read_bytes() for p in (root / "zh-CN" / "chapters").iterdir()} == before


def test_sync_refuses_an_english_notebook_with_unexecuted_cells_and_writes_nothing(book):
    # A cell without outputs (JupyterLab's "clear outputs", saved): sync would
    # copy that loss into every translation.
    chapters, root = book
    path = chapters / "devices.ipynb"
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    code[2].outputs, code[2].execution_count = [], None
    nbformat.write(nb, path)
    before = {p: p.read_bytes() for p in (root / "zh-CN" / "chapters").iterdir()}
    with pytest.raises(ValueError, match=r"nothing written.*\n.*chapters/devices.ipynb: code "
                       r"cells 3 have no stored outputs .*bash scripts/refresh.sh "
                       r"chapters/devices.md"):
        i18n.sync(["zh-CN"], chapters, root)
    assert {p: p.read_bytes() for p in (root / "zh-CN" / "chapters").iterdir()} == before


def test_a_translation_that_is_not_utf8_is_named_with_its_line(book):
    chapters, root = book
    path = i18n.source("zh-CN", "devices", root)
    text = path.read_text()
    line = text[:text.index("\n## ")].count("\n") + 2
    path.write_bytes(text.replace("\n## ", "\n## caf\xe9 ".replace("\xe9", "\udce9"), 1)
                     .encode("utf-8", "surrogateescape"))
    with pytest.raises(ValueError) as error:
        i18n.structure_problems("zh-CN", "devices", chapters, root)
    assert str(error.value) == (f"{path}:{line}: not UTF-8 (byte 0xe9): save the file as UTF-8")


def test_a_bad_code_cell_option_in_a_translation_is_named_with_its_line(book):
    chapters, root = book
    path = i18n.source("zh-CN", "devices", root)
    _edit(path, ":tags: [", ":tags: [[")
    text = path.read_text()
    line = text[:text.index(":tags: [[")].count("\n")  # the cell's first line
    with pytest.raises(ValueError, match=rf"devices.md:{line}: jupytext cannot read it .*"
                                         r"mend that cell's options"):
        i18n.structure_problems("zh-CN", "devices", chapters, root)


@pytest.mark.parametrize("args, said", [
    (["stamp", "xx", "devices"], "no edition 'xx'"),
    (["stamp", "en", "devices"], "i18n/en/chapters/devices.md does not exist"),
    (["stamp", "ja", "devices", "nosuch"], "i18n/ja/chapters/nosuch.md does not exist"),
])
def test_stamp_refuses_in_one_line_and_writes_nothing(args, said, capsys, monkeypatch):
    written = []
    monkeypatch.setattr(i18n, "_write", lambda *a: written.append(a))
    assert i18n.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("i18n: ") and said in err and len(err.strip().splitlines()) == 1
    assert written == []  # ja devices exists, but nothing is stamped before every name is checked


def test_stamp_refuses_a_translation_not_written_yet(book):
    chapters, root = book
    shutil.copy(i18n.CHAPTERS / "tensors.md", chapters)
    with pytest.raises(ValueError, match=r"i18n/zh-CN/chapters/tensors.md does not exist: "
                                         r"translate chapters/tensors.md into it first"):
        i18n.stamp("zh-CN", ["tensors"], chapters, root)


@pytest.mark.parametrize("old, new, expected", [
    ("(devices-choose)=\n", "", "labels differ"),
    (":name: choose-device", ":name: choose-a-device", "tags, name or options"),
    ("{ref}`tensors-device`", "{ref}`tensors-copying`", "references differ"),
    ("<!-- hardware-note:end -->", "!\n<!-- hardware-note:end -->", "hardware-note"),
    ("gpuType: T4", "gpuType: A100", "front matter differs"),
])
def test_structure_problems_name_what_differs(book, old, new, expected):
    chapters, root = book
    _edit(i18n.source("zh-CN", "devices", root), old, new)
    problems = i18n.structure_problems("zh-CN", "devices", chapters, root)
    assert any(expected in p for p in problems), problems


def test_a_stale_translated_notebook_is_found(book):
    chapters, root = book
    path = i18n.notebook("zh-CN", "devices", root)
    nb = nbformat.read(path, as_version=4)
    next(c for c in nb.cells if c.cell_type == "code" and c.outputs).outputs = []
    nbformat.write(nb, path)
    assert any("out of step" in p for p in i18n.structure_problems("zh-CN", "devices", chapters, root))


def test_the_editions_file_needs_english_first_and_every_word(tmp_path):
    english = {"code": "en", "sphinx": "en", "name": "English", "title": "T",
               "ui": {"switcher": "Other languages", "lag": ""}}
    other = {"code": "xx", "sphinx": "xx", "name": "X", "title": "T", "ui": {"switcher": "?"}}
    path = tmp_path / "languages.yml"
    path.write_text(yaml.safe_dump([english, other]))
    with pytest.raises(ValueError, match="xx lacks the ui words.*lag"):
        i18n.languages(path)
    path.write_text(yaml.safe_dump([other, english]))
    with pytest.raises(ValueError, match="must be English"):
        i18n.languages(path)


def test_a_stage_links_the_book_and_sets_the_edition(tmp_path):
    src = i18n.stage("ja", tmp_path)
    assert i18n.stage("ja", tmp_path) == src  # a second call changes nothing
    assert (src / "chapters").resolve() == (i18n.I18N / "ja" / "chapters").resolve()
    assert (src / "runs").resolve() == (i18n.ROOT / "runs").resolve()
    # The edition's output stays in its own folder (booktools.site puts the
    # editions together): no link into another edition's site.
    out = src.parent / "_build"
    assert out.is_dir() and not out.is_symlink() and not (out / "html").exists()
    config = yaml.safe_load((src / "_config.yml").read_text())
    ja = i18n.language("ja")
    assert config["sphinx"]["config"]["language"] == ja.sphinx
    assert config["repository"]["path_to_book"] == "i18n/ja"
    assert config["title"] == ja.title
    english = yaml.safe_load((i18n.ROOT / "_config.yml").read_text())
    assert config["sphinx"]["extra_extensions"] == english["sphinx"]["extra_extensions"]


SITE = "https://d2l-gpu-book.github.io/gpu-book/"


def _page(language: str, docname: str = "chapters/devices") -> dict:
    app = SimpleNamespace(config=SimpleNamespace(language=language, book_site_root=SITE))
    context = {"body": "<h1>x</h1>", "metatags": ""}
    ext.add_editions(app, docname, "page.html", context, None)
    return context


def test_a_page_declares_its_language_and_links_every_edition(monkeypatch):
    monkeypatch.setattr(i18n, "lags", lambda code, chapter, *a: False)
    zh = _page("zh_CN")
    assert zh["language"] == "zh-CN"
    for code, path in [("en", "chapters/devices.html"), ("zh-CN", "zh-CN/chapters/devices.html"),
                       ("ja", "ja/chapters/devices.html"),
                       ("pt-BR", "pt-BR/chapters/devices.html"),
                       ("x-default", "chapters/devices.html")]:
        assert f'<link rel="alternate" hreflang="{code}" href="{SITE}{path}">' in zh["metatags"]
    assert zh["body"].startswith('<nav class="language-switcher"')
    assert 'lang="zh-CN" aria-current="page"' in zh["body"]
    assert "translation-lag" not in zh["body"]
    english = _page("en")
    assert english["language"] == "en"
    assert 'href="../ja/chapters/devices.html"' in english["body"]
    assert _page("ja", "search")["body"] == "<h1>x</h1>"  # not a chapter: unchanged


@pytest.mark.parametrize("language, canonical_base", [("en", SITE), ("pt_BR", f"{SITE}pt-BR/")])
def test_each_edition_takes_its_own_address_under_the_sites(language, canonical_base):
    config = SimpleNamespace(language=language, html_baseurl=SITE.rstrip("/"))
    ext.site_addresses(None, config)
    assert (config.book_site_root, config.html_baseurl) == (SITE, canonical_base)
    with pytest.raises(ConfigError, match="html.baseurl in _config.yml must be the site's"):
        ext.site_addresses(None, SimpleNamespace(language="en", html_baseurl=""))


def test_a_lagging_translation_shows_a_banner_in_its_language(monkeypatch):
    monkeypatch.setattr(i18n, "lags", lambda code, chapter, *a: True)
    ja = _page("ja")
    words = i18n.language("ja").ui
    assert 'class="admonition warning translation-lag"' in ja["body"]
    assert words["lag"] in ja["body"]
    assert f'<a href="../../chapters/devices.html" hreflang="en" lang="en">{words["lag_link"]}</a>' \
        in ja["body"]
    assert "translation-lag" not in _page("en")["body"]  # English never lags


def test_each_edition_names_the_parts_of_the_toc_in_its_words(tmp_path):
    from booktools import book
    pages = book.toc_pages()
    for lang in i18n.languages():
        toc = yaml.safe_load(i18n.edition_toc(lang))
        captions = [part["caption"] for part in toc["parts"]]
        assert captions == [lang.ui["toc_main"], lang.ui["toc_further"]]
        assert len(set(captions)) == 2 and all(captions)
        # The same pages, in the same order, as English's.
        (tmp_path / "_toc.yml").write_text(i18n.edition_toc(lang))
        files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
        assert [toc["root"], *files] == pages
    planted = tmp_path / "planted.yml"
    planted.write_text("format: jb-book\nroot: a\nparts:\n  - caption: Appendix\n    chapters: []\n")
    with pytest.raises(ValueError, match="part caption 'Appendix' has no translation key"):
        i18n.edition_toc(i18n.language("ja"), planted)


# --- the interface's words (booktools.ext.languages) ---

def test_a_translated_footer_places_the_english_footers_three_links_in_its_words():
    from sphinx.errors import ExtensionError

    english = ('<p>Text and figures: <a href="t">CC BY-SA 4.0</a>.\nCode: <a href="c">MIT</a>.\n'
               'Cite: <a href="x">CITATION.cff</a>.</p>\n')
    assert ext.footer(i18n.language("zh-CN").ui["footer"], english) == (
        '<p>文字与图片：<a href="t">CC BY-SA 4.0</a>。代码：<a href="c">MIT</a>。'
        '引用：<a href="x">CITATION.cff</a>。</p>\n')
    with pytest.raises(ExtensionError, match="has 2 links"):
        ext.footer("{text} {code} {cite}", english.replace('<a href="c">MIT</a>', "MIT"))


def test_an_editions_interface_words_come_before_the_catalogue_they_stand_before():
    import gettext

    class Theirs(gettext.NullTranslations):
        def gettext(self, message):
            return {"Open issue": "Abra um problema", "Back": "Voltar"}.get(message, message)

    words = ext.Words({"Open issue": "Abrir uma issue"}, Theirs())
    assert [words.gettext(m) for m in ("Open issue", "Back", "Other")] == \
        ["Abrir uma issue", "Voltar", "Other"]


# --- languages.yml and a translation's encoding: one line naming file:line ---

@pytest.mark.parametrize("edit, line, said", [
    # A value that breaks YAML (an unclosed quote) on the English edition's title.
    (lambda text: text.replace('  title: GPUs from PyTorch', '  title: "GPUs from PyTorch', 1),
     None, r"not YAML \("),
    # A misspelled key: Language.__init__'s TypeError before.
    (lambda text: text.replace("\n  title:", "\n  titel:", 1), "titel", r"unknown key 'titel'"),
    # A key an edition must have, left out: the edition's line.
    (lambda text: text.replace("\n  title: GPUs from PyTorch", "", 1), "- code: en",
     r"the edition lacks title"),
])
def test_a_bad_languages_yml_is_named_with_its_line(tmp_path, monkeypatch, capsys, edit, line,
                                                    said):
    path = tmp_path / "languages.yml"
    text = i18n.LANGUAGES_FILE.read_text(encoding="utf-8")
    path.write_text(edit(text), encoding="utf-8")
    with pytest.raises(ValueError) as error:
        i18n.languages(path)
    message = str(error.value)
    assert re.match(rf"{path}:\d+: {said}", message) and "\n" not in message, message
    if line:
        number = int(message.split(":")[1])
        assert path.read_text(encoding="utf-8").splitlines()[number - 1].strip().startswith(line)
    original = i18n.languages
    monkeypatch.setattr(i18n, "languages", lambda p=path: original(path))
    assert i18n.main(["codes"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"i18n: {path}:") and len(err.splitlines()) == 1


def test_a_latin1_translation_is_named_by_the_check(book):
    """The fault run's C3: a chapter's titles are read from every translated page;
    a Latin-1 one gave "'utf-8' codec can't decode byte 0xe7 in position 435"."""
    chapters, root = book
    other = root / "zh-CN" / "chapters" / "other.md"
    other.write_bytes("# Outra\n\nUma li\xe7\xe3o.\n".encode("latin-1"))
    with pytest.raises(ValueError, match=rf"^{other}:3: not UTF-8 \(byte 0xe7\)"):
        i18n.rule_problems("zh-CN", "devices", root, chapters)


def test_an_unclosed_fence_in_a_translation_is_named_by_its_line(book):
    chapters, root = book
    path = i18n.source("zh-CN", "devices", root)
    text = path.read_text(encoding="utf-8")
    last = text.rindex("\n```\n")
    path.write_text(text[:last + 1] + text[last + 5:], encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{path}:\d+: this fence \(```.* is never closed"):
        i18n.structure_problems("zh-CN", "devices", chapters, root)


def test_checking_knows_the_plots_data_key_without_importing_matplotlib():
    from d2lgpu.plots import PLOT_DATA
    assert i18n.PLOT_DATA == PLOT_DATA
