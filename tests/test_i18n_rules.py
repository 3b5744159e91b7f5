"""The editions' own rules (booktools.i18n check): typography (booktools.typography),
glossaries (booktools.glossary), and CJK emphasis in the CSS."""
from __future__ import annotations

import re
import shutil
from types import SimpleNamespace

import pytest
from docutils import nodes
from docutils.utils import new_document

from booktools import glossary, i18n, typography
from booktools.ext import languages as ext

EDITIONS = [lang.code for lang in i18n.translations()]
CHAPTERS = i18n.english_chapters()


@pytest.mark.parametrize("chapter", CHAPTERS)
@pytest.mark.parametrize("code", EDITIONS)
def test_translation_follows_its_editions_rules(code, chapter):
    """zh-CN and ja: a paragraph a line, bold outside full-width punctuation, CJK spacing
    at links; every edition: bold that parses, no form its glossary avoids."""
    assert i18n.rule_problems(code, chapter) == []


# --- a tiny edition of each language, clean, and one fault planted at a time ---

DEMO = {
    "zh-CN": """\
(demo)=
# 演示

张量位于 GPU 上，见“{doc}`other`”一章。**你什么都不需要**。每一章都能运行（见“{ref}`demo-more`”一节）。

- 列表项说明 `cuda:0` 是第一块 GPU，参见 [PyTorch 文档](https://pytorch.org)。

```{code-cell} ipython3
---
mystnb:
  image:
    alt: "一张图：张量从 CPU 复制到 GPU。"
---
print("张\\n量")  # 装置
```

(demo-more)=
## 更多

详见“{ref}`demo-more`”一节和{ref}`other-ex` 的解答，是 **`x`**。

- {doc}`other`：另一章。
""",
    "ja": """\
(demo)=
# デモ

テンソルは GPU 上にあります。「{doc}`other`」の章を参照してください（「{doc}`other`」の章）。**何も要りません**。1 秒程度で、37.5 倍速く、`37.5x` と表示されます。

PyTorch の[キャッシングアロケーター](https://pytorch.org)は{ref}`other-ex` で使います。
""",
    "pt-BR": """\
(demo)=
# Demonstração

Um parágrafo pode ocupar várias linhas em português: **nada
mais** é preciso, veja o capítulo {doc}`other` ({doc}`other`).
Pré-requisito: {doc}`other`.
""",
}
OTHER = {
    "zh-CN": "# 其他章节\n\n```{exercise} 一个练习\n:label: other-ex\n\n做点什么。\n```\n",
    "ja": "# その他の章\n\n```{exercise} 練習\n:label: other-ex\n\n何かをする。\n```\n",
    "pt-BR": "# Outro capítulo\n",
}
GLOSSARY = """\
# Terms of the zh-CN edition.
terms:
  - en: device
    term: 设备
    avoid: [装置]
    allow: [装置化]
"""


A_GLOSSARY = "terms:\n  - en: device\n    term: X\n    avoid: [never-used-form]\n"


@pytest.fixture
def edition(tmp_path):
    """i18n/<code>/chapters/{demo,other}.md of each edition, a zh-CN glossary and ja's."""
    root = tmp_path / "i18n"
    for code, text in DEMO.items():
        (root / code / "chapters").mkdir(parents=True)
        (root / code / "chapters" / "demo.md").write_text(text)
        (root / code / "chapters" / "other.md").write_text(OTHER[code])
    (root / "zh-CN" / "glossary.yml").write_text(GLOSSARY)
    shutil.copy(i18n.glossary_file("ja"), root / "ja" / "glossary.yml")  # the edition's own
    (root / "pt-BR" / "glossary.yml").write_text(A_GLOSSARY)  # every edition has one
    return root


@pytest.mark.parametrize("code", list(DEMO))
def test_the_tiny_editions_follow_the_rules(edition, code):
    assert i18n.rule_problems(code, "demo", edition) == []


