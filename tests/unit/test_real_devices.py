"""On real accelerators: the same helpers, with no faking. Skip without one."""

import contextlib

import pytest
import torch

import d2lgpu


def _cuda_count():
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _has_mps():
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


cuda = [pytest.mark.cuda,
        pytest.mark.skipif(_cuda_count() < 1, reason="needs a CUDA GPU")]
mps = [pytest.mark.mps,
       pytest.mark.skipif(not _has_mps(), reason="needs Apple's MPS device")]


@pytest.mark.parametrize("kind", [pytest.param("cuda", marks=cuda),
                                  pytest.param("mps", marks=mps)])
def test_helpers_find_the_accelerator(kind):
    assert d2lgpu.accelerator() == kind
    assert d2lgpu.try_gpu() == torch.device(kind, 0)
    assert d2lgpu.try_all_gpus()[0] == torch.device(kind, 0)
    x = torch.ones(2, 3, device=d2lgpu.try_gpu())
    assert x.device.type == kind
    assert "No accelerator" not in d2lgpu.device_report()


@pytest.mark.parametrize("kind", [pytest.param("cuda", marks=cuda),
                                  pytest.param("mps", marks=mps)])
def test_waiting_measures_the_work_and_not_waiting_does_not(kind):
    device = d2lgpu.try_gpu()
    n = 4096 if kind == "cuda" else 2048
    a = torch.randn(n, n, device=device)
    honest = d2lgpu.benchmark(torch.mm, a, a, repeat=5)
    naive = d2lgpu.benchmark(torch.mm, a, a, repeat=5, sync=False)
    # A matmul of this size takes milliseconds; launching it, microseconds.
    assert honest.median > 1e-4
    assert naive.median < honest.median


@pytest.mark.parametrize("kind", [pytest.param("cuda", marks=cuda),
                                  pytest.param("mps", marks=mps)])
def test_trainer_trains_on_the_accelerator(kind):
    torch.manual_seed(0)
    model = d2lgpu.LinearRegression()
    trainer = d2lgpu.Trainer(max_epochs=3, num_gpus=1, plot=False)
    trainer.fit(model, d2lgpu.SyntheticRegressionData(w=[2, -3.4], b=4.2))
    assert model.net.weight.device.type == kind
    assert trainer.val_loss[-1] < 1e-3


def record_host_copies(monkeypatch, around=contextlib.nullcontext):
    """Make ``Tensor.tolist`` log the device of each accelerator tensor it copies to the host, inside ``around()``; returns the log.

    CPU tensors are left out: a shuffling DataLoader's sampler calls
    ``randperm(n).tolist()`` on the CPU every epoch, which waits for no GPU.
    """
    copies, tolist = [], torch.Tensor.tolist

    def probe(self, *args, **kwargs):
        try:
            with around():
                return tolist(self, *args, **kwargs)
        finally:
            if self.device.type != "cpu":
                copies.append(self.device)

    monkeypatch.setattr(torch.Tensor, "tolist", probe)
    return copies


def test_the_copy_probe_counts_only_accelerator_tensors(monkeypatch,
                                                        on_fake_device):
    # Runs on the CPU. A shuffling DataLoader's sampler reads CPU tensors into
    # Python (randperm(n).tolist(), or .numpy() in older releases); the epoch's
    # loss log is the one copy from the accelerator, here a fake cuda:0 tensor.
    copies = record_host_copies(monkeypatch)
    loader = d2lgpu.SyntheticRegressionData(w=[2, -3.4], b=4.2).train_dataloader()
    loss_log = on_fake_device("cuda:0")
    for _ in range(3):
        for _ in loader:
            pass
        torch.arange(3).tolist()  # a CPU read of our own, whatever the sampler does
        loss_log.tolist()
    assert copies == [torch.device("cuda:0")] * 3


@contextlib.contextmanager
def _waits_allowed():
    # torch.cuda.set_sync_debug_mode("error") raises at any call that makes
    # the CPU wait for the GPU; inside this block it does not.
    torch.cuda.set_sync_debug_mode(0)
    try:
        yield
    finally:
        torch.cuda.set_sync_debug_mode("error")


@pytest.mark.cuda
@pytest.mark.skipif(_cuda_count() < 1, reason="needs a CUDA GPU")
def test_an_epoch_on_cuda_waits_only_to_copy_its_loss_log(monkeypatch):
    # Any call that makes the CPU wait for the GPU (a blocking or pageable
    # copy, .item(), ...) raises. The only wait allowed is the epoch's copy
    # of its loss log (tolist).
    torch.manual_seed(0)
    model = d2lgpu.LinearRegression()
    model(torch.ones(1, 2))  # materialise the lazy layer on the CPU
    trainer = d2lgpu.Trainer(max_epochs=3, num_gpus=1, plot=False)
    trainer.prepare_model(model)  # the one-off copy of the weights
    data = d2lgpu.SyntheticRegressionData(w=[2, -3.4], b=4.2)
    copies = record_host_copies(monkeypatch, around=_waits_allowed)
    torch.cuda.set_sync_debug_mode("error")
    try:
        trainer.fit(model, data)  # 32 training and 32 validation batches
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert copies == [torch.device("cuda:0")] * 3
    assert trainer.train_dataloader.pin_memory
    assert trainer.val_loss[-1] < 1e-3


@pytest.mark.multi_gpu
@pytest.mark.skipif(_cuda_count() < 2, reason="needs two or more CUDA GPUs")
def test_second_gpu():
    assert d2lgpu.num_gpus() == _cuda_count() >= 2
    assert d2lgpu.try_gpu(1) == torch.device("cuda:1")
    y = torch.ones(3, device=d2lgpu.try_gpu(1))
    assert y.device == torch.device("cuda:1")
    d2lgpu.synchronize("cuda:1")
    report = d2lgpu.device_report()
    assert "cuda:0:" in report and "cuda:1:" in report
