"""Fixtures shared by the book's tests."""
from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "_build"
HTML = BUILD / "html"
BUILD_LOG = BUILD / "site-build.log"  # the site build of this test run: exit code, then output
BUILD_TIMEOUT = 600  # seconds; the build executes nothing
_BUILD_THREAD = pytest.StashKey[threading.Thread]()
_BUILD_RESULT = pytest.StashKey[tuple]()
# The tests that read the built site (a run that selects none builds nothing).
SITE_TESTS = (ROOT / "tests" / "test_site_build.py", ROOT / "tests" / "browser")

# The order in which the xdist workers get the test files (--no-loadscope-reorder
# in pyproject.toml keeps it): long ones first, so that the short unit tests
# fill the gaps at the end instead of one worker running a long file alone
# while the other idles. The launcher's tests come first: they mostly wait for
# processes and time limits, and the site build (pytest_sessionstart) fills
# that time. The notebooks follow, then the checks of the built site, which
# by then has been built; chapters/distributed.ipynb, which also starts
# several processes, comes after those, so that it rarely runs beside
# tests/distributed. A file takes the place of the longest prefix it has.
_FIRST_TO_LAST = ("tests/distributed/", "tests/unit/test_launch.py", "chapters/",
                  "tests/browser/", "chapters/distributed.ipynb")


def _rank(item) -> int:
    path = item.nodeid.split("::", 1)[0]
    matches = [(len(prefix), rank) for rank, prefix in enumerate(_FIRST_TO_LAST)
               if path.startswith(prefix)]
    if matches:
        return max(matches)[1]
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
    """Start building the site (before xdist's workers start) while the first tests run.

    Only the main process builds, and only when the run includes tests of
    the built site; it runs the README's command in the background and, when
    it ends, writes its exit code and output to _build/site-build.log, which
    the tests of the site wait for (a failed build fails them, with its
    output). The test files are ordered (_FIRST_TO_LAST) so that those tests
    come after the launcher's and most notebooks', which leave the cores idle
    part of the time: the build fills that time.
    """
    config = session.config
    if hasattr(config, "workerinput") or not _selects_site_tests(config):
        return
    BUILD.mkdir(exist_ok=True)
    BUILD_LOG.unlink(missing_ok=True)  # the tests wait for this run's log
    began = time.monotonic()
    output = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen(["bash", "scripts/build-site.sh"], cwd=ROOT, stdout=output,
                            stderr=subprocess.STDOUT, text=True)

    def finish():
        try:
            code = proc.wait(timeout=BUILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        output.seek(0)
        partial = BUILD_LOG.with_suffix(".partial")
        partial.write_text(f"{code}\n{output.read()}")
        partial.replace(BUILD_LOG)  # whole or not at all: a reader never sees half
        config.stash[_BUILD_RESULT] = (code, time.monotonic() - began)

    thread = threading.Thread(target=finish, daemon=True)
    thread.start()
    config.stash[_BUILD_THREAD] = thread


def pytest_sessionfinish(session):
    """Wait for the build (it never outlives the run) and say how it went."""
    thread = session.config.stash.get(_BUILD_THREAD, None)
    if thread is None:
        return
    thread.join()
    code, seconds = session.config.stash[_BUILD_RESULT]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        verdict = "built" if code == 0 else f"FAILED (exit {code})"
        reporter.write_line(f"site: {verdict} in {seconds:.1f} s, beside the first tests "
                            "(bash scripts/build-site.sh; output in _build/site-build.log)")


@pytest.fixture(scope="session")
def site_build() -> subprocess.CompletedProcess:
    """The site build of this test run (pytest_sessionstart): exit code and output."""
    deadline = time.monotonic() + BUILD_TIMEOUT + 60
    while not BUILD_LOG.is_file():
        if time.monotonic() > deadline:
            pytest.fail("the site build of this run never ended (pytest_sessionstart)",
                        pytrace=False)
        time.sleep(0.2)
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
