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
BUILD_PENDING = BUILD / "site-build.pending"  # while it runs: the pid of the process building
BUILD_TIMEOUT = 600  # seconds; the build executes nothing
_SITE_BUILD = pytest.StashKey["SiteBuild"]()
# The tests that read the built site (a run that selects none builds nothing).
SITE_TESTS = (ROOT / "tests" / "test_site_build.py", ROOT / "tests" / "test_pdf.py",
              ROOT / "tests" / "test_reproducible_build.py", ROOT / "tests" / "browser",
              ROOT / "tests" / "test_reader_notebooks.py")

# The order in which the xdist workers get the test files (--no-loadscope-reorder
# in pyproject.toml keeps it): long ones first, so that the short unit tests
# fill the gaps at the end instead of one worker running a long file alone
# while the other idles. While the site builds (SiteBuild, both cores), the
# workers run what needs no site and has no time bound that a busy machine
# could break: the launcher's unit tests (they mostly wait for time limits,
# and retry with a longer one on a busy machine), the notebooks and the
# longest files that need no site. Then the distributed tests, whose failing
# rank must stop within a bound (they wait for the build to end), and the
# site's checks; chapters/distributed.ipynb, which also starts several
# processes, after them, so that it rarely runs beside tests/distributed.
_FIRST_TO_LAST = ("tests/unit/test_launch.py", "chapters/", "tests/test_record_workflow.py",
                  "tests/test_repository_address.py", "tests/test_recorded_runs.py",
                  "tests/test_scheduled_checks.py", "tests/test_figures_folder.py",
                  "tests/distributed/", "tests/browser/", "tests/test_pdf.py",
                  "tests/test_site_build.py", "chapters/distributed.ipynb")


def _rank(item) -> int:
    path = item.nodeid.split("::", 1)[0]
    ranks = [rank for rank, prefix in enumerate(_FIRST_TO_LAST) if path.startswith(prefix)]
    if ranks:
        return ranks[-1]  # the most specific prefix, listed last
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


class SiteBuild:
    """The README's build command, run once by the main process while the tests run.

    Only the main process builds, and only when the run includes tests of the
    built site. The build starts with the session, in the background: the
    tests that need no site (the notebooks, the launcher's, which mostly wait)
    run beside it instead of after it. When it ends, its exit code and output
    go to _build/site-build.log, all at once; a test of the site waits for
    that file (site_build), so none reads a half-built site. While it runs,
    _build/site-build.pending names the process that builds.
    """

    def __init__(self, reporter):
        self.reporter, self.began, self.seconds = reporter, time.monotonic(), None
        BUILD.mkdir(exist_ok=True)
        BUILD_LOG.unlink(missing_ok=True)
        BUILD_PENDING.write_text(str(os.getpid()))
        self.output = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(["bash", "scripts/build-site.sh"], cwd=ROOT,
                                     stdout=self.output, stderr=subprocess.STDOUT)
        self.thread = threading.Thread(target=self._wait, daemon=True)
        self.thread.start()

    def _wait(self) -> None:
        try:
            code = self.proc.wait(timeout=BUILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.seconds = time.monotonic() - self.began
        self.output.seek(0)
        text = self.output.read().decode(errors="replace")
        BUILD.mkdir(exist_ok=True)
        partial = BUILD_LOG.with_suffix(".partial")
        partial.write_text(f"{code}\n{text}")
        os.replace(partial, BUILD_LOG)
        BUILD_PENDING.unlink(missing_ok=True)

    def finish(self, interrupted: bool) -> None:
        if interrupted and self.proc.poll() is None:
            self.proc.kill()
        self.thread.join()
        if self.reporter is not None and self.seconds is not None:
            verdict = "built" if self.proc.returncode == 0 else \
                f"FAILED (exit {self.proc.returncode})"
            self.reporter.section("site build", sep="-")
            self.reporter.write_line(f"site: {verdict} in {self.seconds:.1f} s, beside the "
                                     "tests (bash scripts/build-site.sh; output in "
                                     "_build/site-build.log)")


def pytest_sessionstart(session):
    config = session.config
    if (hasattr(config, "workerinput") or config.option.collectonly
            or not _selects_site_tests(config)):
        return  # a worker, a listing of the tests, or no test of the site: nothing to build
    config.stash[_SITE_BUILD] = SiteBuild(config.pluginmanager.get_plugin("terminalreporter"))


def pytest_sessionfinish(session, exitstatus):
    build = session.config.stash.get(_SITE_BUILD, None)
    if build is not None:
        build.finish(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)


def wait_for_the_site_build() -> None:
    """Wait while this run's site build (SiteBuild) runs: a test with a time bound that
    both busy cores could break (a failed rank must stop the others in time) waits."""
    while BUILD_PENDING.is_file() and not BUILD_LOG.is_file() and _builder_alive():
        time.sleep(0.2)


# Test files with a time bound that both busy cores could break.
BOUNDED = ("tests/distributed/",)


@pytest.fixture(scope="module", autouse=True)
def _bounded_tests_wait_for_the_site_build(request):
    if request.node.nodeid.startswith(BOUNDED):
        wait_for_the_site_build()


def _builder_alive() -> bool:
    try:
        os.kill(int(BUILD_PENDING.read_text()), 0)
    except (OSError, ValueError):
        return False
    return True


@pytest.fixture(scope="session")
def site_build() -> subprocess.CompletedProcess:
    """The site build of this test run (SiteBuild): exit code and output, once it ended."""
    deadline = time.monotonic() + BUILD_TIMEOUT + 60
    while not BUILD_LOG.is_file():
        if not BUILD_PENDING.is_file() or not _builder_alive():
            pytest.fail("the site was not built for these tests (tests/conftest.py SiteBuild)",
                        pytrace=False)
        if time.monotonic() > deadline:
            pytest.fail("the site build did not end in time", pytrace=False)
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
