"""Fixtures shared by the book's tests."""
from __future__ import annotations

import os
import subprocess
import time
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "_build"
HTML = BUILD / "html"
BUILD_LOG = BUILD / "site-build.log"  # the site build of this test run: exit code, then output
BUILD_TIMEOUT = 600  # seconds; the build executes nothing
# The tests that read the built site (a run that selects none builds nothing).
SITE_TESTS = (ROOT / "tests" / "test_site_build.py", ROOT / "tests" / "test_pdf.py",
              ROOT / "tests" / "test_reproducible_build.py", ROOT / "tests" / "browser")

# The order in which the xdist workers get the test files (--no-loadscope-reorder
# in pyproject.toml keeps it): long ones first, so that the short unit tests
# fill the gaps at the end instead of one worker running a long file alone
# while the other idles. The launcher's unit tests come early: they mostly
# wait for time limits, which costs nothing beside busy files. The site
# checks come before the notebooks so that chapters/distributed.ipynb, which
# also starts several processes, rarely runs beside tests/distributed.
_FIRST_TO_LAST = ("tests/distributed/", "tests/unit/test_launch.py", "tests/browser/",
                  "chapters/")


def _rank(item) -> int:
    path = item.nodeid.split("::", 1)[0]
    for rank, prefix in enumerate(_FIRST_TO_LAST):
        if path.startswith(prefix):
            return rank
    return len(_FIRST_TO_LAST) + path.startswith("tests/unit/")


def pytest_collection_modifyitems(session, config, items):
    """Long test files first, unit tests last; each file's own order kept."""
    items.sort(key=_rank)  # stable: cells of a notebook stay in order


def pytest_configure(config):
    # Several processes share the cores (a worker per core, a kernel or a
    # browser each). libgomp's threads, which PyTorch's CPU ops use, spin
    # while they wait for each other by default; a thread spinning on a core
    # another process needed made single cells run 50 times longer. PASSIVE
    # makes them sleep: it changes how fast, never what, is printed. Set here,
    # before any worker or kernel starts, so that plain `pytest` has it too.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _selects_site_tests(config) -> bool:
    """Whether the paths pytest was given include a test of the built site."""
    for arg in config.args:
        path = (Path(config.invocation_params.dir) / arg.split("::", 1)[0]).resolve()
        if any(path == site or path in site.parents or site in path.parents
               for site in SITE_TESTS):
            return True
    return False


def pytest_sessionstart(session):
    """Build the site, as its own step, before any test runs (and before xdist's workers start).

    Only the main process builds, and only when the run includes tests of
    the built site; it runs the README's command and keeps its exit code and
    output in _build/site-build.log for those tests (a failed build fails
    them, with its output).
    """
    config = session.config
    if hasattr(config, "workerinput") or not _selects_site_tests(config):
        return
    began = time.monotonic()
    proc = subprocess.run(["bash", "scripts/build-site.sh"], cwd=ROOT, capture_output=True,
                          text=True, timeout=BUILD_TIMEOUT)
    BUILD.mkdir(exist_ok=True)
    BUILD_LOG.write_text(f"{proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        verdict = "built" if proc.returncode == 0 else f"FAILED (exit {proc.returncode})"
        reporter.write_line(f"site: {verdict} in {time.monotonic() - began:.1f} s "
                            "(bash scripts/build-site.sh; output in _build/site-build.log)")


@pytest.fixture(scope="session")
def site_build() -> subprocess.CompletedProcess:
    """The site build of this test run (pytest_sessionstart): exit code and output."""
    if not BUILD_LOG.is_file():
        pytest.fail("the site was not built before the tests (pytest_sessionstart)", pytrace=False)
    code, _, output = BUILD_LOG.read_text().partition("\n")
    return subprocess.CompletedProcess(["bash", "scripts/build-site.sh"], int(code), output, "")


@pytest.fixture(scope="session")
def built_site(site_build) -> Path:
    """The folder of the strictly built HTML site (a failed build fails the test)."""
    if site_build.returncode != 0:
        pytest.fail(f"the site build failed:\n{site_build.stdout[-4000:]}", pytrace=False)
    return HTML


def pytest_terminal_summary(terminalreporter):
    """One line per group of skipped tests: how many, where, and why."""
    groups = defaultdict(int)
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        where = report.nodeid.split("::", 1)[0]
        where = where.rsplit("/", 1)[0] + "/" if where.startswith("tests/browser") else where
        groups[(where, reason.removeprefix("Skipped: "))] += 1
    if groups:
        terminalreporter.section("skipped, by group")
        for (where, reason), count in sorted(groups.items()):
            terminalreporter.write_line(f"{count} skipped in {where}: {reason}")


@pytest.fixture
def alive():
    """alive(pid) -> whether that process runs (a zombie has ended)."""
    def alive(pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/stat") as file:
                return file.read().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False
        except OSError:  # no /proc: ask the kernel
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return False
            return True
    return alive


@pytest.fixture
def short_grace(monkeypatch):
    """Half a second between SIGTERM and SIGKILL in d2lgpu.launch (default 3 s), to keep its tests fast."""
    import d2lgpu.launch
    monkeypatch.setattr(d2lgpu.launch, "GRACE", 0.5)
    return 0.5


@pytest.fixture
def launch_past_limit():
    """launch_past_limit(start, started, limits) -> (RunTimeout, limit, seconds).

    ``start(limit)`` launches a run that never ends by itself, with that time
    limit; ``started()`` says whether the run's processes had all started (the
    premise of a test of how they are stopped). A short first limit keeps the
    test fast; a longer one is tried only when a busy machine had not started
    them all in time, so the test neither waits long nor flakes.
    """
    from d2lgpu.launch import RunTimeout

    def run(start, started, limits):
        for limit in limits:
            began = time.monotonic()
            with pytest.raises(RunTimeout) as info:
                start(limit)
            seconds = time.monotonic() - began
            if started():
                return info.value, limit, seconds
        pytest.fail(f"the run's processes had not all started within {limits[-1]} s")
    return run
