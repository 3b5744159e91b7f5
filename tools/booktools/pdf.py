"""Each edition's PDF, printed by Chromium (Playwright) from the built site, every build.

    python -m booktools.pdf    # after the HTML build; the site build runs it (``publish``)

COMPOSE joins an edition's pages under a cover in one browser page (singlehtml repeats ids
across chapters and misdirects their references, issue 45); ``finish`` (pikepdf) adds the
outline, metadata and ideographs for radicals. CJK prints in TrueType fonts (book.css).
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import http.server
import os
import re
import sys
import threading
import time
import unicodedata
from pathlib import Path

from filelock import FileLock, Timeout

from booktools import chromium, i18n, typography
from booktools.book import ROOT, book_config

__all__ = ["SITE", "UNITS", "site_path", "serve", "parts", "author", "finish", "comparable",
           "build", "publish", "main"]

SITE = ROOT / "_build" / "html"
MARGIN = {"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"}
# Chromium draws the footer in a page of its own: inline styles only.
FOOTER = ('<div style="width: 100%; font-size: 8pt; color: #444; text-align: center; '
          'font-family: sans-serif;"><span class="pageNumber"></span> / '
          '<span class="totalPages"></span></div>')
# What follows a number with a no-break space (regular-expression alternatives).
UNITS = "|".join(["[KMGTP]i?B/s", "[KMGTP]i?B", "[KMGTP]?FLOP/s", "[KMGTP]?FLOPs?",
                  "[KMG]Hz", "ms", "µs", "us", "ns", "s", "W", "V", "%", "×", "x", "bits?",
                  "bytes?", "GPUs?", "CPUs?", "cores?", "threads?", "processes",
                  "ビット", "バイト", "秒", "ミリ秒", "倍", "位", "字节", "毫秒", "微秒",
                  "núcleos?", "vezes"])
TIMEOUT_MS = 120_000  # per edition: loading, typesetting and printing


def site_path(code: str) -> str:
    """The PDF's path in the site: the English title as a slug and the code, beside chapters/."""
    slug = re.sub(r"[^a-z0-9]+", "-", i18n.language("en").title.lower()).strip("-")
    return f"{slug}.pdf" if code == "en" else f"{code}/{slug}-{code}.pdf"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@contextlib.contextmanager
