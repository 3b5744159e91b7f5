"""A reader's recording: ``scrub`` and ``pack`` on their machine (notebooks/record.md),
``verify`` here:

    python -m booktools.contributed PATH [--base REF]    a runs/<slug> folder or a zip
    python -m booktools.contributed --base REF [--report FILE]   each runs/<slug> changed
                                                 since REF, in Markdown (the verify workflow)

PATH is runs/<slug> or the zip ``pack`` made (zipfile's CRC-32 tells a damaged file).
``verify`` refuses, one line each, what runbooks/recording.md lists; an accepted one
gets the claims it confirms and contradicts (booktools.claims). Exit 0 accepted, 1 refused.
"""
from __future__ import annotations

import argparse
import collections
import getpass
import io
import json
import os
import re
import socket
import sys
import tempfile
import zipfile
from pathlib import Path

from booktools import claims, files, runs

__all__ = ["PRIVATE", "private_problems", "scrub", "pack", "slug", "verify", "confirmed", "main",
           "verify_changed", "cli"]

# What no contributed output may hold (verify), each with what it is.
PRIVATE = [
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{40,}|hf_[A-Za-z0-9]{30,}"
                r"|(?:AKIA|ASIA)[0-9A-Z]{16}|xox[abp]-[\w-]{20,}|sk-[A-Za-z0-9_-]{32,})"),
     "a token"),
    (re.compile(r"(?i)aws_secret_access_key|\b[0-9a-f]{40,}\b"
                r"|(?<![\w/+])(?=[A-Za-z0-9+/]*[0-9])(?=[A-Za-z0-9+/]*[a-z])"
                r"(?=[A-Za-z0-9+/]*[A-Z])[A-Za-z0-9+/]{40,}={0,2}(?![\w/+])"), "a secret"),
    (re.compile(r"[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
     "an e-mail address"),
    (re.compile(r"\b(?:ip-\d+-\d+-\d+-\d+|[\w-]+(?:\.[\w-]+)*\.(?:local|internal|lan|"
                r"localdomain|amazonaws\.com|cloudapp\.net))\b|(?i:\bhost ?name\b\s*[:=])"),
     "a hostname"),
    (re.compile(r"/home/[^/\s\"']+|/Users/[^/\s\"']+|/root(?=/)|[A-Za-z]:\\+Users\\+[^\\\s\"']+"),
     "a home path"),
]
# In the files hardware cells wrote (traces hold long hex ids): only these.
PRIVATE_IN_FILES = [PRIVATE[0], PRIVATE[2], PRIVATE[4]]
COMMON_USERS = {"root", "jovyan", "user", "ubuntu", "runner", "colab", "studio-lab-user"}
ENV_SECRET = re.compile(r"TOKEN|KEY|SECRET|PASS|AUTH|CRED|USER|LOGNAME|HOST|MAIL|ADDR|_IP\b")
ENV_LINE = re.compile(r"(?m)^([A-Z_][A-Z0-9_]*)=\S.*$")  # a line of an environment dump


def _texts(cell, change=None) -> list[str]:
    """Every text a code cell's outputs hold, each replaced by change(text) where given."""
    found = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        places = [(output, key) for key in ("text", "evalue") if key in output]
        places += [(data, key) for key in data if key.startswith("text/")]
        places += [(output["traceback"], i) for i in range(len(output.get("traceback", [])))]
        for holder, key in places:
            text = holder[key] if isinstance(holder[key], str) else "".join(holder[key])
            found.append(text)
            if change:
                holder[key] = change(text)
    return [t for t in found if t]


def private_problems(text: str, where: str, patterns=PRIVATE) -> list[str]:
    """One line per private string found in text: "where: holds a token (ghp_…)"."""
    problems = []
    for pattern, what in patterns:
        found = pattern.search(text)
        if found:
            problems.append(f"{where}: holds {what} ({found.group(0)[:6]}…): remove it")
    return problems


