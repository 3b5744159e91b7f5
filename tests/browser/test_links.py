"""No broken link or anchor inside the built site, checked offline.

The check crawls the built site from index.html, as a reader's clicks and the
browser's requests would: every ``href``, ``src``, ``srcset``, ``poster`` and
``action`` of every HTML page it reaches, index.html's meta refresh, and the
``url(...)`` and ``@import`` of every style sheet and ``style`` it loads.
Each link inside the site must name a file that exists, and each
``#fragment`` pointing to an HTML page an id (or ``<a name>``) on that page.
Links to other hosts are checked for syntax only, never fetched. Every page of
the toc must have been reached, in every edition (the translated sites under
<code>/, reached through the language switchers), so that a crawl that
stopped early cannot pass.

It replaces LinkChecker 10.6.0, which did the same over HTTP but took 14 s
(9 s of CPU) on this site's 173 URLs, a sixth of the test command: it
downloads and parses a page again for every distinct ``#fragment`` that
points to it (104 parses of 9 pages), and computes the text of every element
it meets. This crawl reads and parses each file once.
"""
from __future__ import annotations

import html.parser
import os
import posixpath
import re
import shutil
from collections import deque
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from booktools import i18n
from booktools.book import toc_pages

pytestmark = pytest.mark.slow

# (tag, attribute) pairs that name a URL; srcset holds a list of them.
URL_ATTRIBUTES = {
    "href": {"a", "area", "link", "base"},
    "src": {"script", "img", "iframe", "source", "embed", "audio", "video", "track", "input"},
    "srcset": {"img", "source"},
    "poster": {"video"},
    "action": {"form"},
    "formaction": {"button", "input"},
    "data": {"object"},
}
CSS_URL = re.compile(r"""url\(\s*(['"]?)(.*?)\1\s*\)|@import\s+(['"])(.*?)\3""")
REFRESH = re.compile(r"^\s*\d+\s*;\s*url\s*=\s*(.+)$", re.IGNORECASE)
SCHEMES = {"http", "https", "mailto", "data", "javascript", "tel"}


