"""An edition's glossary, i18n/<code>/glossary.yml: its terms and the forms its prose avoids.

Its format is in runbooks/translation.md; a missing or empty glossary is an error.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from booktools import files

__all__ = ["Term", "load", "avoided"]

KEYS = {"en", "term", "avoid", "allow", "note"}
NUMBER = "{number}"
RESTORE = "restore it (git checkout -- {}) or write its terms (runbooks/translation.md)"


@dataclass(frozen=True)
class Term:
    en: str
    term: str
    avoid: tuple = ()
    allow: tuple = ()
    note: str = ""  # for the translator


def _term(entry, where: str) -> Term:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: an entry is a mapping with en, term and avoid, not {entry!r}")
    if unknown := sorted(set(entry) - KEYS):
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)} "
                         f"(an entry has {', '.join(sorted(KEYS))})")
    for key in ("en", "term"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise ValueError(f"{where}: `{key}` is missing or empty")
    for key in ("avoid", "allow"):
        value = entry.get(key) or []
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise ValueError(f"{where}: `{key}` must be a list of non-empty strings, "
                             f"not {value!r}")
        entry = {**entry, key: tuple(value)}
    if entry["term"] in entry["avoid"]:
        raise ValueError(f"{where}: avoids its own term {entry['term']!r}")
    return Term(**entry)  # an allow that misses its avoided form: the prose check finds it


def load(path: Path, name: str | None = None) -> list[Term]:
    """The terms of a glossary file (at least one); errors call it ``name``."""
    path = Path(path)
    stat = path.stat() if path.is_file() else None
    return list(_load(path, name, stat and (stat.st_mtime_ns, stat.st_size)))


@lru_cache(maxsize=16)  # every chapter's check reads its edition's glossary; read again if changed
def _load(path: Path, name: str | None, stamp: tuple | None) -> tuple[Term, ...]:
    shown = name or str(path)
    try:
        data = yaml.safe_load(files.read_text(path)) if path.is_file() else None
    except yaml.YAMLError as error:
        raise files.yaml_problem(Path(shown), error) from None
    if data is not None and (not isinstance(data, dict) or set(data) - {"terms"}):
        raise ValueError(f"{shown}: a glossary is a mapping with one key, `terms`")
    entries = (data or {}).get("terms") or []
    if not isinstance(entries, list):
        raise ValueError(f"{shown}: `terms` must be a list of entries")
    if not entries:
        raise ValueError(f"{shown}: missing or no terms, so none of this edition would be "
                         "checked: " + RESTORE.format(shown))
    return tuple(_term(entry, f"{shown}: entry {number}" + (
                 f" ({entry['en']})" if isinstance(entry, dict) and entry.get("en") else ""))
                 for number, entry in enumerate(entries, 1))


def _finder(form: str) -> re.Pattern:
    """A literal form (overlapping finds), or one with {number}: a whole number, a whole symbol."""
    if NUMBER not in form:
        return re.compile(f"(?=({re.escape(form)}))")
    before, after = form.split(NUMBER, 1)
    latin = "0-9A-Za-z"  # a CJK character may touch the number or the symbol
    return re.compile(re.escape(before) + rf"(?<![{latin}.,])\d+(?:[.,]\d+)*" + re.escape(after)
                      + (rf"(?![{latin}/])" if re.search(f"[{latin}]$", after) else ""))


def avoided(terms: list[Term], text: str) -> list[tuple[int, str, Term]]:
    """(offset, form as found, term) of each avoided form in ``text`` outside its allowed
    strings and its term."""
    found = []
    for term in terms:
        fine = [(m.start(), m.start() + len(longer)) for longer in (*term.allow, term.term)
                for m in re.finditer(f"(?={re.escape(longer)})", text)]
        for form in term.avoid:
            for match in _finder(form).finditer(text):
                hit = match.group(match.lastindex or 0)
                if not any(a <= match.start() and match.start() + len(hit) <= b for a, b in fine):
                    found.append((match.start(), hit, term))
    return sorted(found, key=lambda hit: hit[0])
