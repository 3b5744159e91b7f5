"""d2lgpu/ddp_train.py: two Gloo processes under torchrun end with the same
parameters as one plain process, and a failing rank ends the run quickly.

The two runs take the same steps on the same examples (DistributedSampler
deals one shared permutation; each of the two ranks takes half of every global
batch; DDP averages the gradients), so they differ by float rounding only.
TOLERANCE is the stated bound; on the CPU they usually agree to the last bit.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch

import d2lgpu.launch
from d2lgpu.launch import Run, port_is_free, processes_left

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "d2lgpu" / "ddp_train.py"
TOLERANCE = 1e-5  # absolute, on every parameter
LOSS_RTOL = 1e-5  # relative, on every step's loss
BOUND = 60  # seconds within which every launch must end (they take ~3-8 s)


def launch(out: Path, *args: str, nproc: int | None = 2, gloo_only: bool = True) -> Run:
    """Run the script (torchrun with nproc processes, or plainly if None), within BOUND."""
    env = {"CUDA_VISIBLE_DEVICES": ""} if gloo_only else {}  # the same Gloo/CPU path anywhere
    try:
        run = d2lgpu.launch.launch(SCRIPT, "--out", out, *args, nproc=nproc, timeout=BOUND,
                                   env=env, cwd=out.parent, check=False)
    except TimeoutError as err:
        pytest.fail(str(err))
    assert processes_left(run) == [], "processes of the run outlived it"
    return run


def plain_main():
    """The script's main(), imported here: what `python ddp_train.py` runs,
    without a Python of its own to start (3 s of importing torch and more).
    Unwrapped from torchelastic's @record, which only matters under torchrun
    and would install a fault handler in this process."""
    spec = importlib.util.spec_from_file_location("ddp_train", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main.__wrapped__


def check_ok(run: Run) -> None:
    assert run.returncode == 0, f"exit code {run.returncode}:\n{run.stderr[-3000:]}"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The DDP run (2 Gloo processes) and the single-process reference."""
    tmp = tmp_path_factory.mktemp("ddp")
    ddp = launch(tmp / "ddp.json", nproc=2)
    check_ok(ddp)
    plain_main()(["--out", str(tmp / "single.json")])  # one plain process: this one
    return {
        "ddp": json.loads((tmp / "ddp.json").read_text()),
        "single": json.loads((tmp / "single.json").read_text()),
        "ddp_stdout": ddp.stdout,
        "ddp_port": ddp.port,
        "ddp_pids": ddp.pids,
    }


def params(result: dict) -> torch.Tensor:
    return torch.tensor(result["weight"] + [result["bias"]], dtype=torch.float64)


def test_runs_are_what_they_claim(runs):
    ddp, single = runs["ddp"], runs["single"]
    assert (ddp["world_size"], ddp["backend"], ddp["per_rank_batch"]) == (2, "gloo", 16)
    assert (single["world_size"], single["backend"], single["per_rank_batch"]) == (1, "none", 32)
    assert ddp["global_batch"] == single["global_batch"] == 32
    assert len(ddp["step_loss"]) == len(single["step_loss"]) == 3 * 1024 // 32


def test_ddp_parameters_equal_single_process(runs):
    difference = (params(runs["ddp"]) - params(runs["single"])).abs().max().item()
    assert difference <= TOLERANCE, f"largest parameter difference {difference:.2e}"


def test_ddp_loss_curve_equals_single_process(runs):
    ddp = torch.tensor(runs["ddp"]["step_loss"], dtype=torch.float64)
    single = torch.tensor(runs["single"]["step_loss"], dtype=torch.float64)
    torch.testing.assert_close(ddp, single, rtol=LOSS_RTOL, atol=0)


def test_training_learned_the_true_parameters(runs):
    # Guards against two runs that agree because neither trained.
    true = torch.tensor([2.0, -3.4, 4.2], dtype=torch.float64)
    assert (params(runs["single"]) - true).abs().max().item() < 0.05


def test_only_rank0_logs_and_replicas_agree(runs):
    lines = runs["ddp_stdout"].splitlines()
    assert sum(line.startswith("world size 2") for line in lines) == 1
    assert "all_reduce(SUM): ranks held [1.0, 2.0], afterwards they hold [3.0, 3.0]" in lines
    assert "largest difference between the 2 replicas: 0.0" in lines
    assert len(runs["ddp_pids"]) == 3  # torchrun and its two workers
    if runs["ddp_port"] is not None:  # known where /proc shows the workers
        assert port_is_free(runs["ddp_port"])


def test_failed_rank_fails_fast(tmp_path):
    out = tmp_path / "failed.json"
    run = launch(out, "--fail-rank", "1", nproc=2)
    assert run.returncode != 0
    assert run.seconds < 30, f"the failed run took {run.seconds:.1f} s"
    assert run.first_failure() == "[rank 1] RuntimeError: rank 1 stops on purpose (--fail-rank 1)"
    with pytest.raises(RuntimeError, match=r"failed \(exit code 1\)\.\nFirst failure: \[rank 1\]"):
        run.check()
    assert not out.exists(), "no rank may save a result after a failure"
    if run.port is not None:
        assert port_is_free(run.port)


def test_uneven_split_is_refused(tmp_path, capsys):
    out = tmp_path / "x.json"
    with pytest.raises(ValueError, match="--batch-size 30 must split evenly over 1 processes"):
        plain_main()(["--out", str(out), "--batch-size", "30"])
    assert "[rank 0] ValueError: --batch-size 30 must split evenly" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.multi_gpu
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two or more CUDA GPUs")
def test_nccl_run_equals_single_process(tmp_path):
    ddp = launch(tmp_path / "ddp.json", nproc=2, gloo_only=False)
    single = launch(tmp_path / "single.json", nproc=None, gloo_only=False)
    check_ok(ddp)
    check_ok(single)
    ddp, single = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("ddp", "single"))
    assert (ddp["backend"], ddp["device"], single["device"]) == ("nccl", "cuda", "cuda")
    assert (params(ddp) - params(single)).abs().max().item() <= TOLERANCE