PLANTED = [  # edition, text, planted text, what check says, the line it names
    ("zh-CN", "GPU 上，见", "GPU 上，\n见", "a line break inside a paragraph (zh-CN and ja keep "
     "a paragraph on one line): join its lines by hand: no space between CJK", "GPU 上，"),
    ("zh-CN", "第一块 GPU，", "第一块 GPU，\n  ", "a line break inside a paragraph", "第一块"),
    # the break, not a space after "，" before the link: the join's space is no fault of its own
    ("zh-CN", "GPU，参见 [PyTorch", "GPU，\n  [PyTorch", "a line break inside a paragraph",
     "第一块"),
    ("zh-CN", "张量从 CPU", "张量从\n      CPU", "a line break inside the figure's alt: text",
     "alt:"),
    ("zh-CN", "**你什么都不需要**。每", "**你什么都不需要。** 每", 'bold ends with "。" and a space',
     "需要"),
    ("zh-CN", "是 **`x`**。", "是**`x`**。", "stays literal: the bold does not parse", "是**"),
    ("zh-CN", "“{doc}`other`", "“ {doc}`other`",
     'a space between "“" and "其" at {doc}`other` (shown "其他章节")', "见“ {doc}"),
    ("zh-CN", "参见 [PyTorch", "参见[PyTorch", 'no space between "见" and "P"', "参见["),
    ("zh-CN", "`other-ex` 的", "`other-ex`的", 'no space between "N" and "的" at {ref}`other-ex` '
     '(shown "练习 N")', "`other-ex`的"),
    ("zh-CN", "和{ref}`other-ex`", "和 {ref}`other-ex`", 'a space between "和" and "练"',
     "和 {ref}"),
    ("zh-CN", "GPU 上，", "GPU 装置上，", '"装置" is avoided in this edition '
     '(i18n/zh-CN/glossary.yml: use "设备" for "device")', "装置上"),
    ("ja", "の[キャッシングアロケーター](https://pytorch.org)は",
     "の [キャッシングアロケーター](https://pytorch.org) は", 'a space between "の" and "キ"',
     "キャッシング"),
    ("ja", "**何も要りません**。1", "**何も要りません。** 1", 'bold ends with "。" and a space',
     "要りません"),
    ("pt-BR", "capítulo {doc}", "capítulo **{doc}", '"**" stays literal: the bold does not parse',
     "veja"),
    # cross-references that read as sentences: the title as the edition marks one
    ("zh-CN", "见“{doc}`other`”一章", "见{doc}`other`",
     '{doc}`other` shows the chapter title "其他章节", which reads as words', "见{doc}"),
    ("zh-CN", "详见“{ref}`demo-more`”一节", "详见“{ref}`demo-more`”一章",
     '{ref}`demo-more` shows the section title "更多"', "详见"),
    ("zh-CN", "（见“{ref}`demo-more`”一节）", "（{ref}`demo-more`）",
     "（{ref}`demo-more`） alone in parentheses reads as a gloss", "每一章"),
    ("zh-CN", "（见“{ref}`demo-more`”一节）", "（{ref}`demo-more`这一节）",
     '{ref}`demo-more` shows the section title "更多"', "每一章"),
    ("ja", "「{doc}`other`」の章を", "{doc}`other`を",
     '{doc}`other` shows the chapter title "その他の章", which reads', "参照して"),
    ("ja", "」の章を", "」の節を", '{doc}`other` shows the chapter title', "参照して"),
    ("pt-BR", "o capítulo {doc}`other`", "{doc}`other`",
     '{doc}`other` shows the chapter title "Outro capítulo", which reads', "veja"),
    ("pt-BR", "o capítulo {doc}`other`", "a seção {doc}`other`",
     '{doc}`other` shows the chapter title', "veja"),
    # CJK emphasis (dots): a defined term is bold; no dots over Latin letters or digits;
    # an all-Latin emphasis (a title) stays italic and is fine
    ("zh-CN", "张量位于 GPU 上", "张量位于*设备*上", "*设备*: a defined term is bold, with its "
     "English gloss at its first use (**设备**（device）)", "张量位于"),
    ("zh-CN", "张量位于 GPU 上", "张量位于*每块 GPU* 上", "*每块 GPU*: emphasis dots would "
     "stand over Latin letters or digits", "张量位于"),
    ("ja", "テンソルは GPU 上に", "テンソルは*第 2 の* GPU 上に", "*第 2 の*: emphasis dots "
     "would stand over Latin letters or digits", "テンソルは"),
    # code comments in the edition's language; d2l in zh-CN's own language
    ("zh-CN", "# 装置", "# the device of the host", "the comment '# the device of the host' is "
     "English: translate it", 'print("张'),
    ("zh-CN", "(https://pytorch.org)", "(https://d2l.ai/chapter_builders-guide/use-gpu.html)",
     "https://d2l.ai/chapter_builders-guide/use-gpu.html is English d2l: link "
     "https://zh.d2l.ai/", "参见"),
    # ja: seconds and ratios in prose are 秒 and 倍 (a printed output quoted as code keeps x)
    ("ja", "1 秒程度", "1 s 程度", '"1 s" is avoided in this edition (i18n/ja/glossary.yml: '
     'use "秒" for "s (seconds, after a number)")', "程度"),
    ("ja", "37.5 倍", "37.5x", '"37.5x" is avoided in this edition (i18n/ja/glossary.yml: '
     'use "倍" for "x (a ratio, after a number)")', "程度"),
]


