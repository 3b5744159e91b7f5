"""d2lgpu/ddp_train.py's setup under torchrun, with the process group faked.

Two CUDA GPUs and NCCL cannot be had here, so ``init_process_group`` and the
CUDA probes are replaced: the test sees which backend and which arguments the
script passes. NCCL gets ``device_id=`` (the rank's GPU) where PyTorch's
``init_process_group`` accepts it; Gloo, and an older signature, get nothing
extra, so the CPU path is what it was.
"""
from __future__ import annotations

import datetime
import importlib.util
import inspect
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[2] / "d2lgpu" / "ddp_train.py"


@pytest.fixture
def ddp_train():
    spec = importlib.util.spec_from_file_location("ddp_train_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def torchrun(monkeypatch):
    """The environment torchrun gives local rank 1 of 2."""
    for name, value in {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1",
                        "LOCAL_WORLD_SIZE": "2"}.items():
        monkeypatch.setenv(name, value)


def fake_group(monkeypatch, module, accepts_device_id=True):
    """Replace init_process_group; return the list of calls it records."""
    calls = []
    if accepts_device_id:
        def init(backend=None, timeout=None, device_id=None, **kwargs):
            calls.append({"backend": backend, "timeout": timeout,
                          "device_id": device_id, **kwargs})
    else:  # the signature of a release before device_id
        def init(backend=None, timeout=None, **kwargs):
            calls.append({"backend": backend, "timeout": timeout, **kwargs})
    monkeypatch.setattr(module.dist, "init_process_group", init)
    monkeypatch.setattr(module.dist, "get_rank", lambda: 1)
    monkeypatch.setattr(module.dist, "get_world_size", lambda: 2)
    return calls


def fake_cuda(monkeypatch, count):
    chosen = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    monkeypatch.setattr(torch.cuda, "set_device", chosen.append)
    return chosen


def test_nccl_is_given_the_ranks_gpu(monkeypatch, torchrun, ddp_train):
    calls = fake_group(monkeypatch, ddp_train)
    chosen = fake_cuda(monkeypatch, 2)
    rank, world, device, backend = ddp_train.setup(5.0)
    assert (rank, world, device, backend) == (1, 2, torch.device("cuda", 1), "nccl")
    assert chosen == [torch.device("cuda", 1)]
    assert calls == [{"backend": "nccl", "timeout": datetime.timedelta(seconds=5),
                      "device_id": torch.device("cuda", 1)}]


def test_gloo_gets_no_device_id(monkeypatch, torchrun, ddp_train):
    calls = fake_group(monkeypatch, ddp_train)
    fake_cuda(monkeypatch, 1)  # fewer GPUs than processes: the CPU and Gloo
    assert ddp_train.setup(5.0)[2:] == (torch.device("cpu"), "gloo")
    assert calls == [{"backend": "gloo", "timeout": datetime.timedelta(seconds=5),
                      "device_id": None}]


def test_a_release_without_device_id_still_joins(monkeypatch, torchrun, ddp_train):
    calls = fake_group(monkeypatch, ddp_train, accepts_device_id=False)
    fake_cuda(monkeypatch, 2)
    assert ddp_train.setup(5.0)[3] == "nccl"
    assert calls == [{"backend": "nccl", "timeout": datetime.timedelta(seconds=5)}]


@pytest.mark.skipif(
    "device_id" not in inspect.signature(torch.distributed.init_process_group).parameters,
    reason="init_process_group(device_id=) is new in PyTorch 2.3")
def test_this_pytorch_accepts_device_id(ddp_train):
    # A PyTorch with the argument: NCCL runs get it here.
    cuda1 = torch.device("cuda", 1)
    assert ddp_train.group_options("nccl", cuda1) == {"device_id": cuda1}
    assert ddp_train.group_options("gloo", torch.device("cpu")) == {}


def test_the_script_ships_with_d2lgpu_and_imports_only_torch():
    # The distributed chapter runs offline once d2lgpu is installed, and
    # torchrun starts the script by its path: no import of d2lgpu in it.
    import ast

    import d2lgpu.ddp_train
    assert Path(d2lgpu.ddp_train.__file__).resolve() == SCRIPT
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    roots = {alias.name.split(".")[0] for node in ast.walk(tree)
             if isinstance(node, ast.Import) for alias in node.names}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"relative import at line {node.lineno}"
            roots.add(node.module.split(".")[0])
    assert "d2lgpu" not in roots and "torch" in roots
    chapter = (SCRIPT.parents[1] / "chapters" / "distributed.md").read_text(
        encoding="utf-8")
    assert "urllib" not in chapter and "raw.githubusercontent" not in chapter


class Stop(Exception):
    """Raised by the fake DataLoader once it has seen its arguments."""


@pytest.mark.parametrize("device, pinned", [(torch.device("cuda", 0), True),
                                            (torch.device("cpu"), False)])
def test_batches_are_pinned_on_a_gpu_only(monkeypatch, ddp_train, device, pinned):
    # As the networks chapter's loop: pinned batches, copied without blocking.
    seen = {}

    def loader(*args, **kwargs):
        seen.update(kwargs)
        raise Stop

    monkeypatch.setattr(ddp_train, "DataLoader", loader)
    with pytest.raises(Stop):
        ddp_train.train(ddp_train.parse_args(["--out", "x.json"]), 0, 1, device,
                        "nccl" if pinned else "none", print)
    assert seen["pin_memory"] is pinned
    source = inspect.getsource(ddp_train.train)
    assert "non_blocking=pinned" in source
