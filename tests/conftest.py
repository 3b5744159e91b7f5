"""Fixtures shared by the book's tests."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "_build"
HTML = BUILD / "html"
BUILD_TIMEOUT = 900  # seconds; the cold build executes every chapter

# The order in which the xdist workers get the test files (scripts/test.sh
# keeps it with --no-loadscope-reorder): long files first, so that the short
# unit tests fill the gaps at the end instead of one worker running a long
# file alone while the other idles. xdist's own default orders files by their
# number of tests, which put the 44 s of tests/distributed (5 tests) last.
# The site build (one core, 4 s with _build/ in place) starts first, beside
# tests/distributed: started by the first site check later, it kept the other
# worker's browser test waiting for it. The launcher's unit tests come early
# too: they mostly wait for time limits, which costs nothing beside busy
# files, while at the end it left a core idle for 6 s. The site checks come
# before the notebooks so that chapters/distributed.ipynb, which also starts
# several processes, rarely runs beside tests/distributed.
_FIRST_TO_LAST = ("tests/test_site_build.py", "tests/distributed/",
                  "tests/unit/test_launch.py", "tests/browser/", "chapters/")


def _rank(item) -> int:
    path = item.nodeid.split("::", 1)[0]
    for rank, prefix in enumerate(_FIRST_TO_LAST):
        if path.startswith(prefix):
            return rank
    return len(_FIRST_TO_LAST) + path.startswith("tests/unit/")


def pytest_collection_modifyitems(session, config, items):
    """Long test files first, unit tests last; each file's own order kept."""
    items.sort(key=_rank)  # stable: cells of a notebook stay in order


def _run_id() -> str:
    # The same for every xdist worker of one pytest run.
    return os.environ.get("PYTEST_XDIST_TESTRUNUID", f"solo-{os.getpid()}")


@pytest.fixture(scope="session")
def site_build() -> subprocess.CompletedProcess:
    """Build the site once per test run with the README's command; return the result.

    xdist workers share one build: the first to arrive builds under a lock, the
    others wait and read its recorded result.
    """
    BUILD.mkdir(exist_ok=True)
    log = BUILD / f".site-build-{_run_id()}.log"
    with FileLock(str(BUILD / ".site-build.lock")):
        if not log.exists():
            for old in BUILD.glob(".site-build-*.log"):
                old.unlink()
            proc = subprocess.run(
                ["bash", "scripts/build-site.sh"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT,
            )
            log.write_text(f"{proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    code, _, output = log.read_text().partition("\n")
    return subprocess.CompletedProcess(["bash", "scripts/build-site.sh"], int(code), output, "")


@pytest.fixture(scope="session")
def built_site(site_build) -> Path:
    """The folder of the strictly built HTML site (skips nothing: a failed build fails)."""
    if site_build.returncode != 0:
        pytest.fail(f"the site build failed:\n{site_build.stdout[-4000:]}", pytrace=False)
    return HTML


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
