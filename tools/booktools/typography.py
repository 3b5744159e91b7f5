"""CJK typography of the editions: a paragraph a line, bold that parses, spacing at links.

zh-CN and ja keep each paragraph and figure text (``alt:``, ``caption:``) on one line
(the translator joins them by hand). ``faults`` reads bold and emphasis as MyST
parses them, holds a link's or role's edges, its title resolved (``Titles``), to
``wants_space``, and a title shown inside a sentence to ``REFERENCE_RULES``. Not
autocorrect-py: its lint looks past link edges and role titles and flags the book's 矩阵-向量.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from booktools import files, gpu_figures
from booktools.gpu_figures import prose_paragraphs

__all__ = ["CJK_LETTER", "FULLWIDTH_PUNCTUATION", "has_cjk", "wants_space", "Titles",
           "faults", "REFERENCE_RULES", "EXPLICIT_TITLE"]

# Han, kana, 々〆〇, full-width letters and digits, half-width katakana.
CJK_LETTER = re.compile("[\u3005-\u3007\u3040-\u309f\u30a0-\u30fa\u30fc-\u30ff\u31f0-\u31ff"
                        "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff10-\uff19\uff21-\uff3a"
                        "\uff41-\uff5a\uff66-\uff9f\U00020000-\U0003134f]")
# Full-width punctuation carries its own space. Chinese fonts set “” ‘’ — …
# full width too, and zh-CN writes them with no space around.
FULLWIDTH_PUNCTUATION = re.compile("[\u3000-\u3004\u3008-\u303f\u30fb\uff01-\uff0f"
                                   "\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
                                   "\u2018\u2019\u201c\u201d\u2014\u2026]")
LATIN = re.compile(r"[0-9A-Za-z\u00c0-\u024f]")
EXPLICIT_TITLE = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)
JOIN_HINT = ("join its lines by hand: no space between CJK characters, one between CJK and "
             "Latin text")


def has_cjk(text: str) -> bool:
    return CJK_LETTER.search(text) is not None


def wants_space(left: str, right: str) -> bool | None:
    """Whether CJK typography wants a space between two characters that meet (None: no rule)."""
    if not left or not right:
        return None
    if FULLWIDTH_PUNCTUATION.match(left) or FULLWIDTH_PUNCTUATION.match(right):
        return False
    cjk = CJK_LETTER.match(left) is not None, CJK_LETTER.match(right) is not None
    if all(cjk):
        return False
    if any(cjk) and (LATIN.match(left) or LATIN.match(right)):
        return True
    return None


# --- what {doc} and {ref} show ---

@dataclass(frozen=True)
class Titles:
    """What a ``{doc}`` or ``{ref}`` without a title of its own shows in one edition."""
    docs: dict    # chapter -> its H1
    labels: dict  # label -> (its heading or "<exercise> N", "chapter", "section" or "exercise")

    @classmethod
    def of(cls, folder: Path, exercise: str = "Exercise") -> "Titles":
        """The titles of the chapters in ``folder``; an exercise's is "``exercise`` N"."""
        docs, labels = {}, {}
        for path in sorted(Path(folder).glob("*.md")):
            tokens, targets = _parser().parse(files.read_text(path)), []
            for token, following in zip(tokens, tokens[1:] + [None]):
                if token.type == "myst_target":  # (label)= lines, then the heading they label
                    targets.append(token.content)
                    continue
                if token.type == "heading_open":
                    kind = "chapter" if token.tag == "h1" else "section"
                    if kind == "chapter":
                        docs.setdefault(path.stem, following.content)
                    labels.update({label: (following.content, kind) for label in targets})
                elif token.type.endswith("fence") and token.info.startswith("{exercise}"):
                    labels.update({label: (f"{exercise} N", "exercise") for label
                                   in re.findall(r"^:label:\s*(\S+)", token.content, re.M)})
                targets = []
        return cls(docs, labels)

    def shown(self, role: str, content: str) -> str | None:
        """The text ``{role}`content``` shows (None: not known)."""
        explicit = EXPLICIT_TITLE.match(content)
        return explicit.group(1) if explicit and explicit.group(1) \
            else self.target(role, content)[0]

    def target(self, role: str, content: str) -> tuple[str | None, str | None]:
        """(title, "chapter", "section" or "exercise") of what a role points to (None: unknown)."""
        explicit = EXPLICIT_TITLE.match(content)
        target = explicit.group(2) if explicit else content
        if role == "doc":
            title = self.docs.get(posixpath.basename(target.removesuffix(".md")))
            return title, "chapter" if title is not None else None
        return self.labels.get(target, (None, None))