@pytest.mark.parametrize("code, old, new, expected, at", PLANTED,
                         ids=[f"{p[0]}:{p[3][:30]}" for p in PLANTED])
def test_a_planted_fault_is_named_with_its_file_and_line(edition, code, old, new, expected, at):
    path = edition / code / "chapters" / "demo.md"
    text = path.read_text()
    assert old in text, old
    text = text.replace(old, new, 1)
    path.write_text(text)
    line = next(n for n, content in enumerate(text.splitlines(), 1) if at in content)
    problems = i18n.rule_problems(code, "demo", edition)
    assert problems and expected in problems[0], problems
    assert all(p.startswith(f"i18n/{code}/chapters/demo.md:{line}: ") for p in problems), problems


def test_glossary_allows_its_longer_strings_and_ignores_code_and_link_targets(edition):
    path = edition / "zh-CN" / "chapters" / "demo.md"
    path.write_text(path.read_text().replace("GPU 上，", "GPU 装置化上，`装置`，[设备](装置.html)，"))
    assert i18n.rule_problems("zh-CN", "demo", edition) == []


def test_pt_br_may_wrap_its_paragraphs_and_the_rules_name_no_line_break(edition):
    assert "\n" in DEMO["pt-BR"].split("\n\n")[1].strip()  # the fixture's wrapped paragraph
    assert i18n.rule_problems("pt-BR", "demo", edition) == []


# --- the numbers carry over ---

ENGLISH = """\
# Demo

On the NVIDIA H100 a copy ran at 1.35 TFLOP/s and took 5.24 ms;
the product reached 51155.7 GFLOP/s, 1.4x the CPU's, which took 5.24 ms too.
"""


@pytest.mark.parametrize("code, old, new", [
    ("pt-BR", "1,35 TFLOP/s", "1,53 TFLOP/s"),
    ("pt-BR", "51.155,7 GFLOP/s", "51.155 GFLOP/s"),
    ("pt-BR", "também 5,24 ms", "também"),  # English says 5.24 ms twice
    ("zh-CN", "1.4 倍", "1.45 倍"),  # a longer number is not the figure
])
def test_a_figure_of_the_english_prose_missing_from_a_translation_is_named(tmp_path, code, old,
                                                                           new):
    chapters, root = tmp_path / "chapters", tmp_path / "i18n"
    chapters.mkdir()
    (chapters / "demo.md").write_text(ENGLISH)
    texts = {"pt-BR": "# Demo\n\nNa NVIDIA H100, uma cópia rodou a 1,35 TFLOP/s e levou 5,24 ms;\n"
                      "o produto chegou a 51.155,7 GFLOP/s, 1,4x o da "
                      "CPU, que levou também 5,24 ms.\n",
             "zh-CN": "# 演示\n\n在 NVIDIA H100 上，一次复制的速度为 1.35 TFLOP/s，耗时 5.24 ms；"
                      "乘积达到 51155.7 GFLOP/s，是 CPU 的 1.4 倍，CPU 同样耗时 5.24 ms。\n"}
    path = root / code / "chapters" / "demo.md"
    path.parent.mkdir(parents=True)
    path.write_text(texts[code])
    (root / code / "glossary.yml").write_text(A_GLOSSARY)
    assert i18n.rule_problems(code, "demo", root, chapters) == []
    assert old in texts[code]
    path.write_text(texts[code].replace(old, new))
    problems = i18n.rule_problems(code, "demo", root, chapters)
    assert len(problems) == 1 and re.match(
        rf"chapters/demo.md:[34]: the figure \S+ ?\S* stands [12] time\(s\) in this prose and "
        rf"[01] in i18n/{code}/chapters/demo.md's prose: carry it over", problems[0]), problems


