"""The guides: CONTRIBUTING.md is one screen from a clone to a pull request;
MAINTAINING.md, at most MANUAL lines, has a contents list of its sections and links a
runbook per task; none names a path that does not exist, nor a fact that goes stale (a
timing, a size, a version, a commit, a cell number): they name the command that prints it."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUNBOOKS = ["chapter", "translation", "recording", "release", "gpu-runner"]
GUIDES = ["CONTRIBUTING.md", "MAINTAINING.md", *(f"runbooks/{name}.md" for name in RUNBOOKS)]
SCREEN = 45  # lines: one screen of a terminal or a laptop's browser
MANUAL = 150  # lines of MAINTAINING.md: the rest is in the runbooks and the docstrings
STALE = {
    "a timing": r"\b\d+(?:\.\d+)?\s?(?:s|ms|min|minutes?|seconds?|hours?)\b",
    "a size": r"\b\d+(?:\.\d+)?\s?[KMG]i?B\b",
    "a version": r"\b\d+\.\d+\.\d+\b",
    "a commit": r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b",
    "a cell number": r"\bcells? \d+",
}


def prose(text: str) -> str:
    """The text without code blocks, inline code and link targets."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`]*`", "", text)
    return re.sub(r"\]\([^)]*\)", "]", text)


def test_contributing_goes_from_a_clone_to_a_pull_request_in_one_screen():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    assert len(text.splitlines()) <= SCREEN
    steps = re.findall(r"^\d+\. ", text, re.M)
    assert len(steps) >= 4
    for command in ("git clone https://github.com/", "bash scripts/setup.sh",
                    "bash scripts/refresh.sh", "bash scripts/check.sh", "bash scripts/test.sh", "pull request",
                    "site-preview-", "MAINTAINING.md"):
        assert command in text, command


def test_the_maintainers_guide_lists_its_sections_and_links_a_runbook_per_task():
    text = (ROOT / "MAINTAINING.md").read_text()
    assert len(text.splitlines()) <= MANUAL
    linked = re.findall(r"\]\(runbooks/([\w-]+)\.md\)", text)
    assert set(linked) == set(RUNBOOKS)
    for when in ("each commit", "each pull request", "each release tag", "weekly"):
        assert f"| {when}" in text, when
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[0] == "Contents" and len(headings) > 8
    listed = re.findall(r"^\d+\. \[(.+?)\]\(#([^)]+)\)$", text, re.M)
    assert [title for title, _ in listed] == headings[1:]
    for title, anchor in listed:  # GitHub's anchors: lower case, punctuation dropped
        assert anchor == re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-"), title


@pytest.mark.parametrize("guide", GUIDES)
def test_a_guide_names_only_files_that_exist_and_no_fact_that_goes_stale(guide):
    text = (ROOT / guide).read_text()
    links = re.findall(r"\]\((?!https?:|#)([^)#]+)", text)
    broken = [link for link in links if not ((ROOT / guide).parent / link).exists()]
    assert not broken, f"{guide} links files that do not exist: {broken}"
    named = set(re.findall(r"`((?:scripts|tests|tools|chapters|i18n|\.github|\.ci|_static|"
                           r"runs|figures|d2lgpu)/[^`\s*<>]+)`", text))
    # NAME, CODE: placeholders; a folder the guide tells you to make and remove
    named = {p for p in named if not re.search(r"\b[A-Z]{3,}\b", p)} - {"runs/scratch-cpu"}
    missing = sorted(p for p in named if not (ROOT / p.split("::")[0].rstrip("/")).exists())
    assert not missing, f"{guide} names files that do not exist: {missing}"
    stale = [(what, m.group(0)) for what, pattern in STALE.items()
             for m in re.finditer(pattern, prose(text))]
    assert not stale, f"{guide} states facts that go stale: {stale}"


@pytest.mark.parametrize("fact", ["printing costs about 16 s", "at most 1.2 MB a page",
                                  "CUDA_TORCH_VERSION=2.14.1 then", "recorded at commit 3880a84",
                                  "cells 2, 4 and 8 differ"])
def test_the_stale_patterns_catch_what_the_old_guide_said(fact):
    assert any(re.search(pattern, prose(fact)) for pattern in STALE.values())