class Page(html.parser.HTMLParser):
    """One HTML file's ids and the URLs (with line numbers) it refers to."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.urls: list[tuple[int, str]] = []
        self.styles: list[tuple[int, str]] = []
        self._in_style = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        line = self.getpos()[0]
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value)
            elif name == "srcset" and tag in URL_ATTRIBUTES["srcset"]:
                self.urls += [(line, item.split()[0]) for item in value.split(",") if item.strip()]
            elif tag in URL_ATTRIBUTES.get(name, ()):
                self.urls.append((line, value))
            elif name == "style":
                self.styles.append((line, value))
        attributes = dict(attrs)
        if tag == "meta" and (attributes.get("http-equiv") or "").lower() == "refresh":
            match = REFRESH.match(attributes.get("content") or "")
            if match:
                self.urls.append((line, match.group(1).strip().strip("'\"")))
        self._in_style = tag == "style"

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.styles.append((self.getpos()[0], data))


def css_urls(text: str) -> list[str]:
    return [m.group(2) or m.group(4) for m in CSS_URL.finditer(text) if m.group(2) or m.group(4)]


def crawl(site: Path, start: str = "index.html",
          skip: tuple[str, ...] = ()) -> tuple[set[str], list[str]]:
    """Crawl the site from `start`; return (site paths reached, problems).

    Paths that start with one of `skip` (folders, "ja/") are neither checked
    nor read."""
    site = site.resolve()
    problems: list[str] = []
    pages: dict[str, Page] = {}
    reached: set[str] = set()
    anchors: list[tuple[str, str, str]] = []  # (where, target path, fragment)
    queue = deque([start])

    def read(path: str) -> Path | None:
        file = site / path
        if file.is_dir():
            file = file / "index.html"
        return file if file.is_file() and site in file.resolve().parents else None

    def follow(where: str, base: str, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme or parts.netloc:
            if parts.scheme not in SCHEMES or (parts.scheme in ("http", "https") and not parts.hostname):
                problems.append(f"{where}: malformed external URL {url!r}")
            return
        if not parts.path and not parts.fragment:
            return  # "?query" or "" on the page itself
        path = posixpath.normpath(posixpath.join(posixpath.dirname(base), unquote(parts.path))) \
            if parts.path else base
        if path.startswith("../") or path == "..":
            problems.append(f"{where}: {url!r} leaves the site")
            return
        if path.startswith(skip):
            return
        if read(path) is None:
            problems.append(f"{where}: {url!r} -> {path} does not exist")
            return
        if parts.fragment:
            anchors.append((where, path, unquote(parts.fragment)))
        if path not in reached:
            reached.add(path)
            queue.append(path)

    reached.add(start)
    while queue:
        path = queue.popleft()
        file = read(path)
        if file is None:
            problems.append(f"{path} does not exist")
            continue
        if file.suffix == ".html":
            text = file.read_text(encoding="utf-8")
            page = pages[path] = Page(text)
            for line, url in page.urls:
                follow(f"{path}:{line}", path, url)
            for line, style in page.styles:
                for url in css_urls(style):
                    follow(f"{path}:{line}", path, url)
        elif file.suffix == ".css":
            for url in css_urls(file.read_text(encoding="utf-8", errors="replace")):
                if not url.startswith("data:"):
                    follow(path, path, url)
    for where, path, fragment in anchors:
        target = read(path)
        if target.suffix != ".html":
            continue
        key = path if path in pages else posixpath.join(path, "index.html")
        if fragment not in pages[key].ids:
            problems.append(f"{where}: no id {fragment!r} in {path}")
    return reached, problems


EDITIONS = tuple(f"{lang.code}/" for lang in i18n.translations())


@pytest.fixture(scope="module")
def site_crawl(built_site):
    """(paths reached, problems) of the crawl of the built site."""
    return crawl(built_site)


def test_no_broken_internal_link_or_anchor(site_crawl):
    reached, problems = site_crawl
    assert problems == [], "\n".join(problems)
    # Every page of every edition: the language switchers link them all.
    expected = [f"{page}.html" for page in toc_pages()] + [
        i18n.site_path(lang.code, page) for page in toc_pages()
        for lang in i18n.alternates(page) if not lang.english]
    missing = [path for path in expected if path not in reached]
    assert missing == [], "pages the crawl never reached"
    # A few of the files a page needs, so that a crawl that reads no links fails too.
    assert {"_static/book.css", "_static/book.js"} <= {p.split("?")[0] for p in reached}


def link_or_copy(src, dst):
    """A hard link (fast), or a copy where the two folders are on different file systems."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


@pytest.mark.parametrize("file, old, new, problem", [
    ("chapters/intro.html", 'href="#', 'href="#no-such-', "no id 'no-such-"),
    ("chapters/intro.html", 'href="devices.html"', 'href="no-such-page.html"',
     "no-such-page.html does not exist"),
    ("chapters/intro.html", 'src="../_static/', 'src="../_static/no-such-', "no-such-"),
    ("chapters/intro.html", "</body>", '<a href="http://">x</a></body>', "malformed external URL"),
    ("index.html", "url=chapters/intro.html", "url=chapters/no-such-page.html", "no-such-page"),
    ("_static/styles/pydata-sphinx-theme.css", "url(../vendor/", "url(../vendor/no-such-",
     "no-such-"),
    ("_static/styles/theme.css", '@import "../', '@import "../no-such-', "no-such-"),
])
def test_the_crawl_finds_a_planted_problem(built_site, site_crawl, tmp_path, file, old, new,
                                           problem):
    assert site_crawl[1] == []  # the copy of the built site is clean before the plant
    site = tmp_path / "html"
    shutil.copytree(built_site, site, copy_function=link_or_copy,
                    ignore=lambda folder, names: [e.rstrip("/") for e in EDITIONS]
                    if Path(folder) == built_site else [])
    planted = site / file
    text = planted.read_text(encoding="utf-8")
    assert old in text, f"nothing to plant in {file}"
    planted.unlink()  # a new file, so that the built site's stays as it was
    planted.write_text(text.replace(old, new, 1), encoding="utf-8")
    # The English site is enough to find a plant; the editions' pages, four
    # times as many to read, are crawled once, above.
    problems = crawl(site, skip=EDITIONS)[1]
    assert problems and all(problem in p for p in problems), problems
