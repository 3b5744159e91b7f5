"""Each edition's PDF (booktools.pdf): printed by the build, linked from its pages, readable."""
from __future__ import annotations

import html
import re
import shutil
import subprocess

import pypdf
import pytest

from booktools import chromium, i18n, pdf, typography
from booktools.book import ROOT, toc_pages
from booktools.ext import book_pdf

SITE = pdf.SITE

pytestmark = pytest.mark.slow

CODES = [lang.code for lang in i18n.languages()]
FOOTER = re.compile(r"(\d+) / (\d+)\s*$")  # booktools.pdf.FOOTER, as text


@pytest.fixture(scope="module")
def readers(built_site) -> dict[str, pypdf.PdfReader]:
    if chromium.version() is None:
        pytest.skip(f"no Chromium at {chromium.executable()}: the build printed no PDF "
                    "(.ci/packages installs Debian's chromium)")
    return {code: pypdf.PdfReader(built_site / pdf.site_path(code)) for code in CODES}


@pytest.fixture(scope="module")
def page_texts(readers):
    """Each edition's pages as text, by poppler's pdftotext (pypdf took 5 s of CPU a PDF)."""
    if shutil.which("pdftotext") is None:
        pytest.skip("no pdftotext (.ci/packages installs poppler-utils)")
    cache = {}

    def texts(code: str) -> list[str]:
        if code not in cache:
            done = subprocess.run(["pdftotext", "-enc", "UTF-8", str(SITE / pdf.site_path(code)),
                                   "-"], capture_output=True, check=True)
            cache[code] = done.stdout.decode("utf-8").split("\f")[:len(readers[code].pages)]
        return cache[code]
    return texts


def _slug(page: str) -> str:
    return page.rsplit("/", 1)[-1]


def _links(reader: pypdf.PdfReader, page: int | None = None) -> list:
    pages = reader.pages if page is None else [reader.pages[page]]
    return [a.get_object() for p in pages for a in p.get("/Annots") or []
            if a.get_object().get("/Subtype") == "/Link"]


