"""The website builds strictly: zero warnings, no failing cell."""
import re
from pathlib import Path

import pytest

from booktools import i18n
from booktools.book import repository, toc_pages  # one reader of _toc.yml (tests/browser)

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def test_build_succeeds(site_build):
    assert site_build.returncode == 0, site_build.stdout[-4000:]


# ipykernel 7 prints this on every kernel start (the build talks to its kernels
# over loopback TCP); it comes from the kernel's stderr, not from Sphinx.
KERNEL_TCP_NOTICE = "[IPKernelApp] WARNING | Kernel is running over TCP without encryption."


def test_build_has_no_warnings(site_build):
    # -W already turns Sphinx warnings into a failed build; this also catches
    # what is logged as a warning without being one of Sphinx's.
    warnings = [line for line in site_build.stdout.splitlines()
                if re.search(r"\b(WARNING|ERROR|CRITICAL)\b", line)
                and not line.startswith(KERNEL_TCP_NOTICE)]
    assert warnings == []


def test_every_chapter_is_in_the_toc():
    # only_build_toc_files would silently drop a chapter missing from _toc.yml.
    chapters = {f"chapters/{p.stem}" for p in (ROOT / "chapters").glob("*.md")
                if not p.name.startswith("_")}
    assert chapters == set(toc_pages())


def test_every_toc_entry_has_a_page(built_site):
    missing = [f for f in toc_pages() if not (built_site / f"{f}.html").is_file()]
    assert missing == []
    assert (built_site / "index.html").is_file()


def test_site_ships_no_icon_script(built_site):
    # booktools.ext.site_assets: the theme's CSS draws the icons with its font.
    static = built_site / "_static"
    assert (static / "scripts" / "pydata-sphinx-theme.js").is_file()
    assert not list(static.rglob("fontawesome.js")), "the 1.5 MB icon script is shipped"
    assert "Apache License" in (static / "mathjax" / "LICENSE").read_text()  # MathJax's, shipped with it


def test_each_edition_keeps_its_build_files_to_itself(built_site):
    # A translation's myst-nb and recorded-run files once landed in the English
    # site: unlinked, and whichever edition finished last won.
    for edition in ["", *(f"{lang.code}/" for lang in i18n.translations())]:
        for name in ("jupyter_execute", "recorded_runs", ".doctrees"):
            assert not (built_site / edition / name).exists(), f"{edition}{name}"
    assert not (built_site.parent / ".html.new").exists()


def test_every_page_of_every_edition_names_the_licences(built_site):
    # html.extra_footer, linked at the repository _config.yml names (booktools.repo).
    address = repository()
    links = [f'href="{address.url}/blob/{address.branch}/{name}"'
             for name in ("LICENSE", "LICENSE-CC-BY-SA-4.0.txt")]
    editions = ["", *(f"{lang.code}/" for lang in i18n.translations())]
    pages = [built_site / f"{edition}{page}.html" for edition in editions for page in toc_pages()]
    assert len(editions) >= 4 and all(p.is_file() for p in pages)
    lacking = [str(p.relative_to(built_site)) for p in pages
               if not all(link in p.read_text().split('class="bd-footer', 1)[-1]
                          for link in links)]
    assert lacking == []


# Two blocks of the same stream, one right after the other, in a cell's output.
SPLIT_STREAM = re.compile(
    r'<div class="output (stream|stderr) ([^"]*)">\s*<div class="highlight"><pre>'
    r'(?:(?!</pre>).)*</pre></div>\s*</div>\s*<div class="output \1 \2"', re.S)


def test_what_a_cell_printed_in_parts_shows_as_one_block(built_site):
    # The stored notebooks have such parts (copies' epochs; nb_merge_streams in _config.yml).
    split = {str(page.relative_to(built_site)): len(SPLIT_STREAM.findall(page.read_text()))
             for page in built_site.rglob("*.html")}
    assert {page: n for page, n in split.items() if n} == {}