def _replacements() -> list[tuple[re.Pattern, str]]:
    """What scrub replaces on this machine: its names, home and identifying variables."""
    host = {socket.gethostname(), socket.getfqdn()} - {"localhost", ""}
    user = {getpass.getuser()} - COMMON_USERS
    home = str(Path.home())
    found = [(re.escape(home) + r"(?![\w.-])", "~")] if home.count("/") > 1 or \
        home.startswith("/root") else []
    found += [(PRIVATE[4][0].pattern, "~")]
    found += [(r"\b" + re.escape(name) + r"\b", "<host>") for name in sorted(host, key=len)[::-1]]
    found += [(r"\b" + re.escape(name) + r"\b", "<user>") for name in user]
    found += [(re.escape(value), "<env>") for name, value in os.environ.items()
              if ENV_SECRET.search(name) and len(value) >= 8]
    found += [(ENV_LINE.pattern, r"\1=<env>")]
    found += [(p.pattern, f"<{what.split()[-1]}>") for p, what in PRIVATE if p is not PRIVATE[4][0]]
    return [(re.compile(p), r) for p, r in found]


def _scrub_text(text: str, replacements) -> str:
    for pattern, replacement in replacements:
        text = pattern.sub(replacement, text)
    return text


def scrub(folder: Path) -> list[str]:
    """Replace private strings in runs/<slug>'s outputs and files; one line per file changed."""
    import nbformat
    replacements, said = _replacements(), []
    for path in sorted(folder.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        before = json.dumps(nb, sort_keys=True)
        for cell in runs.code_cells(nb):
            _texts(cell, lambda text: _scrub_text(text, replacements))
        if json.dumps(nb, sort_keys=True) != before:
            nbformat.write(nb, path)
            said.append(f"{path.name}: private strings replaced in outputs")
    for path in sorted(p for p in (folder / runs.ARTIFACTS).rglob("*") if p.is_file()):
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            if _file_problems(data, path.name):
                path.unlink()
                said.append(f"{path.relative_to(folder)}: not text, holds a private string: "
                            "left out")
            continue
        new = _scrub_text(text, [(p, "<removed>") for p, _ in PRIVATE_IN_FILES])
        if new != text:
            path.write_text(new, encoding="utf-8")
            said.append(f"{path.relative_to(folder)}: private strings replaced")
    return said


def _file_problems(data: bytes, where: str) -> list[str]:
    return private_problems(data.decode("latin-1"), where, PRIVATE_IN_FILES)


def slug(gpu: str, platform: str) -> str:
    """A folder name from a GPU and a platform: ("Tesla T4", "colab") -> "nvidia-t4-colab"."""
    name = re.sub(r"^(nvidia\s+)?(tesla|geforce)\s+", "nvidia ", gpu.strip(), flags=re.I)
    name = re.sub(r"\b\d+\s*gb\b.*$", "", name, flags=re.I)
    words = re.findall(r"[a-z0-9]+", f"{name} {platform}".lower())
    return "-".join(dict.fromkeys(words)) or "cpu"


def pack(folder: Path, zip_path: Path) -> list[str]:
    """Zip runs/<slug>/ (run.json says what recorded it); the names it holds."""
    names = {f"runs/{folder.name}/{p.relative_to(folder).as_posix()}": p
             for p in sorted(folder.rglob("*")) if p.is_file()}
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, path in names.items():
            zf.write(path, name)
    return list(names)


def _unzip(path: Path, into: Path) -> tuple[Path | None, list[str]]:
    """Extract a packed recording; (its runs/<slug> folder, problems)."""
    with zipfile.ZipFile(path) as zf:
        names = [n for n in zf.namelist() if not n.endswith("/")]
        outside = [n for n in names if len(Path(n).parts) < 3 or Path(n).parts[0] != "runs"
                   or ".." in Path(n).parts or n.startswith("/") or "\\" in n]
        problems = [f"{path.name}:{name}: a file outside runs/<slug>/" for name in outside]
        slugs = {Path(n).parts[1] for n in names if n not in outside}
        if len(slugs) > 1:
            problems.append(f"{path.name}: files of {len(slugs)} recordings ({sorted(slugs)}); "
                            "one zip holds one runs/<slug>/")
        if problems or not slugs:
            return None, problems or [f"{path.name}: no runs/<slug>/ in it"]
        damaged = zf.testzip()
        if damaged:
            return None, [f"{path.name}:{damaged}: damaged (not its CRC-32): pack it again"]
        zf.extractall(into, names)
    return into / "runs" / slugs.pop(), problems


def _consistency(run: runs.Run, where: str) -> list[str]:
    """What runs.check_run does not see: versions and GPU facts that contradict each other."""
    meta, problems = run.meta, []
    gpus = meta.get("gpus") or []
    if gpus and not meta.get("cuda") and not any("apple" in g.lower() for g in gpus):
        problems.append(f"{where}/run.json: {len(gpus)} GPUs but no CUDA version")
    cc = meta.get("compute_capability")
    if cc is not None and (not isinstance(cc, list) or len(cc) != len(gpus)
                           or not all(re.fullmatch(r"\d+\.\d+", str(c)) for c in cc)):
        problems.append(f"{where}/run.json: compute_capability {cc!r} is not one "
                        f"'MAJOR.MINOR' per GPU ({len(gpus)})")
    # What the intro's versions cell prints, against run.json.
    said = {"torch": meta.get("torch"), "cuda": meta.get("cuda"), "GPU": str(bool(gpus))}
    printed = {key: re.compile(rf"(?m)^{label}:\s+(\S+)") for key, label in
               (("torch", "PyTorch version"), ("cuda", "built for CUDA"),
                ("GPU", "CUDA GPU usable"))}
    for chapter, nb in run.notebooks.items():
        for index, cell in enumerate(runs.code_cells(nb)):
            for key, pattern in printed.items():
                for text in _texts(cell):
                    found = pattern.search(text)
                    value = found and found.group(1).replace("None", "")
                    if found and value != said[key]:
                        problems.append(f"{where}/{chapter}.ipynb: code cell {index} printed "
                                        f"{key} {value!r}, run.json says {said[key]!r}")
        version = nb.metadata.get("language_info", {}).get("version")
        if version and meta.get("python") and version != meta["python"]:
            problems.append(f"{where}/{chapter}.ipynb: ran Python {version}, run.json says "
                            f"{meta['python']}")
    return problems


def _program_problems(run: runs.Run, root: Path, where: str) -> list[str]:
    """Recorded code cells that are not the program the named commit's chapter holds."""
    problems, commit = [], str(run.meta.get("commit", ""))
    for chapter, nb in sorted(run.notebooks.items()):
        then = runs.notebook_at(commit, chapter, root)
        if then is None:
            problems.append(f"{where}/{chapter}.ipynb: commit {commit} has no "
                            f"chapters/{chapter}.ipynb")
            continue
        ran, source = runs.code_cells(nb), runs.code_cells(then)
        if len(ran) != len(source):
            problems.append(f"{where}/{chapter}.ipynb: {len(ran)} code cells, the chapter at "
                            f"{commit} has {len(source)}")
        for index, (a, b) in enumerate(zip(ran, source)):
            if not runs.same_program(a.source, b.source):
                problems.append(f"{where}/{chapter}.ipynb: code cell {index} is not the "
                                f"program of chapters/{chapter}.ipynb at {commit}")
    return problems


def _private(run: runs.Run, where: str) -> list[str]:
    problems = []
    text = json.dumps(run.meta, ensure_ascii=False)
    problems += private_problems(re.sub(r'"commit": "[0-9a-f]+"', "", text),
                                 f"{where}/run.json")
    for chapter, nb in sorted(run.notebooks.items()):
        for index, cell in enumerate(runs.code_cells(nb)):
            for text in _texts(cell):
                problems += private_problems(text, f"{where}/{chapter}.ipynb: code cell {index}")
    for path in sorted(p for p in (run.folder / runs.ARTIFACTS).rglob("*") if p.is_file()):
        problems += _file_problems(path.read_bytes(),
                                   f"{where}/{path.relative_to(run.folder).as_posix()}")
    return list(dict.fromkeys(problems))


def verify(path: Path, root: Path = runs.ROOT, base: str | None = None) -> tuple[list[str], runs.Run | None]:
    """(problems, the recording) of a contributed folder or zip; no problems: accepted."""
    with tempfile.TemporaryDirectory() as scratch:
        if zipfile.is_zipfile(path):
            folder, problems = _unzip(path, Path(scratch))
            where = f"{path.name}:runs/{folder.name}" if folder else path.name
        else:
            folder, problems, where = path, [], f"runs/{path.name}"
            if path.resolve().parent != (root / "runs").resolve():
                problems.append(f"{path}: not a folder runs/<slug> of this checkout")
        if base is not None:
            changed = runs.git("diff", "--name-only", f"{base}...HEAD", root=root).stdout.split()
            problems += [f"{name}: changed outside runs/{folder.name}/" for name in changed
                         if folder is None or not name.startswith(f"runs/{folder.name}/")]
        if folder is None or not folder.is_dir():
            return problems or [f"{path}: no such folder or zip"], None
        try:
            run = runs.read_run(folder)
        except ValueError as error:
            said = str(error).replace(f"{scratch}/", "").replace(f"{root.resolve()}/", "")
            return problems + [said], None
        problems += [f"{where.rsplit('/', 1)[0]}/{p}" for p in runs.check_run(run, root / "chapters")]
        problems += _consistency(run, where)
        commit = str(run.meta.get("commit", ""))
        if runs.COMMIT.fullmatch(commit):
            if runs.git("merge-base", "--is-ancestor", commit, base or "HEAD",
                        root=root).returncode:
                problems.append(f"{where}/run.json: commit {commit} is not in the history of "
                                f"{base or 'HEAD'}")
            else:
                problems += _program_problems(run, root, where)
        problems += _private(run, where)
        old = runs.git("show", f"{base or 'HEAD'}:runs/{folder.name}/run.json", root=root)
        if old.returncode == 0:
            before = json.loads(old.stdout).get("gpus") or []
            if before and before != run.meta.get("gpus"):
                problems.append(f"{where}/run.json: would replace the recording of "
                                f"runs/{folder.name}/ made on {', '.join(before)} with one made "
                                f"on {', '.join(run.meta.get('gpus') or ['no GPU'])}: use "
                                "another folder name")
        return problems, run  # its notebooks are read: usable once scratch is gone


def confirmed(run: runs.Run, root: Path = runs.ROOT) -> list[claims.Result]:
    """The book's claims against this recording alone (booktools.claims)."""
    folder, recorded = root / "chapters" / "claims", root / "runs"
    machines = {p.name for p in recorded.iterdir() if p.is_dir()} if recorded.is_dir() else set()
    loaded = [c for p in sorted(folder.glob("*.yml"))
              for c in claims.load_claims(p, root, sorted(machines | {run.machine}))]
    results = claims.check_claims(loaded, root, [run])
    return [r for r in results if r.place.machine == run.machine]


def main(path: str, base: str | None = None, root: Path = runs.ROOT, out=None) -> int:
    """Verify one recording: print the problems, or the claims it confirms."""
    out = out or sys.stdout
    problems, run = verify(Path(path), root, base)
    if problems:
        print("\n".join(problems), file=out)
        print(f"verify: refused: {len(problems)} problems in {files.shown(Path(path))}", file=out)
        return 1
    order = ["contradicted", "held", "unchecked"]
    results = sorted(confirmed(run, root), key=lambda r: order.index(r.status))
    for result in results:
        print(claims.format_result(result, root), file=out)
    counts = collections.Counter(r.status for r in results)
    print(f"verify: accepted runs/{run.machine}/ ({', '.join(run.meta['gpus']) or 'no GPU'}, "
          f"{run.meta['date']}): claims {counts['held']} confirmed, {counts['contradicted']} "
          f"contradicted, {counts['unchecked']} unchecked", file=out)
    return 0


def verify_changed(base: str, root: Path = runs.ROOT, report: Path | None = None) -> int:
    """main for each runs/<slug> changed since base, in Markdown (also to report, step summary)."""
    changed = runs.git("diff", "--name-only", f"{base}...HEAD", "--", "runs/", root=root)
    folders = sorted({"/".join(Path(name).parts[:2]) for name in changed.stdout.split()})
    lines = ["## Recordings in this pull request"]
    if not folders:
        lines.append(f"No file under runs/ changed since {base}.")
    status = 0 if folders else 1
    for folder in folders:
        said = io.StringIO()
        status |= main(str(root / folder), base, root, said)
        lines += ["", f"### {folder}", "", "```", said.getvalue().rstrip("\n"), "```"]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    for path in (report, os.environ.get("GITHUB_STEP_SUMMARY")):
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a", encoding="utf-8") as out:
                out.write(text)
    return status


def cli(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.contributed",
                                     description="Verify a reader's recording (a folder or zip).")
    parser.add_argument("path", nargs="?", help="default: each runs/<slug> changed since BASE")
    parser.add_argument("--base", help="also refuse files changed since this commit outside it")
    parser.add_argument("--report", type=Path, help="without PATH: write the Markdown here too")
    args = parser.parse_args(argv)
    if not (args.path or args.base):
        parser.error("give PATH or --base")
    try:
        if args.path is None:
            return verify_changed(args.base, report=args.report)
        return main(args.path, args.base)
    except ValueError as error:  # a recording that cannot be read: said in one line
        print(f"contributed: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(cli())