@pytest.mark.parametrize("code", CODES)
def test_every_page_is_numbered_in_the_footer(readers, code):
    reader = readers[code]
    total = len(reader.pages)
    assert total > len(toc_pages())  # a cover, then every chapter from a page of its own
    for number in (1, total // 2, total):
        text = reader.pages[number - 1].extract_text()
        assert FOOTER.search(text) and FOOTER.search(text).groups() == (str(number), str(total))


def _with_parts(code: str) -> list[str]:
    """The toc's chapters, each part's page before its first."""
    order = []
    firsts = {part["slugs"][0]: i for i, part in enumerate(pdf.parts(code))}
    for page in toc_pages():
        if _slug(page) in firsts:
            order.append(f"book-pdf-part-{firsts[_slug(page)]}")
        order.append(_slug(page))
    return order


@pytest.mark.parametrize("code", CODES)
def test_the_cover_links_every_part_and_chapter_in_the_tocs_order(readers, code):
    reader = readers[code]
    destinations = reader.named_destinations
    cover = [str(link["/Dest"]).lstrip("/") for link in _links(reader, 0)]
    assert cover == _with_parts(code)
    starts = [reader.get_destination_page_number(destinations[f"/{slug}"]) for slug in cover]
    assert starts[0] > 0 and starts == sorted(set(starts))
    text = readers[code].pages[0].extract_text()
    lang = i18n.language(code)
    assert lang.ui["toc_main"] in text and lang.ui["toc_further"] in text


def _outline(reader: pypdf.PdfReader, outline=None, level=0) -> list[tuple[int, str]]:
    found = []
    for item in reader.outline if outline is None else outline:
        if isinstance(item, list):
            found += _outline(reader, item, level + 1)
        else:
            found.append((level, item.title))
    return found


def _headings(code: str, page: str) -> list[str]:
    """The page's chapter title and section headings (h2, h3), as the site shows them."""
    text = (SITE / i18n.site_path(code, page)).read_text(encoding="utf-8")
    article = text[text.index('<article class="bd-article"'):]
    found = re.findall(r"<h([123])>(.*?)<a class=\"headerlink\"", article, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", title)).strip() for _, title in found]


@pytest.mark.parametrize("code", CODES)
def test_the_outline_has_one_entry_per_part_chapter_and_heading(readers, code):
    outline = _outline(readers[code])
    titles = [title for _, title in outline]
    captions = [part["caption"] for part in pdf.parts(code)]
    expected = []
    for page in toc_pages():
        expected += [c["caption"] for c in pdf.parts(code) if c["slugs"][0] == _slug(page)]
        expected += _headings(code, page)
    assert titles == expected
    assert [t for _, t in outline if _ == 0] == [_headings(code, toc_pages()[0])[0], *captions]
    doubled = [t for t in titles if len(t) % 2 == 0 and t[:len(t) // 2] == t[len(t) // 2:]]
    assert doubled == []


@pytest.mark.parametrize("code", CODES)
def test_title_author_and_language_are_the_editions(readers, code):
    reader = readers[code]
    lang = i18n.language(code)
    assert reader.metadata["/Title"] == lang.title
    assert reader.metadata["/Author"] == pdf.author(code)
    assert reader.trailer["/Root"]["/Lang"] == code
    assert pdf.author(code) in reader.pages[0].extract_text()
    if code != "en":
        assert pdf.author(code) != pdf.author("en")


@pytest.mark.parametrize("code", CODES)
def test_no_switch_or_button_text_is_printed(page_texts, code):
    lang = i18n.language(code)
    words = {lang.ui["hide_code"].split("{")[0].strip(), lang.ui["show_code"].split("{")[0].strip(),
             "Copy to clipboard", "Click to show"}
    text = "".join(page_texts(code))
    # Only as often as the chapters say them (a ja docstring says ソースコードを表示する).
    chapters = ROOT / ("" if code == "en" else f"i18n/{code}") / "chapters"
    said = "".join(md.read_text(encoding="utf-8") for md in chapters.glob("*.md"))
    assert {w: text.count(w) for w in words if text.count(w) > said.count(w)} == {}


@pytest.mark.parametrize("code", CODES)
def test_a_number_and_its_unit_share_a_line(readers, page_texts, code):
    units = r"(?:[KMGT]i?B|[KMGT]?FLOP/s|ms|µs|ns|GB/s)\b"
    assert re.findall(rf"\d\n{units}", "\n".join(page_texts(code))) == []
    # pdftotext prints a no-break space as a space: pypdf shows that one joins them.
    paired = [i for i, text in enumerate(page_texts(code)) if re.search(rf"\d {units}", text)]
    assert any(re.search(rf"\d\u00a0{units}", readers[code].pages[i].extract_text())
               for i in paired[:3])


@pytest.mark.parametrize("code, families", [
    ("ja", ("BIZ UDGothic",)),
    ("zh-CN", ("AR PL UMing CN", "WenQuanYi Micro Hei"))])
def test_cjk_text_is_embedded_as_outlines_not_type3(readers, code, families):
    # Chromium embeds a TrueType font as Type 0; a CFF one (Noto Sans CJK), or a
    # bold it synthesises, as Type 3. zh-CN sets bold in a Hei face (book.css).
    import shutil
    import subprocess
    missing = [f for f in families if not shutil.which("fc-list")
               or subprocess.run(["fc-list", "-q", f]).returncode != 0]
    if missing:
        pytest.skip(f"no {', '.join(missing)} (.ci/packages installs the TrueType CJK fonts)")
    reader = readers[code]
    type3 = set()
    for page in reader.pages:
        for font in (page["/Resources"].get("/Font") or {}).values():
            font = font.get_object()
            if font["/Subtype"] == "/Type3" and "/ToUnicode" in font:
                cmap = font["/ToUnicode"].get_object().get_data().decode("latin-1")
                type3 |= {bytes.fromhex(d).decode("utf-16-be") for d in
                          re.findall(r"<[0-9A-Fa-f]+>\s*<([0-9A-Fa-f]{4})>", cmap)}
    assert {c for c in type3 if typography.has_cjk(c)} == set()


@pytest.mark.parametrize("code", CODES)
def test_every_link_inside_the_pdf_has_its_target_and_none_leads_to_the_build(readers, code):
    reader = readers[code]
    destinations = reader.named_destinations
    links = _links(reader)
    internal = [str(link["/Dest"]) for link in links if "/Dest" in link]
    urls = [str(link["/A"].get("/URI", "")) for link in links if "/A" in link]
    # Beyond the cover's: the chapters' links to each other's sections.
    assert len(internal) > 2 * len(toc_pages())
    assert [d for d in internal if d not in destinations] == []
    assert [u for u in urls if not u.startswith("https://")] == []  # nothing of 127.0.0.1


def _drawn_characters(reader: pypdf.PdfReader, pages: range) -> set[str]:
    """The characters the pages draw with a glyph of an embedded font (not a missing-glyph box)."""
    drawn = set()
    for number in pages:
        for font in (reader.pages[number]["/Resources"].get("/Font") or {}).values():
            font = font.get_object()
            if "/ToUnicode" not in font:
                continue
            cmap = font["/ToUnicode"].get_object().get_data().decode("latin-1")
            pairs = [(int(src, 16), bytes.fromhex(dst).decode("utf-16-be"))
                     for block in re.findall(r"beginbfchar(.*?)endbfchar", cmap, re.S)
                     for src, dst in re.findall(r"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block)]
            pairs += [(code, chr(int(dst, 16) + code - int(low, 16)))
                      for block in re.findall(r"beginbfrange(.*?)endbfrange", cmap, re.S)
                      for low, high, dst in re.findall(
                          r"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]{4})>", block)
                      for code in range(int(low, 16), int(high, 16) + 1)]
            if font["/Subtype"] == "/Type3":  # Chromium's form of an OpenType CFF font
                names = font["/Encoding"]["/Differences"][1:]
                procs = font["/CharProcs"]
                drawn |= {char for code, char in pairs
                          if names[code] != "/g0" and procs[names[code]].get_object().get_data()}
            else:
                descriptor = font["/DescendantFonts"][0].get_object()["/FontDescriptor"]
                if any(k in descriptor for k in ("/FontFile", "/FontFile2", "/FontFile3")):
                    drawn |= {char for code, char in pairs if code}
    return drawn


@pytest.mark.parametrize("code", [lang.code for lang in i18n.languages()
                                  if typography.has_cjk(lang.title)])
def test_a_cjk_edition_draws_its_title_with_an_embedded_cjk_font(readers, code):
    reader = readers[code]
    title = {c for c in i18n.language(code).title if typography.has_cjk(c)}
    assert title and title <= _drawn_characters(reader, range(2))


@pytest.mark.parametrize("code", CODES)
def test_the_cover_reads_as_the_title_and_the_chapters_names(readers, code):
    # Copied or searched, the text is the book's: a CJK edition's ideographs
    # are not read as the radicals that share their glyphs (pdf.finish).
    text = re.sub(r"\s+", "", readers[code].pages[0].extract_text())
    assert re.sub(r"\s+", "", i18n.language(code).title) in text
    assert not re.search("[\u2e80-\u2fdf]", text)


@pytest.mark.parametrize("code", CODES)
def test_every_page_links_its_editions_pdf_in_its_language(built_site, readers, code):
    lang = i18n.language(code)
    target = (built_site / pdf.site_path(code)).resolve()
    for page in toc_pages():
        path = built_site / i18n.site_path(code, page)
        found = re.findall(rf'<p class="{book_pdf.LINK_CLASS}"><a href="([^"]+)"[^>]*>([^<]+)</a>',
                           path.read_text(encoding="utf-8"))
        assert len(found) == 1, path
        href, text = found[0]
        assert (path.parent / html.unescape(href)).resolve() == target
        assert html.unescape(text) == lang.ui["pdf"]


def test_without_chromium_no_pdf_is_printed_or_linked(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(chromium.VARIABLE, str(tmp_path / "no-chromium"))
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(pdf, "SITE", tmp_path)
    left = tmp_path / pdf.site_path("en")
    left.write_bytes(b"%PDF- from a build that had Chromium")
    assert pdf.main([]) == 0
    assert "NO PDF PRINTED" in capsys.readouterr().err and not left.exists()
    app = type("App", (), {"config": type("Config", (), {"language": "en"})})()
    context = {"body": "<p>text</p>"}
    book_pdf.add_link(app, "chapters/intro", "page.html", context, doctree=object())
    assert context["body"] == "<p>text</p>"


def test_without_chromium_ci_fails_instead_of_publishing_no_pdf(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(chromium.VARIABLE, str(tmp_path / "no-chromium"))
    monkeypatch.setenv("CI", "true")  # as GitHub's runners set it
    monkeypatch.setattr(pdf, "SITE", tmp_path)
    assert pdf.main([]) == 1
    assert "pdf: FAILED: no Chromium" in capsys.readouterr().err


def test_radicals_of_the_supplement_map_to_their_ideographs_too():
    # ⻚ (U+2EDA) has no NFKC mapping, unlike the Kangxi radicals; the zh-CN
    # cover printed 锁⻚内存 for 锁页内存.
    import re

    from booktools import pdf
    cmap = b"<0041> <2EDA2F64>"  # one glyph to ⻚⽤, as Chromium writes it
    unified = pdf._RADICAL_DESTINATION.sub(pdf._unified, cmap)
    assert unified == b"<0041> <9875" + b"7528>"
    assert not re.search("[\u2e80-\u2fdf]", bytes.fromhex(unified[8:-1].decode()).decode("utf-16-be"))


def test_printing_alone_waits_for_no_build_and_touches_nothing_while_one_runs(
        tmp_path, monkeypatch, capsys):
    # A build replaces _build/html whole at its end: a PDF printed into it meanwhile
    # would be lost, or left from a site that no longer exists.
    from filelock import FileLock
    monkeypatch.setattr(pdf, "SITE", tmp_path / "html")
    monkeypatch.setenv(chromium.VARIABLE, str(tmp_path / "no-chromium"))  # would unlink
    monkeypatch.delenv("CI", raising=False)
    left = tmp_path / "html" / pdf.site_path("en")
    left.parent.mkdir()
    left.write_bytes(b"%PDF- of the build in progress")
    with FileLock(tmp_path / ".lock"):
        assert pdf.main([]) == 1
    assert capsys.readouterr().err.startswith("pdf: another build holds ")
    assert left.read_bytes() == b"%PDF- of the build in progress"
    assert pdf.main([]) == 0 and not left.exists()  # the lock free: it goes on
