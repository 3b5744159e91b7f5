"""Every ``run:`` step of the book's workflows calls a script of this repository.

    python -m booktools.workflows     # list the problems; exit 1 when there are any

actionlint and zizmor check the workflows themselves (.pre-commit-config.yaml,
and the lint job of the test workflow); Dependabot keeps the actions' pinned
commits current. What they do not check, this does: each shell command of a
``run:`` step is a script of the repository (run as ``bash PATH`` or
``PATH``), or one of ``STANDARD_TOOLS``, each listed with the reason it may
stand in a workflow. The steps thereby hold no logic that only runs on
GitHub: what they call is tested here.
"""
from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from booktools.book import ROOT

__all__ = ["WORKFLOWS", "STANDARD_TOOLS", "Finding", "workflow_files", "run_steps",
           "command_problems", "problems", "main"]

WORKFLOWS = ROOT / ".github" / "workflows"
# Commands a run: step may call that are not the repository's own, and why.
# Anything else must be a file of the repository.
STANDARD_TOOLS = {
    "bash": "runs a script of the repository (its first argument must be one)",
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
    """run: steps of the folder's workflows that call something other than the repository's."""
    files = workflow_files(folder)
    if not files:
        return [Finding(folder, 0, "no workflow files")]
    return command_problems(files, root)


def main(argv: list[str] | None = None) -> int:
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    found = problems()
    for finding in found:
        print(finding)
    print(f"workflows: {len(workflow_files())} files, {len(found)} problems", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