# --- glossary files ---

def test_check_names_a_bad_glossary_by_its_file_and_entry_and_still_checks_the_rest(edition):
    (edition / "zh-CN" / "glossary.yml").write_text(GLOSSARY + "    avoids: [x]\n")
    path = edition / "zh-CN" / "chapters" / "demo.md"
    path.write_text(path.read_text().replace("参见 [PyTorch", "参见[PyTorch"))
    problems = i18n.rule_problems("zh-CN", "demo", edition)
    assert problems[0] == ("i18n/zh-CN/glossary.yml: entry 1 (device): unknown key(s) avoids "
                           "(an entry has allow, avoid, en, note, term)")
    assert len(problems) == 2 and problems[1].startswith("i18n/zh-CN/chapters/demo.md:")


@pytest.mark.parametrize("text, error", [
    ("terms:\n  - term: 设备\n", r"entry 1: `en` is missing"),
    ("terms:\n  - en: device\n    term: 设备\n    avoid: [设备]\n",
     r"entry 1 \(device\): avoids its own term"),
    ("terms:\n  - en: device\n    term: 设备\n    avoids: [装置]\n", r"unknown key\(s\) avoids"),
    ("terms:\n  - en: device\n    term: 设备\n    avoid: 装置: x\n", r"not YAML"),
    ("terms:\n  - en: device\n    term: 设备\n    avoid: [1]\n", r"`avoid` must be a list"),
    ("words: []\n", r"one key, `terms`"),
])
def test_a_bad_glossary_names_its_file_and_entry(tmp_path, text, error):
    path = tmp_path / "glossary.yml"
    path.write_text(text)
    with pytest.raises(ValueError, match=re.escape(str(path)) + ".*" + error):
        glossary.load(path)


@pytest.mark.parametrize("text", [None, "", "# only a comment\n", "terms:\n", "terms: []\n"])
def test_a_missing_or_empty_glossary_is_an_error_naming_its_file(tmp_path, text):
    # Without terms the glossary checks would be off without a word.
    path = tmp_path / "glossary.yml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ValueError, match=re.escape(f"{path}: ") + "(missing|no terms).*git checkout"):
        glossary.load(path)


@pytest.mark.parametrize("planted", ["missing", "empty"])
def test_check_names_a_missing_or_empty_glossary(edition, planted):
    path = edition / "ja" / "glossary.yml"
    path.unlink() if planted == "missing" else path.write_text("")
    problems = i18n.rule_problems("ja", "demo", edition)
    assert len(problems) == 1 and problems[0].startswith("i18n/ja/glossary.yml: ")


def test_a_glossary_finds_avoided_forms_but_not_inside_allowed_strings_or_its_term(tmp_path):
    path = tmp_path / "glossary.yml"
    path.write_text("terms:\n  - en: example\n    term: 例示\n    avoid: [例]\n"
                    "    allow: [例えば, 例外]\n")
    terms = glossary.load(path)
    hits = glossary.avoided(terms, "例えば、例外、例示、例。")
    assert [(offset, form) for offset, form, _ in hits] == [(10, "例")]


def test_a_glossary_form_with_a_number_finds_that_symbol_after_any_number_only(tmp_path):
    path = tmp_path / "glossary.yml"
    path.write_text('terms:\n  - en: s\n    term: 秒\n    avoid: ["{number} s", "{number}x"]\n')
    text = ("1 s 程度、0.07 から 0.19 s、（37.5x）で 30 s。5 ms、2 streams、H100s、11.0 GiB/s、"
            "0x1f、2x2、1.32x速い")
    hits = glossary.avoided(glossary.load(path), text)
    assert [form for _, form, _ in hits] == ["1 s", "0.19 s", "37.5x", "30 s", "1.32x"]
    assert [text[offset:offset + len(form)] for offset, form, _ in hits] == \
        [form for _, form, _ in hits]


