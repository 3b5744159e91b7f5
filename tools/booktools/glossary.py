"""An edition's glossary, i18n/<code>/glossary.yml: its terms and the forms its prose avoids.

    # Terms of the <language> edition. `python -m booktools.i18n check`
    # flags each `avoid` form found in this edition's prose.
    terms:
      - en: device-mismatch error        # the English term
        term: 设备不一致错误               # this edition's term
        avoid: [设备不匹配错误, 同设备错误]  # forms not to use in prose (literal substrings)
        allow: []                        # optional: longer strings in which an avoided form is fine
        note: optional guidance for translators

``avoid`` and ``allow`` are literal, case-sensitive substrings. An avoided
form inside an ``allow`` string, or inside the term itself, is fine where
that longer string stands (avoid 例, allow 例えば). Every edition has one:
a missing or empty file, like a bad entry, is a ValueError naming the file
(and the entry), for the checks would otherwise be off without a word.

An avoided form with ``{number}`` in it stands for any number there, followed
by the rest as a whole symbol: ``"{number} s"`` finds "1 s" and "0.19 s"
(seconds), not "5 ms" nor "2 streams"; ``"{number}x"`` finds "37.5x", not
"0x1f". Like every avoided form, it is looked for in prose with code and math
blanked, so that a printed output quoted as code (`37.5x`) keeps its symbol.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from booktools import files

__all__ = ["Term", "load", "avoided"]

KEYS = {"en", "term", "avoid", "allow", "note"}
NUMBER = "{number}"  # in an avoided form: any number (see the module's docstring)


@dataclass(frozen=True)
class Term:
    """One glossary entry."""
    en: str
    term: str
    avoid: tuple = ()
    allow: tuple = ()
    note: str = ""


def _strings(value, what: str, where: str) -> tuple:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{where}: `{what}` must be a list of non-empty strings, not {value!r}")
    return tuple(value)


def _term(entry, where: str) -> Term:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: an entry is a mapping with en, term and avoid, "
                         f"not {entry!r}")
    unknown = sorted(set(entry) - KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)} "
                         f"(an entry has {', '.join(sorted(KEYS))})")
    for key in ("en", "term"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise ValueError(f"{where}: `{key}` is missing or empty")
    avoid = _strings(entry.get("avoid"), "avoid", where)
    allow = _strings(entry.get("allow"), "allow", where)
    if entry["term"] in avoid:
        raise ValueError(f"{where}: avoids its own term {entry['term']!r}")
    for longer in allow:
        if not any(form in longer for form in avoid):
            raise ValueError(f"{where}: allow {longer!r} holds no avoided form "
                             f"({', '.join(avoid) or 'none'})")
    note = entry.get("note") or ""
    if not isinstance(note, str):
        raise ValueError(f"{where}: `note` must be text, not {note!r}")
    return Term(entry["en"], entry["term"], avoid, allow, note)


RESTORE = ("restore it (git checkout -- FILE) or write its terms (MAINTAINING.md: "
           "Translations)")


def load(path: Path, name: str | None = None) -> list[Term]:
    """The terms of a glossary file (at least one); errors call it ``name``."""
    path = Path(path)
    shown = name or str(path)
    if not path.is_file():
        raise ValueError(f"{shown}: missing, so no term of this edition would be checked: "
                         + RESTORE.replace("FILE", shown))
    text = files.read_text(path)  # not UTF-8: ValueError naming file:line
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise files.yaml_problem(Path(shown), error) from None
    if data is not None and (not isinstance(data, dict) or set(data) - {"terms"}):
        raise ValueError(f"{shown}: a glossary is a mapping with one key, `terms`")
    entries = (data or {}).get("terms") or []
    if not isinstance(entries, list):
        raise ValueError(f"{shown}: `terms` must be a list of entries")
    if not entries:
        raise ValueError(f"{shown}: no terms, so none of this edition would be checked: "
                         + RESTORE.replace("FILE", shown))
    terms = []
    for number, entry in enumerate(entries, 1):
        en = entry.get("en") if isinstance(entry, dict) else None
        terms.append(_term(entry, f"{shown}: entry {number}" + (f" ({en})" if en else "")))
    return terms


def _after_a_number(form: str) -> re.Pattern:
    """What an avoided form with {number} finds: a whole number there, the rest a whole symbol."""
    before, after = form.split(NUMBER, 1)
    latin = "0-9A-Za-z"  # a CJK character may touch the number or the symbol
    return re.compile(re.escape(before) + rf"(?<![{latin}.,])\d+(?:[.,]\d+)*" + re.escape(after)
                      + (rf"(?![{latin}/])" if re.search(f"[{latin}]$", after) else ""))


def avoided(terms: list[Term], text: str) -> list[tuple[int, str, Term]]:
    """(offset, form, term) of each avoided form in ``text`` outside its allowed strings
    (for a form with {number}: what it found, "1 s")."""
    found = [(match.start(), match.group(0), term) for term in terms
             for form in term.avoid if NUMBER in form
             for match in _after_a_number(form).finditer(text)]
    terms = [dataclasses.replace(term, avoid=tuple(f for f in term.avoid if NUMBER not in f))
             for term in terms]
    for term in terms:
        fine = set()
        for longer in (*term.allow, term.term):
            at = text.find(longer)
            while at >= 0:
                for form in term.avoid:
                    inner = longer.find(form)
                    while inner >= 0:
                        fine.add((at + inner, form))
                        inner = longer.find(form, inner + 1)
                at = text.find(longer, at + 1)
        for form in term.avoid:
            at = text.find(form)
            while at >= 0:
                if (at, form) not in fine:
                    found.append((at, form, term))
                at = text.find(form, at + 1)
    return sorted(found, key=lambda hit: hit[0])