# --- one paragraph per line ---

_HEADER = re.compile(r"^`{3,}\{code-cell\}[^\n]*\n---\n(.*?)^---[ \t]*$", re.M | re.S)
# alt: or caption: and the lines that continue it (more indented; blank lines between).
_FIGURE_TEXT = re.compile(r"^([ \t]*)(alt|caption):.*(?:(?:\n[ \t]*)*\n\1[ \t]+\S.*)*", re.M)


def _line_breaks(text: str) -> list[tuple[int, str]]:
    """(line, message) of each line break inside a paragraph or a figure's text."""
    found = []
    for paragraph in prose_paragraphs(text):
        if paragraph.text.startswith("|"):
            continue  # a table: a row a line, as markdown wants
        numbers = {number for _, number in paragraph.starts}
        found += [(number, "a line break inside a paragraph (zh-CN and ja keep a paragraph on "
                   f"one line): {JOIN_HINT}") for number in numbers if number + 1 in numbers]
    for header in _HEADER.finditer(text):
        for key in _FIGURE_TEXT.finditer(text, header.start(1), header.end(1)):
            if "\n" in key.group(0):
                found.append((text.count("\n", 0, key.start()) + 1,
                              f"a line break inside the figure's {key.group(2)}: text (zh-CN "
                              f"and ja keep it on one YAML line): {JOIN_HINT}"))
    return sorted(found)


# --- inline markdown as MyST renders it ---

@lru_cache(maxsize=1)
def _parser():
    """A markdown-it of its own as MyST configures it (gpu_figures.parser); each inline token's
    meta has its rule and source span, and text tokens stay apart (an unmatched emphasis
    marker is a token of its own)."""
    md = gpu_figures.parser.__wrapped__()  # not the cached one, which prose_paragraphs uses
    md.disable(["text_join", "fragments_join"])
    ruler = md.inline.ruler
    for rule in list(ruler.__rules__):  # markdown-it's Ruler has no public getter
        ruler.at(rule.name, _spanned(rule.name, rule.fn), {"alt": rule.alt})
    return md


def _spanned(name: str, fn):
    def rule(state, silent):
        start, count, pending = state.pos, len(state.tokens), bool(state.pending)
        found = fn(state, silent)
        if found and not silent:
            for token in state.tokens[count + pending:]:
                if token.meta is None:
                    token.meta = {}
                token.meta.setdefault("span", (start, state.pos))
                token.meta.setdefault("rule", name)
        return found
    return rule


def faults(text: str, cjk: bool, titles: Titles, rule: tuple | None = None,
           terms: dict[str, str] = {}, bare: bool = False) -> list[tuple[int, str]]:  # noqa: B006
    """(line, message) of each bold that does not parse, each title shown inside a sentence
    without ``rule``, (``bare``) each reference but an exercise's alone in （）, and in zh-CN
    and ja (``cjk``) each line break inside a paragraph, bold ending in "。" and a space, link
    or role whose edge breaks CJK spacing, and emphasis (dots) over Latin text or on a term
    of ``terms``."""
    found = _line_breaks(text) if cjk else []
    for paragraph in prose_paragraphs(text):
        tokens = _parser().parseInline(paragraph.text)[0].children or []
        found += _bold(paragraph, tokens, cjk)
        if cjk:
            found += _spacing(paragraph, tokens, titles) + _emphasis(paragraph, tokens, terms)
        if rule or bare:
            found += _references(paragraph, tokens, titles, rule, bare)
    return found


