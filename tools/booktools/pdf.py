"""The book as one PDF per edition, printed by Chromium from the built site.

    python -m booktools.pdf            # after the HTML build (scripts/build-site.sh)

Each edition's chapter pages, in _toc.yml's order, are put together in one
browser page, as they print (the site's print CSS shows every solution, every
hidden cell and every recorded tab, and wraps every line): the first page that
loads MathJax is the shell; each chapter's print header and article are
fetched and appended, their ids prefixed with the chapter's name and their
links to chapters rewritten to anchors of the document, so that Chromium keeps
them as links inside the PDF. A link to a page that is not in the PDF (another
edition) keeps its text and loses its target. A cover page lists the chapters,
each a link. MathJax typesets the whole, then Chromium prints it on A4 with
the page number and count in the footer, a document outline from the headings,
and tags; then ``finish`` adds the outline (a part, a chapter, a section
heading: one entry each), the edition's Title, Author and Language, and gives
a CJK edition's text layer its ideographs back where Chromium wrote radicals.
The cover says the book's title and author as the edition's site does, and
lists the chapters under their parts (_toc.yml, the captions in the
edition's words); each part opens on a page of its own. A number and its unit
are kept on one line (a no-break space, ``UNITS``).

One Chromium prints every edition, each in its own tab, at the same time.
An edition's PDF is printed again only when its pages, this module or the
Chromium (its path and version) changed since it was last printed: a hash of
them is kept beside the PDF. SIGTERM or Ctrl-C while printing closes Chromium
and says so in one line (``Stopped``).
Without Chromium (booktools.chromium.version: none that says its version)
nothing is printed, the command says so and succeeds (fails where $CI is set,
as on GitHub's runners), and the site's pages do not link a PDF
(booktools.ext.book_pdf decides that from the same function). When printing
fails, ``failure`` says which Chromium failed and how to build without PDFs.

Two prints of the same pages differ only where Chromium writes the time it
printed (``/CreationDate``, ``/ModDate``) and the numbers of the page's DOM
nodes in the PDF's tags (``(node00000264)``): ``comparable`` blanks those,
and nothing else (tests/test_reproducible_build.py). Each edition printed names the fonts
Chromium drew its text with: Chromium embeds an OpenType font with CFF
outlines (Noto Sans CJK, the CJK editions' font) as Type 3 fonts, which PDF
readers list without a name. Chromium's PDF (Skia) embeds TrueType outlines
(glyf) as Type 0 fonts and CFF outlines as Type 3, so book.css prints the CJK
editions in TrueType CJK fonts where they are installed (BIZ UDGothic for
Japanese, WenQuanYi Micro Hei for Chinese: .ci/packages); a bold those fonts
lack is drawn by Chromium as Type 3 too.
"""
from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import http.server
import os
import re
import sys
import threading
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path


from booktools import chromium, i18n, typography
from booktools.book import ROOT, book_config
from booktools.lock import Locked, locked

__all__ = ["SITE", "UNITS", "file_name", "site_path", "inputs_hash", "author", "parts",
           "finish", "Printed", "Stopped", "build", "serve", "failure", "WITHOUT_PDFS",
           "VOLATILE", "comparable", "main"]

SITE = ROOT / "_build" / "html"
FORMAT = "A4"  # the paper of most of the editions' readers (Letter is North America's)
MARGIN = {"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"}
# Chromium draws the footer in a page of its own: inline styles only.
FOOTER = ('<div style="width: 100%; font-size: 8pt; color: #444; text-align: center; '
          'font-family: sans-serif;"><span class="pageNumber"></span> / '
          '<span class="totalPages"></span></div>')
# What follows a number with a no-break space in the PDF's text (COMPOSE): units,
# in every edition's script (regular-expression alternatives, longest first).
UNITS = "|".join(["[KMGTP]i?B/s", "[KMGTP]i?B", "[KMGTP]?FLOP/s", "[KMGTP]?FLOPs?",
                  "[KMG]Hz", "ms", "µs", "us", "ns", "s", "W", "V", "%", "×", "x", "bits?",
                  "bytes?", "GPUs?", "CPUs?", "cores?", "threads?", "processes",
                  "ビット", "バイト", "秒", "ミリ秒", "倍", "位", "字节", "毫秒", "微秒",
                  "núcleos?", "vezes"])