def serve(site: Path):
    """The built site on 127.0.0.1 (a free port)."""
    handler = functools.partial(_Quiet, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()


# Run in the first chapter page that loads MathJax: the edition as one printable document.
COMPOSE = r"""async ({pages, parts, title, author, contents, units}) => {
  const make = (tag, props = {}, ...children) => {
    const el = Object.assign(document.createElement(tag), props);
    el.append(...children);
    return el;
  };
  const text = el => el.textContent.replace(/[#\u00b6]\s*$/, '').replace(/\s+/g, ' ').trim();
  const byPath = new Map(pages.map(p => [new URL(p.url).pathname, p.slug]));
  const docs = await Promise.all(pages.map(async p => {
    const response = await fetch(p.url);
    if (!response.ok) throw new Error(`${p.url}: HTTP ${response.status}`);
    return new DOMParser().parseFromString(await response.text(), 'text/html');
  }));
  // The cover: the chapters outside the parts, then each part's caption and chapters.
  const partOf = new Map(parts.flatMap((part, i) => part.slugs.map(slug => [slug, i])));
  const partLists = parts.map(() => make('ol'));
  const list = make('ol', {}, ...parts.map((part, i) => make('li', {className: 'book-pdf-part-entry'},
      make('a', {href: `#book-pdf-part-${i}`}, part.caption), partLists[i])));
  const book = make('div', {className: 'book-pdf'},
    make('section', {className: 'book-pdf-cover', id: 'book-pdf-cover'},
         make('p', {className: 'book-pdf-title'}, title),
         make('p', {className: 'book-pdf-author'}, author),
         make('nav', {ariaLabel: contents}, make('h2', {}, contents), list)));
  const outline = [];  // [level, title, id], for booktools.pdf.finish
  docs.forEach((doc, i) => {
    const {url, slug} = pages[i];
    const h1 = doc.querySelector('article.bd-article h1');
    const name = h1 ? text(h1) : slug;
    const part = partOf.get(slug);
    const level = part === undefined ? 0 : 1;
    const entry = make('li', {}, make('a', {href: `#${slug}`}, name));
    if (part === undefined) {
      list.insertBefore(entry, list.querySelector('.book-pdf-part-entry'));
    } else {
      partLists[part].append(entry);
      if (parts[part].slugs[0] === slug) {  // a page of its own opens the part
        book.append(make('section', {className: 'book-pdf-part', id: `book-pdf-part-${part}`},
                         make('h1', {}, parts[part].caption)));
        outline.push([0, parts[part].caption, `book-pdf-part-${part}`]);
      }
    }
    outline.push([level, name, slug]);
    const chapter = make('section', {className: 'book-pdf-chapter', id: slug});
    for (const selector of ['#jb-print-docs-body', 'article.bd-article']) {
      const found = doc.querySelector(selector);
      if (!found) throw new Error(`${url}: no ${selector}`);
      chapter.append(document.adoptNode(found));
    }
    // The print header's list of sections repeats the outline.
    chapter.querySelectorAll('#print-main-content, script').forEach(el => el.remove());
    chapter.querySelectorAll('details').forEach(d => d.open = true);
    for (const name of ['id', 'for', 'aria-labelledby', 'aria-describedby', 'aria-controls', 'headers']) {
      for (const el of chapter.querySelectorAll(`[${name}]`)) {  // chapters repeat ids: summary
        el.setAttribute(name, el.getAttribute(name).split(/\s+/).map(id => `${slug}--${id}`).join(' '));
      }
    }
    for (const el of chapter.querySelectorAll('[src]')) el.src = new URL(el.getAttribute('src'), url).href;
    for (const a of chapter.querySelectorAll('a[href]')) {
      const target = new URL(a.getAttribute('href'), url);
      const inBook = byPath.get(target.pathname);
      if (target.origin !== location.origin) continue;  // another site's: kept
      if (inBook === undefined) {  // a page not in this PDF (another edition): its text stays
        a.replaceWith(...a.childNodes);
      } else {
        const id = decodeURIComponent(target.hash.slice(1));
        a.setAttribute('href', id ? `#${inBook}--${id}` : `#${inBook}`);
      }
    }
    for (const heading of chapter.querySelectorAll('article.bd-article section > :is(h2, h3)')) {
      const section = heading.closest('section[id]');  // the id the heading's "#" links to
      if (section) outline.push([level + Number(heading.tagName[1]) - 1, text(heading), section.id]);
    }
    book.append(chapter);
  });
  // A number and its unit on one line, in the text and in outputs (not in code).
  const unit = new RegExp(`(\\d)[ \\u2009](?=(?:${units})(?![\\p{L}\\p{N}]))`, 'gu');
  const code = 'pre:not(.cell_output pre, .recorded-output pre), code:not(pre code), kbd, ' +
    '.math, mjx-container, script, style';
  const walker = document.createTreeWalker(book, NodeFilter.SHOW_TEXT, {acceptNode: node =>
    node.parentElement.closest(code) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    node.data = node.data.replace(unit, '$1\u00a0');
  }
  const container = document.querySelector('.bd-article-container');
  container.querySelectorAll(':scope > #jb-print-docs-body, :scope > article.bd-article')
      .forEach(el => el.remove());
  container.prepend(book);
  document.title = title;
  const broken = [];
  await Promise.all([...document.images].map(img => (img.loading = 'eager', img.decode())
      .catch(() => broken.push(img.src))));
  if (broken.length) throw new Error(`images that did not load: ${broken.join(', ')}`);
  if (window.MathJax?.startup?.promise) {
    await MathJax.startup.promise;
    MathJax.typesetClear();
    await MathJax.typesetPromise();
  }
  await document.fonts.ready;
  // A text table (booktools.ext.fixed_width_outputs) keeps its lines: book.css sizes
  // its font from its longest line.
  for (const pre of document.querySelectorAll('.book-pdf .fixed-width pre')) {
    const columns = Math.max(...pre.textContent.split('\n').map(line => line.length));
    pre.style.setProperty('--book-pdf-columns', columns);
  }
  return {outline, math: document.querySelectorAll('.book-pdf span.math, .book-pdf div.math').length,
          typeset: document.querySelectorAll('.book-pdf mjx-container').length};
}"""


def parts(code: str) -> list[dict]:
    """The edition's parts: each one's caption in its words and its chapters' names."""
    import yaml

    toc = yaml.safe_load(i18n.edition_toc(i18n.language(code)))
    pages = set(i18n.edition_pages(code))
    return [{"caption": part["caption"],
             "slugs": [c["file"].rsplit("/", 1)[-1].removesuffix(".md").removesuffix(".ipynb")
                       for c in part.get("chapters", [])
                       if c["file"].removesuffix(".md").removesuffix(".ipynb") in pages]}
            for part in toc.get("parts", [])]


def author(code: str) -> str:
    """The book's author in the edition's words (its footer's)."""
    english = book_config().get("author", "")
    return i18n.language(code).interface.get(english, english)


# A ToUnicode entry whose destination is only Kangxi or supplement radicals (U+2E80-U+2FDF).
_RADICAL_DESTINATION = re.compile(rb"(<[0-9A-Fa-f]+>\s*<)((?:2[EeFf][0-9A-Fa-f]{2})+)(>)")
# Supplement radicals have no NFKC mapping: their ideographs, from Unicode's
# EquivalentUnifiedIdeograph.txt (锁页 printed as 锁⻚).
_SUPPLEMENT = {0x2EC5: "见", 0x2EC8: "讠", 0x2EC9: "贝", 0x2ECB: "车", 0x2ED3: "长",
               0x2ED4: "门", 0x2ED8: "青", 0x2EDA: "页", 0x2EDB: "风", 0x2EDC: "飞",
               0x2EDD: "食", 0x2EE2: "马", 0x2EE5: "鱼", 0x2EE6: "鸟", 0x2EE9: "黄",
               0x2EEC: "齐", 0x2EEE: "齿"}


def _unified(match: re.Match) -> bytes:
    text = "".join(_SUPPLEMENT.get(ord(c)) or unicodedata.normalize("NFKC", c)
                   for c in bytes.fromhex(match[2].decode("ascii")).decode("utf-16-be"))
    return match[1] + text.encode("utf-16-be").hex().upper().encode("ascii") + match[3]


def _unify_radicals(document) -> None:
    """Map each CJK glyph to its ideograph, not the radical that shares it (使用, not 使⽤):
    Chromium maps a glyph to the lowest character drawn with it, and the book has no radicals."""
    seen = set()
    for page in document.pages:
        for font in (page.Resources.get("/Font") or {}).values():
            cmap = font.get("/ToUnicode")
            if cmap is None or cmap.objgen in seen:
                continue
            seen.add(cmap.objgen)
            data = cmap.read_bytes()
            unified = _RADICAL_DESTINATION.sub(_unified, data)
            if unified != data:
                cmap.write(unified)


def finish(path: Path, code: str, outline: list) -> None:
    """Add to Chromium's PDF the outline ([level, title, id], each id a named destination),
    the Author and ideographs for radicals (Chromium writes Title and Lang), with pikepdf
    (qpdf): pypdf's writer took 5-10 s of CPU an edition to copy the document first."""
    import pikepdf

    with pikepdf.open(path, allow_overwriting_input=True) as document:
        destinations = document.Root.get("/Dests") or {}  # Chromium's: in the catalog
        missing = [title for _, title, id_ in outline if f"/{id_}" not in destinations]
        if missing:
            raise RuntimeError(f"{code}: headings without a destination for the outline: "
                               f"{', '.join(missing[:5])}")
        if typography.has_cjk(i18n.language(code).title):
            _unify_radicals(document)
        numbers = {page.objgen: number for number, page in enumerate(document.pages)}
        with document.open_outline() as tree:
            parents: list = []
            for level, title, id_ in outline:
                page, _, left, top, _ = destinations[f"/{id_}"]  # [page /XYZ left top zoom]
                item = pikepdf.OutlineItem(title, numbers[page.objgen], pikepdf.PageLocation.XYZ,
                                           left=float(left), top=float(top))
                del parents[level:]
                (parents[-1].children if parents else tree.root).append(item)
                parents.append(item)
        document.Root.PageMode = pikepdf.Name.UseOutlines
        document.docinfo[pikepdf.Name.Author] = author(code)
        document.save(path, deterministic_id=True)


async def _print(browser, base: str, code: str, site: Path, target: Path) -> None:
    pages = i18n.edition_pages(code)
    shell = next((page for page in pages if "mathjax/tex-" in
                  (site / i18n.site_path(code, page)).read_text(encoding="utf-8")), pages[0])
    context = await browser.new_context(color_scheme="light", service_workers="block")
    try:
        tab = await context.new_page()
        tab.set_default_timeout(TIMEOUT_MS)
        problems: list[str] = []
        tab.on("pageerror", lambda error: problems.append(f"uncaught: {error}"))
        await tab.goto(f"{base}/{i18n.site_path(code, shell)}", wait_until="load")
        found = await tab.evaluate(COMPOSE, {
            "pages": [{"url": f"{base}/{i18n.site_path(code, page)}",
                       "slug": page.rsplit("/", 1)[-1]} for page in pages],
            "parts": parts(code), "title": i18n.language(code).title, "author": author(code),
            "contents": i18n.language(code).ui["pdf_contents"], "units": UNITS})
        if found["typeset"] < found["math"]:
            problems.append(f"math left untypeset: {found['typeset']} of {found['math']}")
        if problems:
            raise RuntimeError(f"{code}: " + "; ".join(problems))
        partial = target.with_suffix(".pdf.part")
        # Chromium's own outline doubles some titles, drops spaces at line ends and has no
        # parts: finish writes one.
        await tab.pdf(path=partial, format="A4", margin=MARGIN, print_background=True,
                      display_header_footer=True, header_template="<span></span>",
                      footer_template=FOOTER, outline=False, tagged=True)
        await asyncio.to_thread(finish, partial, code, found["outline"])
        partial.replace(target)
    finally:
        await context.close()


async def _build(codes: list[str], site: Path) -> list[Path]:
    from playwright.async_api import async_playwright

    targets = [site / site_path(code) for code in codes]
    with serve(site) as base, chromium.launch_options() as options:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(**options)
            try:  # every edition at once, each in a tab of its own
                await asyncio.gather(*(_print(browser, base, code, site, target)
                                       for code, target in zip(codes, targets)))
            finally:
                await browser.close()
    return targets


# What differs between two prints of the same pages: the time, the tags' node numbers, and
# the file's /ID (finish saves it as a hash of the bytes, the time included).
_VOLATILE = (re.compile(rb"\(D(?::|\\072)(\d{14})[^)]*\)"), re.compile(rb"\(node(\d+)\)"),
             re.compile(rb"/ID\s*\[\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>"))


def _blanked(match: re.Match) -> bytes:
    text, start = bytearray(match[0]), match.start()
    for group in range(1, len(match.groups()) + 1):
        begin, end = match.span(group)
        text[begin - start:end - start] = b"0" * (end - begin)
    return bytes(text)


def comparable(data: bytes) -> bytes:
    """A PDF's bytes with what differs between two prints blanked (_VOLATILE)."""
    for pattern in _VOLATILE:
        data = pattern.sub(_blanked, data)
    return data


def build(site: Path = SITE) -> list[Path]:
    """Print each edition's PDF into the built site (publish: where there is a Chromium)."""
    codes = [lang.code for lang in i18n.languages()]  # a page missing: FileNotFoundError
    return asyncio.run(_build(codes, site))  # Ctrl-C cancels it: Chromium closes


def publish(site: Path) -> bool:
    """Print the PDFs into site and say so, or say why none; False where the build must fail."""
    if chromium.version() is None:
        for lang in i18n.languages():  # left from a build that had Chromium: no page links them
            (site / site_path(lang.code)).unlink(missing_ok=True)
        ci = bool(os.environ.get("CI"))  # CI builds what is published: never without its PDFs
        print(f"pdf: {'FAILED' if ci else 'NO PDF PRINTED'}: no Chromium at "
              f"{chromium.executable()} (or it says no version): install Debian's package "
              f"{chromium.PACKAGE}, or name one in ${chromium.VARIABLE}; the site's pages link "
              "no PDF", file=sys.stderr)
        return not ci
    began = time.monotonic()
    try:
        printed = build(site=site)
    except Exception as error:  # noqa: BLE001 - said in one line, the build fails
        said = " ".join(str(error).split()) or type(error).__name__
        print(f"pdf: FAILED: the PDFs could not be printed ({said[:600]}) with the Chromium at "
              f"{chromium.executable()} ({chromium.version() or 'no version'}): mend or "
              f"reinstall it (Debian's package {chromium.PACKAGE}), name another in "
              f"${chromium.VARIABLE}, or build the HTML alone, without PDFs or links to them: "
              f"{chromium.VARIABLE}=/nonexistent bash scripts/build-site.sh", file=sys.stderr)
        return False
    for path in printed:
        print(f"pdf: {path.relative_to(site)} ({path.stat().st_size / 1e6:.1f} MB)")
    print(f"pdf: {len(printed)} editions in {time.monotonic() - began:.1f} s")
    return True


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(prog="python -m booktools.pdf",
                            description=__doc__.splitlines()[0]).parse_args(argv)
    try:  # the build's lock: a site build replaces the site whole, PDFs and all
        with FileLock(SITE.parent / ".lock", timeout=0):
            return 0 if publish(SITE) else 1
    except Timeout:
        print(f"pdf: another build holds {SITE.parent / '.lock'}: wait for it to end, or end it",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("pdf: interrupted; Chromium closed, no PDF half-written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
