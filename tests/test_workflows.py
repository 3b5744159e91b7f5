"""The GitHub Actions workflows: every run: step calls a script of this repository (here;
actionlint and zizmor check the rest as commit hooks, .pre-commit-config.yaml); every action
pinned by commit; what each workflow must do for the book; Dependabot keeps them and the pins
current."""
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
PINNED = re.compile(r"uses: ([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # v\d+(?:\.\d+){0,2}$")
# A run: step is one line that runs a script or a booktools command of the repository,
# with arguments but no other command, so that no logic runs only on GitHub: what it
# calls is tested here. The record workflow's propose job empties the folder a recording
# replaces (REMOVE).
STEP = re.compile(r"(?:bash ((?:scripts|\.ci)/[\w.-]+)|\.venv/bin/python -m (booktools\.\w+))"
                  r"(?: (?:[^&|;<>`$\n]|\$(?!\())*)?")
REMOVE = 'rm -rf -- "runs/$MACHINE"'


def load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / f"{name}.yml").read_text())


def run_steps(name: str) -> list[str]:
    return [step["run"] for job in load(name)["jobs"].values()
            for step in job.get("steps", []) if "run" in step]


def calls_a_script(run: str) -> bool:
    match = STEP.fullmatch(run.strip())
    if match and match[2]:
        return (ROOT / "tools" / f"{match[2].replace('.', '/')}.py").is_file()
    return bool(match) and (ROOT / match[1]).is_file()


def test_every_run_step_calls_a_script_of_the_repository():
    names = {path.stem for path in WORKFLOWS.glob("*.y*ml")}
    assert names == {"test", "publish", "record", "links", "colab", "verify"}
    steps = {name: run_steps(name) for name in names}
    # The test job is the README's test command, through CI's own script.
    assert steps["test"] == ["bash .ci/run"]
    assert steps["publish"] == ['bash scripts/build-dist.sh "$TAG"']
    assert steps["verify"] == [
        "bash scripts/setup.sh",
        '.venv/bin/python -m booktools.contributed --base "$BASE" --report "$REPORT"']
    assert steps["record"].count(REMOVE) == 1
    assert [(name, run) for name in names for run in steps[name]
            if not calls_a_script(run) and run != REMOVE] == []


@pytest.mark.parametrize("run", ["make deploy", "bash scripts/nope.sh",
                                 "bash scripts/build-dist.sh && curl -s https://x.org | sh",
                                 "bash .ci/run\nbash .ci/packages", "bash -c 'rm -rf /'",
                                 "bash scripts/build-dist.sh $(curl -s https://x.org)",
                                 ".venv/bin/python -m booktools.nope",
                                 ".venv/bin/python -m booktools.runs stale; curl x.org"])
def test_a_run_step_with_other_commands_is_refused(run):
    assert not calls_a_script(run)


def test_every_action_is_pinned_by_commit_with_its_version_beside_it():
    for path in WORKFLOWS.glob("*.y*ml"):
        for line in path.read_text().splitlines():
            if "uses:" in line and "uses: ./" not in line:
                assert PINNED.search(line.split("- ", 1)[-1].strip()), f"{path.name}: {line}"


def test_ci_runs_the_oldest_and_the_newest_python():
    test = load("test")
    assert test["jobs"]["test"]["strategy"]["matrix"]["python"] == ["3.11", "3.13"]
    readme = (ROOT / "README.md").read_text()
    assert "3.11" in readme and "3.13" in readme


def test_pull_requests_get_a_preview_and_main_is_never_cancelled():
    test = load("test")
    on = test[True]  # YAML reads the key `on` as True
    assert on["push"] == {"branches": ["main"]} and "pull_request" in on
    assert on["workflow_call"]["inputs"]["publish"]["type"] == "boolean"
    assert test["concurrency"]["cancel-in-progress"] == \
        "${{ github.event_name == 'pull_request' }}"
    steps = test["jobs"]["test"]["steps"]
    preview = next(s for s in steps if s.get("with", {}).get("path") == "_build/html"
                   and "upload-artifact" in s.get("uses", ""))
    assert preview["if"].startswith("github.event_name == 'pull_request'")
    # No cache: the site a release deploys is built from nothing a pull request wrote.
    assert not any("cache" in s.get("with", {}) for s in steps)
    env = test["jobs"]["test"]["env"]
    # The publish-only checks: axe on every page, and a second cold build.
    assert env["BOOK_AXE"] == "${{ inputs.publish && 'all' || '' }}"
    assert env["BOOK_BUILD_TWICE"] == "${{ inputs.publish && '1' || '' }}"