def _bold(paragraph, tokens: list, cjk: bool) -> list[tuple[int, str]]:
    source, found, literal = paragraph.text, [], {}
    for token in tokens:
        if token.type == "text" and token.meta.get("rule") == "emphasis" and token.content:
            literal.setdefault(token.meta["span"], []).append(token.content)
    for (start, end), markers in sorted(literal.items()):
        if len(markers) >= 2:
            found.append((paragraph.line_at(start),
                          f"\"{source[start:end]}\" stays literal: the bold does not parse "
                          f"(…{source[max(0, start - 8):end + 8]}…): "
                          + ("keep full-width punctuation outside the bold (**…**。), and "
                             "write a space before an opening ** that follows CJK text and "
                             "precedes code or punctuation (是 **`x`**。)" if cjk else
                             "its ** must touch the text it makes bold (**like this**), not "
                             "a space")))
    for token in tokens if cjk else []:
        if token.type == "strong_close":
            start, end = token.meta["span"]
            before, after = source[start - 1:start], source[end:end + 1]
            if FULLWIDTH_PUNCTUATION.match(before) and after.isspace():
                found.append((paragraph.line_at(start),
                              f"bold ends with \"{before}\" and a space, which shows: "
                              f"put \"{before}\" after the closing {token.markup} and drop "
                              f"the space (**…**{before})"))
    return found


def _emphasis(paragraph, tokens: list, terms: dict[str, str]) -> list[tuple[int, str]]:
    found, inside, start = [], None, 0
    for token in tokens:
        if token.type == "em_open":
            inside, start = "", token.meta["span"][0]
        elif token.type == "em_close" and inside is not None:
            shown, inside = inside, None
            if not has_cjk(shown):
                continue  # an English title or a menu path: it stays italic
            if shown in terms:
                found.append((paragraph.line_at(start), f"*{shown}*: a defined term is bold, "
                              f"with its English gloss at its first use (**{shown}**"
                              f"（{terms[shown]}）); dots are for true emphasis only"))
            elif LATIN.search(shown):
                found.append((paragraph.line_at(start), f"*{shown}*: emphasis dots would stand "
                              "over Latin letters or digits: emphasise the CJK words only, or "
                              "use bold or quotation marks"))
        elif inside is not None:
            inside += token.content if token.type in ("text", "code_inline") else "x"
    return found


def _visible(tokens: list, titles: Titles) -> str | None:
    """The text a reader sees of a link's inner tokens (code and math as "x": Latin)."""
    shown = ""
    for token in tokens:
        if token.type == "text":
            shown += token.content
        elif token.type in ("code_inline", "math_inline"):
            shown += "x" * max(len(token.content), 1)
        elif token.type == "myst_role":
            inner = titles.shown(token.meta.get("name", ""), token.content)
            if inner is None:
                return None
            shown += inner
        elif token.type == "softbreak":
            shown += " "
    return shown


def _links(tokens: list, source: str, titles: Titles):
    """(start, end, as a message names it, shown text) of each link, {doc} and {ref}."""
    stack = []
    for i, token in enumerate(tokens):
        if token.type == "link_open":
            stack.append(i)
        elif token.type == "link_close" and stack:
            opened = stack.pop()
            if not stack:  # an outer link only
                start, end = tokens[opened].meta["span"]
                yield start, end, _short(source[start:end]), \
                    _visible(tokens[opened + 1:i], titles)
        elif token.type == "myst_role" and not stack \
                and token.meta.get("name") in ("doc", "ref"):
            start, end = token.meta["span"]
            shown = titles.shown(token.meta["name"], token.content)
            yield start, end, f"{source[start:end]} (shown \"{_short(shown or '')}\")", shown


def _short(written: str) -> str:
    return written if len(written) <= 40 else written[:24] + "…" + written[-8:]