TIMEOUT_MS = 120_000  # per edition: loading, typesetting and printing
# How to build the HTML alone (booktools.chromium: a missing Chromium prints nothing).
WITHOUT_PDFS = f"{chromium.VARIABLE}=/nonexistent bash scripts/build-site.sh"


def file_name(code: str) -> str:
    """The PDF's file name: the English title as a slug, then the edition's code."""
    slug = re.sub(r"[^a-z0-9]+", "-", i18n.language("en").title.lower()).strip("-")
    return f"{slug}.pdf" if code == "en" else f"{slug}-{code}.pdf"


def site_path(code: str) -> str:
    """The PDF's path from the site's root: beside the edition's chapters/ folder."""
    return file_name(code) if code == "en" else f"{code}/{file_name(code)}"


def inputs_hash(code: str, site: Path = SITE) -> str:
    """What the edition's PDF is printed from: its chapter pages (which name their
    styles and scripts with a hash of each), this module, and the Chromium that
    prints (its path and version: another or a broken one prints again)."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update(f"{chromium.executable()}\0{chromium.version()}\0".encode())
    for page in i18n.edition_pages(code):
        digest.update((site / i18n.site_path(code, page)).read_bytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class Printed:
    code: str
    path: Path
    seconds: float  # 0.0: up to date, not printed again
    fonts: tuple[str, ...] = ()  # the fonts Chromium drew the text with, most glyphs first


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@contextlib.contextmanager
def serve(site: Path):
    """The built site on 127.0.0.1 (a free port)."""
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# Run in the shell page: put the chapters together as one printable document.
COMPOSE = r"""async ({pages, parts, title, author, contents, units}) => {
  const make = (tag, props = {}, ...children) => {
    const el = Object.assign(document.createElement(tag), props);
    el.append(...children);
    return el;
  };
  const byPath = new Map(pages.map(p => [new URL(p.url).pathname, p.slug]));
  const docs = await Promise.all(pages.map(async p => {
    const response = await fetch(p.url);
    if (!response.ok) throw new Error(`${p.url}: HTTP ${response.status}`);
    return new DOMParser().parseFromString(await response.text(), 'text/html');
  }));
  const REFERENCES = ['for', 'aria-labelledby', 'aria-describedby', 'aria-controls', 'headers'];
  // The contents: the chapters outside the parts, then each part's caption and chapters.
  const list = make('ol');
  const partOf = new Map(parts.flatMap((part, i) => part.slugs.map(slug => [slug, i])));
  const partLists = parts.map(part => make('ol'));
  parts.forEach((part, i) => list.append(make('li', {className: 'book-pdf-part-entry'},
                                              make('a', {href: `#book-pdf-part-${i}`}, part.caption),
                                              partLists[i])));
  const book = make('div', {className: 'book-pdf'},
    make('section', {className: 'book-pdf-cover', id: 'book-pdf-cover'},
         make('p', {className: 'book-pdf-title'}, title),
         make('p', {className: 'book-pdf-author'}, author),
         make('nav', {ariaLabel: contents}, make('h2', {}, contents), list)));
  const outline = [];  // [level, title, id]: the PDF's outline (booktools.pdf adds it)
  const text = el => el.textContent.replace(/[#\u00b6]\s*$/, '').replace(/\s+/g, ' ').trim();
  docs.forEach((doc, i) => {
    const {url, slug} = pages[i];
    const h1 = doc.querySelector('article.bd-article h1');
    const name = h1 ? text(h1) : slug;
    const entry = make('li', {}, make('a', {href: `#${slug}`}, name));
    const part = partOf.get(slug);
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
    outline.push([part === undefined ? 0 : 1, name, slug]);
    const chapter = make('section', {className: 'book-pdf-chapter', id: slug});
    for (const selector of ['#jb-print-docs-body', 'article.bd-article']) {
      const found = doc.querySelector(selector);
      if (!found) throw new Error(`${url}: no ${selector}`);
      chapter.append(document.adoptNode(found));
    }
    // The chapter's own contents (the site's print header) repeat the outline.
    chapter.querySelectorAll('#print-main-content, script').forEach(el => el.remove());
    chapter.querySelectorAll('details').forEach(d => d.open = true);
    for (const el of chapter.querySelectorAll('[id]')) el.id = `${slug}--${el.id}`;
    for (const name of REFERENCES) {
      for (const el of chapter.querySelectorAll(`[${name}]`)) {
        el.setAttribute(name, el.getAttribute(name).split(/\s+/).map(id => `${slug}--${id}`).join(' '));
      }
    }
    for (const el of chapter.querySelectorAll('[src]')) el.src = new URL(el.getAttribute('src'), url).href;
    for (const a of chapter.querySelectorAll('a[href]')) {
      const target = new URL(a.getAttribute('href'), url);
      if (target.origin !== location.origin) continue;  // another site: kept as it is
      const inBook = byPath.get(target.pathname);
      if (inBook !== undefined) {
        const id = decodeURIComponent(target.hash.slice(1));
        a.setAttribute('href', id ? `#${inBook}--${id}` : `#${inBook}`);
      } else {  // a page this PDF does not hold (another edition): its text stays
        a.replaceWith(...a.childNodes);
      }
    }
    // Each section heading, with the id its own link (the "#" after it) targets.
    for (const heading of chapter.querySelectorAll('article.bd-article section > :is(h2, h3)')) {
      const section = heading.closest('section[id]');
      if (section) outline.push([(part === undefined ? 0 : 1) + Number(heading.tagName[1]) - 1,
                                 text(heading), section.id]);
    }
    book.append(chapter);
  });
  // A number and its unit on one line: a no-break space between them, in the
  // text (not in code, which shows what a program prints).
  const unit = new RegExp(`(\\d)[ \\u2009](?=(?:${units})(?![\\p{L}\\p{N}]))`, 'gu');
  const walker = document.createTreeWalker(book, NodeFilter.SHOW_TEXT, {acceptNode: node =>
    node.parentElement.closest('pre, code, kbd, .math, mjx-container, script, style') ?
      NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (unit.test(node.data)) node.data = node.data.replace(unit, '$1\u00a0');
    unit.lastIndex = 0;
  }
  const container = document.querySelector('.bd-article-container');
  container.querySelectorAll(':scope > #jb-print-docs-body, :scope > article.bd-article')
      .forEach(el => el.remove());
  container.prepend(book);
  document.title = title;
  for (const img of document.images) img.loading = 'eager';
  await Promise.all([...document.images].map(img => img.complete ? null :
      new Promise(done => { img.addEventListener('load', done); img.addEventListener('error', done); })));
  const broken = [...document.images].filter(img => !img.naturalWidth).map(img => img.src);
  if (broken.length) throw new Error(`images that did not load: ${broken.join(', ')}`);
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
    MathJax.typesetClear();
    await MathJax.typesetPromise();
  }
  await document.fonts.ready;
  // A text table (nvidia-smi's box: booktools.ext.fixed_width_outputs) keeps
  // its lines on paper too: book.css sizes its font from its longest line.
  for (const pre of document.querySelectorAll('.book-pdf .fixed-width pre')) {
    const columns = Math.max(...pre.textContent.split('\n').map(line => line.length));
    pre.style.setProperty('--book-pdf-columns', columns);
  }
  return {
    chapters: pages.length,
    outline,
    math: document.querySelectorAll('.book-pdf span.math, .book-pdf div.math').length,
    typeset: document.querySelectorAll('.book-pdf mjx-container').length,
  };
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


def _shell(code: str, site: Path, pages: list[str]) -> str:
    """The page whose head the PDF uses: the first that loads MathJax (or the first)."""
    for page in pages:
        if "mathjax/tex-" in (site / i18n.site_path(code, page)).read_text(encoding="utf-8"):
            return page
    return pages[0]


# A ToUnicode entry's destination made only of Kangxi radicals and CJK radical
# supplements (U+2E80-U+2FDF), as hex: <src> <dst>.
_RADICAL_DESTINATION = re.compile(r"(<[0-9A-Fa-f]+>\s*<)((?:2[EeFf][0-9A-Fa-f]{2})+)(>)")


# The CJK Radicals Supplement has no compatibility mapping (NFKC leaves it), so
# its simplified radicals that share a glyph with an ideograph the book uses
# are mapped by hand, each to its equivalent ideograph (Unicode's
# EquivalentUnifiedIdeograph.txt): 锁页 was printed 锁⻚.
_SUPPLEMENT = {0x2EC5: "见", 0x2EC8: "讠", 0x2EC9: "贝", 0x2ECB: "车", 0x2ED3: "长",
               0x2ED4: "门", 0x2ED8: "青", 0x2EDA: "页", 0x2EDB: "风", 0x2EDC: "飞",
               0x2EDD: "食", 0x2EE2: "马", 0x2EE5: "鱼", 0x2EE6: "鸟", 0x2EE9: "黄",
               0x2EEC: "齐", 0x2EEE: "齿"}


def _ideograph(c: str) -> str:
    """The ideograph a radical's glyph stands for (the character itself otherwise)."""
    if ord(c) in _SUPPLEMENT:
        return _SUPPLEMENT[ord(c)]
    return unicodedata.normalize("NFKC", c) if 0x2E80 <= ord(c) <= 0x2FDF else c


def _unified(match: re.Match) -> str:
    text = bytes.fromhex(match[2]).decode("utf-16-be")
    text = "".join(_ideograph(c) for c in text)
    return match[1] + text.encode("utf-16-be").hex().upper() + match[3]


def _unify_radicals(writer) -> int:
    """Map the PDF's CJK glyphs to the ideographs the text has, not to radicals; return how
    many fonts changed.

    Noto Sans CJK draws 用 (U+7528) and the radical ⽤ (U+2F64) with one glyph,
    and Chromium's PDF maps each glyph to the lowest character that has it: the
    radical. Copied or searched, 使用 would read 使⽤. The book's text has no
    radicals, so each goes back to its ideograph (their compatibility mapping, NFKC).
    """
    seen, changed = set(), 0
    for page in writer.pages:
        for font in (page["/Resources"].get("/Font") or {}).values():
            font = font.get_object()
            if "/ToUnicode" not in font:
                continue
            cmap = font["/ToUnicode"].get_object()
            if cmap.indirect_reference.idnum in seen:
                continue
            seen.add(cmap.indirect_reference.idnum)
            text = cmap.get_data().decode("latin-1")
            unified = _RADICAL_DESTINATION.sub(_unified, text)
            if unified != text:
                cmap.set_data(unified.encode("latin-1"))
                changed += 1
    return changed


def author(code: str) -> str:
    """The book's author as the edition's site says it (its footer: languages.yml's
    interface words for _config.yml's author)."""
    english = book_config().get("author", "")
    return i18n.language(code).interface.get(english, english)


def finish(path: Path, code: str, outline: list) -> None:
    """What Chromium's PDF lacks, as an incremental update of the file (pypdf): an outline
    of one entry per part, chapter and section heading (Chromium's own doubles some
    titles), the Title, Author and Language of the edition, and ideographs, not radicals.

    outline: [level, title, id] in the document's order, each id a named destination
    (Chromium writes one for each element a link of the document targets).
    """
    import pypdf
    from pypdf.generic import Fit, NameObject, TextStringObject

    lang = i18n.language(code)
    reader = pypdf.PdfReader(path)
    destinations = reader.named_destinations
    missing = [title for _, title, id_ in outline if f"/{id_}" not in destinations]
    if missing:
        raise RuntimeError(f"{code}: headings without a destination for the outline: "
                           f"{', '.join(missing[:5])}")
    writer = pypdf.PdfWriter(path, incremental=True)
    if typography.has_cjk(lang.title):
        _unify_radicals(writer)
    parents: list = []
    for level, title, id_ in outline:
        target = destinations[f"/{id_}"]
        del parents[level:]
        item = writer.add_outline_item(title=title,
                                       page_number=reader.get_destination_page_number(target),
                                       parent=parents[-1] if parents else None,
                                       fit=Fit.xyz(left=target.left, top=target.top))
        parents.append(item)
    writer.page_mode = "/UseOutlines"
    writer.add_metadata({"/Title": lang.title, "/Author": author(code),
                         "/Subject": lang.title})
    writer._root_object[NameObject("/Lang")] = TextStringObject(code)
    writer.write(path)


async def _fonts(tab) -> tuple[str, ...]:
    """The fonts Chromium draws the document's text with (those the PDF embeds), most glyphs first."""
    cdp = await tab.context.new_cdp_session(tab)
    await cdp.send("DOM.enable")
    await cdp.send("CSS.enable")
    root = (await cdp.send("DOM.getDocument", {"depth": 0}))["root"]["nodeId"]
    nodes = (await cdp.send("DOM.querySelectorAll", {
        "nodeId": root, "selector": ".book-pdf :is(h1, h2, p, li, pre, th, td)"}))["nodeIds"]
    glyphs: dict[str, int] = {}
    asked = [cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node}) for node in nodes]
    for found in await asyncio.gather(*asked):  # one round trip's wait, not one per node
        for font in found["fonts"]:
            name = font.get("postScriptName") or font["familyName"]
            glyphs[name] = glyphs.get(name, 0) + font["glyphCount"]
    await cdp.detach()
    return tuple(sorted(glyphs, key=glyphs.get, reverse=True))


async def _print(browser, base: str, code: str, site: Path, target: Path) -> tuple[str, ...]:
    lang = i18n.language(code)
    pages = i18n.edition_pages(code)
    context = await browser.new_context(color_scheme="light", service_workers="block")
    try:
        tab = await context.new_page()
        tab.set_default_timeout(TIMEOUT_MS)
        problems: list[str] = []
        tab.on("pageerror", lambda error: problems.append(f"uncaught: {error}"))
        await tab.goto(f"{base}/{i18n.site_path(code, _shell(code, site, pages))}",
                       wait_until="load")
        found = await tab.evaluate(COMPOSE, {
            "pages": [{"url": f"{base}/{i18n.site_path(code, page)}",
                       "slug": page.rsplit("/", 1)[-1]} for page in pages],
            "parts": parts(code), "title": lang.title, "author": author(code),
            "contents": lang.ui["pdf_contents"], "units": UNITS})
        if found["typeset"] < found["math"]:
            problems.append(f"math left untypeset: {found}")
        if problems:
            raise RuntimeError(f"{code}: " + "; ".join(problems))
        fonts = await _fonts(tab)
        partial = target.with_suffix(".pdf.part")
        await tab.pdf(path=partial, format=FORMAT, margin=MARGIN, print_background=True,
                      display_header_footer=True, header_template="<span></span>",
                      footer_template=FOOTER, outline=False, tagged=True)
        await asyncio.to_thread(finish, partial, code, found["outline"])
        partial.replace(target)
        return fonts
    finally:
        await context.close()


def _stamp(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


async def _build(codes: list[str], site: Path) -> list[Printed]:
    from playwright.async_api import async_playwright

    todo, done = {}, []
    for code in codes:
        target = site / site_path(code)
        digest = inputs_hash(code, site)
        stamp = _stamp(target)
        if target.is_file() and stamp.is_file() and stamp.read_text(encoding="utf-8") == digest:
            done.append(Printed(code, target, 0.0))
        else:
            stamp.unlink(missing_ok=True)
            todo[code] = (target, digest)
    if not todo:
        return done
    with serve(site) as base, chromium.refusing_proxy() as proxy:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(**chromium.launch_options(proxy))
            try:
                async def one(code: str) -> Printed:
                    began = time.monotonic()
                    target, digest = todo[code]
                    fonts = await _print(browser, base, code, site, target)
                    _stamp(target).write_text(digest, encoding="utf-8")
                    return Printed(code, target, time.monotonic() - began, fonts)
                done += await asyncio.gather(*(one(code) for code in todo))
            finally:
                await browser.close()
    return done


# What differs between two prints of the same pages (same lengths: offsets agree).
VOLATILE = (re.compile(rb"\(D:(\d{14})[^)]*\)"), re.compile(rb"\(node(\d+)\)"))


def comparable(data: bytes) -> bytes:
    """A PDF's bytes with its VOLATILE parts' digits blanked."""
    for pattern in VOLATILE:
        data = pattern.sub(lambda m: m[0].replace(m[1], b"0" * len(m[1])), data)
    return data


def failure(error: BaseException) -> str:
    """One line on a failed print: the error, the Chromium that failed, and what to do."""
    said = " ".join(str(error).split()) or type(error).__name__
    return (f"the PDFs could not be printed ({said[:600]}) with the Chromium at "
            f"{chromium.executable()} ({chromium.version() or 'no version'}): mend or "
            f"reinstall it (Debian's package {chromium.PACKAGE}), name another in "
            f"${chromium.VARIABLE}, or build the HTML alone, without PDFs or links to them: "
            f"{WITHOUT_PDFS}")


def build(codes: list[str] | None = None, site: Path = SITE) -> list[Printed]:
    """Print each edition's PDF into the built site (skipping those up to date)."""
    if chromium.version() is None:
        raise RuntimeError(f"no Chromium at {chromium.executable()}: install Debian's "
                           f"package {chromium.PACKAGE}, or name one in ${chromium.VARIABLE}")
    codes = codes or [lang.code for lang in i18n.languages()]
    missing = [i18n.site_path(code, page) for code in codes for page in i18n.edition_pages(code)
               if not (site / i18n.site_path(code, page)).is_file()]
    if missing:
        raise RuntimeError(f"build the site first (bash scripts/build-site.sh): "
                           f"{', '.join(missing[:3])} missing in {site}")
    return asyncio.run(_stoppable(_build(codes, site)))


class Stopped(SystemExit):
    """SIGTERM or SIGINT while printing: Chromium closed, nothing half-written kept."""


async def _stoppable(work):
    """Run work; on SIGTERM or SIGINT cancel it (closing Chromium), say so in one line and
    raise Stopped (exit status 128 + the signal), with none of the Playwright driver's
    "Task exception was never retrieved" the cancelled tasks would log."""
    import signal

    loop, task, stopped = asyncio.get_running_loop(), asyncio.current_task(), []
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}

    def stop(signum: int) -> None:
        if not stopped:
            print(f"pdf: stopped by {signal.Signals(signum).name} while printing; no PDF "
                  f"was left half-written", file=sys.stderr, flush=True)
        stopped.append(signum)
        task.cancel()

    for signum in saved:
        loop.add_signal_handler(signum, stop, signum)
    loop.set_exception_handler(lambda loop, context: None if stopped
                               else loop.default_exception_handler(context))
    try:
        return await work
    except asyncio.CancelledError:
        if stopped:
            raise Stopped(128 + stopped[0]) from None
        raise
    finally:
        for signum, handler in saved.items():
            loop.remove_signal_handler(signum)
            signal.signal(signum, handler)  # asyncio leaves the default, not the one before


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        # The build's lock: a build replaces the site whole, PDFs and all, at its end.
        with locked(SITE.parent, who="pdf"):
            return _print_into_the_site()
    except Locked as error:
        print(error, file=sys.stderr)
        return 1


def _print_into_the_site() -> int:
    began = time.monotonic()
    if chromium.version() is None:
        for lang in i18n.languages():  # left from a build that had Chromium: no page links them
            (SITE / site_path(lang.code)).unlink(missing_ok=True)
        ci = bool(os.environ.get("CI"))  # CI builds what is published: never without its PDFs
        print(f"pdf: {'FAILED' if ci else 'NO PDF PRINTED'}: no Chromium at "
              f"{chromium.executable()} (install Debian's package {chromium.PACKAGE}, or name "
              f"one in ${chromium.VARIABLE}); the site's pages link no PDF", file=sys.stderr)
        return 1 if ci else 0
    try:
        printed = build()
    except Exception as error:  # noqa: BLE001 - said in one line, the build fails
        print(f"pdf: FAILED: {failure(error)}", file=sys.stderr)
        return 1
    for p in printed:
        what = f"printed in {p.seconds:.1f} s" if p.seconds else "up to date"
        shown = p.path.relative_to(ROOT) if p.path.is_relative_to(ROOT) else p.path
        fonts = f"; fonts: {', '.join(p.fonts)}" if p.fonts else ""
        print(f"pdf: {shown} ({p.path.stat().st_size / 1e6:.1f} MB) {what}{fonts}")
    print(f"pdf: {len(printed)} editions in {time.monotonic() - began:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