def test_a_release_deploys_the_site_its_tests_built_and_publishes_d2lgpu():
    publish = load("publish")
    assert publish[True] == {"push": {"tags": ["v*"]}}
    assert publish["permissions"] == {"contents": "read"}
    jobs = publish["jobs"]
    assert jobs["test"] == {"uses": "./.github/workflows/test.yml", "with": {"publish": True}}
    kept = next(s for s in load("test")["jobs"]["test"]["steps"]
                if s.get("with", {}).get("name") == "site")
    assert kept["uses"].startswith("actions/upload-pages-artifact@")
    assert kept["with"] == {"name": "site", "path": "_build/html"}
    assert kept["if"] == "inputs.publish && matrix.python == '3.11'"
    pages = jobs["pages"]
    assert pages["needs"] == "test" and pages["permissions"] == {"pages": "write",
                                                                "id-token": "write"}
    assert [s["uses"].split("@")[0] for s in pages["steps"]] == ["actions/deploy-pages"]
    assert pages["steps"][0]["with"] == {"artifact_name": "site"}
    assert jobs["dist"]["needs"] == "test" and "permissions" not in jobs["dist"]
    pypi = jobs["pypi"]
    assert pypi["permissions"] == {"id-token": "write"} and pypi["environment"]["name"] == "pypi"
    assert pypi["steps"][-1]["uses"].startswith("pypa/gh-action-pypi-publish@")


def test_the_link_check_writes_issues_only_from_its_report_job():
    links = load("links")
    assert links["permissions"] == {"contents": "read"}
    assert "permissions" not in links["jobs"]["links"]
    assert links["jobs"]["report"]["permissions"] == {"contents": "read", "issues": "write"}


@pytest.mark.parametrize("name, cron", [("links", "17 5 * * 1"), ("colab", "41 4 * * 1")])
def test_the_weekly_checks_report_a_failure_in_an_issue(name, cron):
    workflow = load(name)
    assert workflow[True]["schedule"] == [{"cron": cron}]
    report = [step for job in workflow["jobs"].values() for step in job["steps"]
              if step.get("uses", "").startswith("JasonEtco/create-an-issue@")]
    assert len(report) == 1 and report[0]["env"]["GITHUB_TOKEN"] == "${{ github.token }}"
    assert report[0]["with"] == {"filename": ".github/failure-issue.md", "update_existing": True}
    artifact = next(s["with"] for j in workflow["jobs"].values() for s in j["steps"]
                    if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert Path(artifact["path"]).name == report[0]["env"]["REPORT"]
    job = next(j for j in workflow["jobs"].values() if report[0] in j["steps"])
    assert "failure()" in (report[0].get("if", "") + job.get("if", ""))
    assert {**workflow.get("permissions", {}), **job.get("permissions", {})}["issues"] == "write"
    if name == "colab":
        assert workflow["jobs"]["colab"]["container"]["image"].startswith(
            "us-docker.pkg.dev/colab-images/public/runtime")


def test_dependabot_updates_actions_pins_and_npm_weekly_and_pip_in_one_group():
    config = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text())
    assert config["version"] == 2
    updates = {u["package-ecosystem"]: u for u in config["updates"]}
    assert set(updates) == {"github-actions", "pip", "npm"}
    assert all(u["schedule"]["interval"] == "weekly" and u["directory"] == "/"
               for u in updates.values())
    for manifest in ("requirements.txt", "package.json", "package-lock.json",
                     ".github/workflows/test.yml"):
        assert (ROOT / manifest).is_file()
    assert updates["pip"]["groups"] == {"pip": {"patterns": ["*"]}}


def test_publish_pushes_the_reader_notebooks_to_the_branch_the_launch_buttons_open():
    from booktools.book import NOTEBOOK_BRANCH
    jobs = load("publish")["jobs"]
    push = jobs["notebooks"]["steps"][-1]
    assert push["uses"].startswith("JamesIves/github-pages-deploy-action@")
    assert push["with"]["branch"] == NOTEBOOK_BRANCH
    assert push["with"]["folder"] == jobs["notebooks"]["steps"][-2]["with"]["path"]
    assert jobs["notebooks"]["needs"] == "test"
    assert jobs["notebooks"]["permissions"] == {"contents": "write"}
    assert not any("contents" in (job.get("permissions") or {}) for name, job in jobs.items()
                   if name != "notebooks"), "only the notebooks job may push"


def test_a_proposed_recording_is_verified_read_only_and_reported_by_another_job():
    verify = load("verify")
    assert verify[True] == {"pull_request": {"paths": ["runs/**"]}}
    assert verify["permissions"] == {"contents": "read"}
    assert "secrets." not in str(verify)  # no secret reaches either job
    jobs = verify["jobs"]
    assert "permissions" not in jobs["verify"]  # the workflow's: read only
    assert jobs["report"]["permissions"] == {"contents": "read", "pull-requests": "write"}
    assert jobs["report"]["needs"] == "verify"
    # The job that may write runs no code of the repository: it posts the report alone,
    # and a fork's read-only token, which cannot, fails no check.
    download, comment = jobs["report"]["steps"]
    assert download["uses"].startswith("actions/download-artifact@")
    assert comment["uses"].startswith("peter-evans/create-or-update-comment@")
    assert comment["with"] == {"issue-number": "${{ github.event.pull_request.number }}",
                               "body-path": "${{ runner.temp }}/report/verify.md"}
    assert comment["continue-on-error"] is True
    assert all(s.get("with", {}).get("persist-credentials") is False
               for job in jobs.values() for s in job["steps"] if "checkout" in s.get("uses", ""))
    form = yaml.safe_load((ROOT / ".github" / "ISSUE_TEMPLATE" / "recording.yml").read_text())
    assert any("verify" in str(item) for item in form["body"])