def _spacing(paragraph, tokens: list, titles: Titles) -> list[tuple[int, str]]:
    source, found = paragraph.text, []
    breaks = {offset - 1 for offset, _ in paragraph.starts[1:]}  # joined lines' spaces
    for start, end, where, shown in _links(tokens, source, titles):
        shown = (shown or "").strip()
        if not shown:
            continue
        # Look through emphasis markers around it: **[text](url)** meets its neighbour.
        left = len(source[:start].rstrip("*_"))
        right = len(source) - len(source[end:].lstrip("*_"))
        before, after = source[:left].rstrip(), source[right:].lstrip()
        for a, b, gap in ((before[-1:], shown[0], range(len(before), left)),
                          (shown[-1], after[:1], range(right, len(source) - len(after)))):
            want = wants_space(a, b)
            if breaks.intersection(gap):
                continue  # a line break, which _line_breaks reports
            if want is False and gap:
                found.append((paragraph.line_at(start),
                              f"a space between \"{a}\" and \"{b}\" at {where}, which shows: "
                              "drop it (no space between CJK characters, nor next to "
                              "full-width punctuation)"))
            elif want is True and not gap:
                found.append((paragraph.line_at(start),
                              f"no space between \"{a}\" and \"{b}\" at {where}: write one "
                              "(a space between CJK and Latin text)"))
    return found


# --- cross-references that read as sentences ---

# How an edition marks a title shown inside a sentence ("详见{ref}`x`" reads "see your
# hardware"): per kind, a pattern of the text around the reference (written \0); what to write.
REFERENCE_RULES = {
    "zh-CN": ({"section": r"“\0”一节", "chapter": r"“\0”一章"},
              "“{ref}`…`”一节 for a section, “{doc}`…`”一章 for a chapter"),
    "ja": ({"section": r"「\0」(?:の節|を参照)", "chapter": r"「\0」(?:の章|を参照)"},
           "「{ref}`…`」の節 for a section, 「{doc}`…`」の章 for a chapter, or 「…」を参照"),
    "pt-BR": ({"section": r"\b(?i:seção|seções)\W*[ \u00a0](?:“\0”|\0)",
               "chapter": r"\b(?i:capítulos?)\W*[ \u00a0](?:“\0”|\0)"},
              "name it: a seção {ref}`…`, o capítulo {doc}`…` (na seção, do capítulo, …)"),
}
_POINTER_BEFORE = ("(", "（", ",", "，", "、", ";", "；")
_LIST_HEAD = re.compile(r"(?:[-*+]|\d+[.)])?")


def _a_title_in_a_sentence(before: str, after: str) -> bool:
    """Whether a reference reads as part of a sentence: not alone in parentheses, not a list
    item's head ("- {doc}`…`：…"), not what a colon introduces at the end."""
    before, after = before.rstrip(), after.lstrip()
    return not (after.startswith((")", "）")) and before.endswith(_POINTER_BEFORE)
                or _LIST_HEAD.fullmatch(before) and after.startswith((":", "：", "—"))
                or before.endswith((":", "：")) and after[:1] in ("", ".", "。"))


def _references(paragraph, tokens: list, titles: Titles, rule: tuple | None,
                bare: bool) -> list[tuple[int, str]]:
    """Each role showing a chapter's or section's title (not an exercise's "练习 N", nor the
    translator's own words) inside a sentence without ``rule``; (bare) each alone in （）."""
    source, found = paragraph.text, []
    for token in tokens:
        if token.type != "myst_role" or token.meta.get("name") not in ("doc", "ref"):
            continue
        role, (start, end) = token.meta["name"], token.meta["span"]
        title, kind = titles.target(role, token.content)
        shown = titles.shown(role, token.content)
        before, after = source[:start], source[end:]
        if bare and kind != "exercise" and before.endswith("（") and after.startswith("）"):
            found.append((paragraph.line_at(start),
                          f"（{source[start:end]}） alone in parentheses reads as a gloss: say "
                          "it is a reference (（见“…”一节） / （「…」の節を参照）)"))
        if not rule or kind not in ("chapter", "section") or not title or not shown \
                or not title.startswith(shown):
            continue
        if _a_title_in_a_sentence(before, after) \
                and not re.search(rule[0][kind], f"{before}\0{after}"):
            found.append((paragraph.line_at(start),
                          f"{source[start:end]} shows the {kind} title \"{_short(shown)}\", "
                          f"which reads as words of the sentence: write {rule[1]} (a pointer "
                          "alone in parentheses may stay bare)"))
    return found