# --- CJK emphasis in the CSS and the pages ---

def _css_rules(css: str) -> dict:
    """{selector: {property: value}} of a stylesheet's innermost blocks."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        declarations = dict(re.findall(r"([\w-]+)\s*:\s*([^;]+?)\s*(?:;|$)", body))
        for selector in selectors.split(","):
            rules.setdefault(" ".join(selector.split()), {}).update(declarations)
    return rules


@pytest.mark.parametrize("lang, marks, position", [("zh", "filled dot", "under"),
                                                    ("ja", "filled sesame", "over")])
def test_the_book_css_sets_cjk_emphasis_upright_with_the_traditions_dots(lang, marks, position):
    rules = _css_rules((i18n.ROOT / "_static" / "book.css").read_text())
    style = rules.get(f":lang({lang}) article em:not(.{ext.LATIN_EMPHASIS})", {})
    assert style.get("font-style") == "normal"
    assert style.get("text-emphasis") == marks == style.get("-webkit-text-emphasis")
    assert position in style.get("text-emphasis-position", "")


def test_a_portuguese_comment_is_no_fault_and_an_english_one_is():
    text = "```{code-cell} ipython3\nx = 1  # o número de GPUs\ny = 2  # the size of it\n```\n"
    assert [line for line, _ in i18n.comment_faults("pt-BR", text)] == [3]
    # a comment inside a string is the program's: not a comment of the cell
    assert i18n.comment_faults("zh-CN", '```{code-cell} ipython3\ns = "# the host of it"\n```\n') == []


def test_an_english_docstring_is_a_fault_and_a_childs_is_the_programs():
    text = ('```{code-cell} ipython3\ndef f():\n    """Return the size of the host."""\n\n'
            'def g():\n    """主机的大小。"""\n\nchild = \'def h():\\n    """The text of the child."""\'\n```\n')
    assert i18n.comment_faults("zh-CN", text) == [
        (3, "the docstring 'Return the size of the host.' is English: translate it "
            "(only the program must stay English's)")]


def test_an_emphasis_of_latin_text_or_true_cjk_emphasis_is_no_fault():
    text = "见 *Dive into Deep Learning*，它*之后*才运行，**设备**（device）。\n"
    assert typography.faults(text, True, typography.Titles({}, {}), None, {"设备": "device"}) == []


@pytest.mark.parametrize("lang, selector, prop, value", [
    ("ja", ":lang(ja)", "line-break", "strict"),
    # (_css_rules splits `:is(h1, h2, …)` at its commas: its first piece stands for it)
    ("ja", ":lang(ja) :is(h1", "word-break", "auto-phrase"),
    ("zh", ":lang(zh) :is(h1", "word-break", "keep-all"),
    ("zh", "html:lang(zh)", "--pst-font-family-base", '"Book CJK Punctuation SC", '
     "var(--pst-font-family-base-system)"),
    ("ja", "html:lang(ja)", "--pst-font-family-base", '"Book CJK Punctuation JP", '
     "var(--pst-font-family-base-system)"),
])
def test_the_book_css_breaks_cjk_lines_and_titles_by_their_rules(lang, selector, prop, value):
    """Japanese kinsoku (no line starts with ー or a small kana), titles broken between
    phrases, and curly quotation marks from a CJK font."""
    rules = _css_rules((i18n.ROOT / "_static" / "book.css").read_text())
    assert rules.get(selector, {}).get(prop) == value, rules.get(selector)


def test_translated_pages_mark_emphasis_without_cjk_as_latin():
    def marked(language):
        document = new_document("demo")
        paragraph = nodes.paragraph()
        paragraph += [nodes.emphasis(text="队列"), nodes.emphasis(text="Dive into Deep Learning"),
                      nodes.emphasis(text="GPU の*キュー*")]
        document += paragraph
        ext.translate_titles_and_emphasis(SimpleNamespace(config=SimpleNamespace(language=language)),
                                document, "chapters/demo")
        return [ext.LATIN_EMPHASIS in node["classes"] for node in document.findall(nodes.emphasis)]
    assert marked("zh_CN") == marked("ja") == marked("pt_BR") == [False, True, False]
    assert marked("en") == [False, False, False]
