"""Training on a device: data, model, Trainer, and its loss log's host copies."""

import inspect
import re
import warnings

import pytest
import torch
from torch import nn

import d2lgpu

W, B = [2.0, -3.4], 4.2


def train_linear_regression(max_epochs=3, seed=0, **trainer_kwargs):
    torch.manual_seed(seed)  # LazyLinear draws its initial weights on first use
    data = d2lgpu.SyntheticRegressionData(w=W, b=B, seed=seed)
    model = d2lgpu.LinearRegression(lr=0.03)
    trainer = d2lgpu.Trainer(max_epochs=max_epochs, plot=False, **trainer_kwargs)
    trainer.fit(model, data)
    return trainer, model


# --- SyntheticRegressionData. --------------------------------------------------

def test_synthetic_data_follows_the_model():
    data = d2lgpu.SyntheticRegressionData(w=W, b=B, noise=0.01, num_train=600,
                                          num_val=400, batch_size=50, seed=3)
    assert data.X.shape == (1000, 2) and data.y.shape == (1000, 1)
    residual = data.y - (data.X @ torch.tensor(W).reshape(-1, 1) + B)
    assert residual.abs().max() < 0.06  # noise 0.01: 6 sigma
    assert 0.008 < residual.std() < 0.012
    train, val = data.train_dataloader(), data.val_dataloader()
    assert len(train) == 12 and len(val) == 8
    X, y = next(iter(val))
    assert torch.equal(X, data.X[600:650])  # validation is not shuffled


def test_synthetic_data_is_seeded_without_touching_the_global_rng():
    state = torch.get_rng_state()
    a = d2lgpu.SyntheticRegressionData(w=W, b=B, seed=1)
    batches_a = [X for X, _ in a.train_dataloader()]
    assert torch.equal(torch.get_rng_state(), state)
    b = d2lgpu.SyntheticRegressionData(w=W, b=B, seed=1)
    batches_b = [X for X, _ in b.train_dataloader()]
    c = d2lgpu.SyntheticRegressionData(w=W, b=B, seed=2)
    assert torch.equal(a.X, b.X) and not torch.equal(a.X, c.X)
    assert all(torch.equal(p, q) for p, q in zip(batches_a, batches_b))
    assert not torch.equal(batches_a[0], a.X[:32])  # training data is shuffled


def test_synthetic_data_without_validation():
    data = d2lgpu.SyntheticRegressionData(w=W, b=B, num_val=0)
    assert data.val_dataloader() is None


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(w=[]), ValueError, "w must be a non-empty 1-D sequence"),
    (dict(w=[[1.0, 2.0]]), ValueError, "w must be a non-empty 1-D sequence"),
    (dict(noise=-1), ValueError, "noise must be a finite number >= 0"),
    (dict(num_train=0), ValueError,
     "SyntheticRegressionData(num_train): num_train must be an int >= 1, got 0"),
    (dict(num_val=-1), ValueError, "num_val must be a non-negative int, got -1"),
    (dict(batch_size=2.5), TypeError, "batch_size must be an int >= 1, got 2.5"),
    (dict(seed="0"), TypeError, "seed must be a non-negative int, got '0'"),
    (dict(b="4.2"), TypeError,
     "SyntheticRegressionData(b): b must be a finite number, got '4.2'"),
    (dict(b=float("inf")), ValueError, "b must be a finite number, got inf"),
])
def test_synthetic_data_bad_input(kwargs, error, message):
    args = dict(w=W, b=B) | kwargs
    with pytest.raises(error, match=re.escape(message)):
        d2lgpu.SyntheticRegressionData(**args)


# --- Module and DataModule. --------------------------------------------------

def test_module_base_class_says_what_is_missing():
    module = d2lgpu.Module()
    with pytest.raises(NotImplementedError, match="has no self.net"):
        module(torch.ones(1))
    with pytest.raises(NotImplementedError, match=r"loss\(y_hat, y\)"):
        module.loss(1, 1)
    with pytest.raises(NotImplementedError, match=r"configure_optimizers\(\)"):
        module.configure_optimizers()
    with pytest.raises(NotImplementedError, match=r"get_dataloader\(train\)"):
        d2lgpu.DataModule().train_dataloader()


def test_linear_regression_steps():
    torch.manual_seed(0)
    model = d2lgpu.LinearRegression(lr=0.1)
    X, y = torch.randn(8, 2), torch.randn(8, 1)
    loss = model.training_step((X, y))
    assert loss.shape == () and loss.requires_grad
    assert torch.allclose(loss, ((model(X) - y) ** 2).mean())
    assert torch.equal(model.validation_step((X, y)), loss.detach())
    optim = model.configure_optimizers()
    assert isinstance(optim, torch.optim.SGD)
    assert optim.param_groups[0]["lr"] == 0.1
    with pytest.raises(ValueError, match=re.escape(
            "LinearRegression(lr): lr must be a finite number >= 0, got -0.1")):
        d2lgpu.LinearRegression(lr=-0.1)


# --- Trainer: training works. ------------------------------------------------

def test_trainer_fits_linear_regression_on_the_cpu():
    trainer, model = train_linear_regression(max_epochs=3)
    assert trainer.device == torch.device("cpu") and trainer.gpus == []
    assert len(trainer.train_loss) == len(trainer.val_loss) == 3
    assert trainer.val_loss[0] > trainer.val_loss[1] > trainer.val_loss[2]
    assert trainer.val_loss[-1] < 1e-3  # noise 0.01 puts the floor at 1e-4
    w, b = model.get_w_b()
    assert torch.allclose(w.reshape(-1), torch.tensor(W), atol=0.05)
    assert abs(b.item() - B) < 0.05
    assert all(isinstance(v, float) for v in trainer.train_loss + trainer.val_loss)
    assert model.trainer is trainer


def test_trainer_is_deterministic():
    first, _ = train_linear_regression(max_epochs=2, seed=5)
    second, _ = train_linear_regression(max_epochs=2, seed=5)
    assert first.train_loss == second.train_loss
    assert first.val_loss == second.val_loss


def test_fit_again_starts_a_new_log():
    trainer, model = train_linear_regression(max_epochs=2)
    trainer.fit(model, d2lgpu.SyntheticRegressionData(w=W, b=B))
    assert len(trainer.train_loss) == 2 and trainer.host_transfers == 2


# --- Trainer: the loss log stays on the device. -------------------------------

class ListData(d2lgpu.DataModule):
    """Batches as plain lists of tensors: no DataLoader, no sampler."""

    def __init__(self, num_batches, batch_size=4, val=True):
        g = torch.Generator().manual_seed(0)
        self.train = [(torch.randn(batch_size, 2, generator=g),
                       torch.randn(batch_size, 1, generator=g))
                      for _ in range(num_batches)]
        self.val = self.train[:2] if val else None

    def get_dataloader(self, train):
        batches = self.train if train else self.val
        if self.pin_memory and batches is not None:  # as DataLoader(pin_memory=True)
            batches = [tuple(t.pin_memory() for t in batch) for batch in batches]
        return batches


@pytest.fixture
def host_copies(monkeypatch):
    """Count every way a tensor's values can reach Python."""
    counts = []
    for name in ("item", "tolist", "numpy", "cpu", "__float__", "__int__",
                 "__bool__", "__index__", "__format__"):
        original = getattr(torch.Tensor, name)

        def counted(self, *args, _original=original, _name=name, **kwargs):
            counts.append(_name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, name, counted)
    return counts


@pytest.mark.parametrize("num_batches", [3, 30])
@pytest.mark.parametrize("val", [True, False])
def test_one_host_copy_per_epoch_whatever_the_batch_count(host_copies,
                                                          num_batches, val):
    torch.manual_seed(0)
    model = d2lgpu.LinearRegression()
    model(torch.ones(1, 2))  # materialise the lazy layer before counting
    trainer = d2lgpu.Trainer(max_epochs=4, plot=False)
    host_copies.clear()
    trainer.fit(model, ListData(num_batches, val=val))
    assert host_copies == ["tolist"] * 4
    assert trainer.host_transfers == 4
    assert len(trainer.train_loss) == 4
    assert len(trainer.val_loss) == (4 if val else 0)
    assert trainer.train_batch_idx == 4 * num_batches


class UnequalBatches(d2lgpu.DataModule):
    """One batch of 1 example and one of 7: a mean of batch means is wrong."""

    def __init__(self):
        g = torch.Generator().manual_seed(1)
        X = torch.randn(8, 2, generator=g)
        y = torch.randn(8, 1, generator=g)
        y[0] += 10.0  # the lone example's loss is far from the others'
        self.train = [(X[:1], y[:1]), (X[1:], y[1:])]
        self.val = [(X[1:], y[1:]), (X[:1], y[:1])]

    def get_dataloader(self, train):
        batches = self.train if train else self.val
        if self.pin_memory and batches is not None:  # as DataLoader(pin_memory=True)
            batches = [tuple(t.pin_memory() for t in batch) for batch in batches]
        return batches


def _still_model(make_data):
    """(data, a model that training leaves unchanged, its trainer after one epoch)."""
    data = make_data()
    model = d2lgpu.LinearRegression(lr=0.0)  # nothing changes while training
    model(torch.ones(1, 2))
    trainer = d2lgpu.Trainer(max_epochs=1, plot=False)
    trainer.fit(model, data)
    return data, model, trainer


def _per_example_loss(model, batches):
    X = torch.cat([x for x, _ in batches])
    y = torch.cat([t for _, t in batches])
    with torch.no_grad():
        return ((model(X) - y) ** 2).reshape(-1)


@pytest.mark.parametrize("make_data", [lambda: ListData(3), UnequalBatches],
                         ids=["equal batches", "unequal batches"])
def test_epoch_loss_is_the_mean_over_examples(make_data):
    data, model, trainer = _still_model(make_data)
    train = _per_example_loss(model, data.train).mean().item()
    val = _per_example_loss(model, data.val).mean().item()
    assert trainer.train_loss[0] == pytest.approx(train, rel=1e-6)
    assert trainer.val_loss[0] == pytest.approx(val, rel=1e-6)


def test_unequal_batches_tell_the_mean_of_batch_means_apart():
    # The premise of the test above: with these batches a mean of batch
    # means differs from the mean over examples by far more than rel=1e-6.
    data, model, _ = _still_model(UnequalBatches)
    per_example = _per_example_loss(model, data.train)
    batch_means = [per_example[:1].mean(), per_example[1:].mean()]
    expected = per_example.mean().item()
    assert abs(sum(batch_means).item() / 2 - expected) > 0.1 * expected


def test_empty_training_data_is_an_error():
    trainer = d2lgpu.Trainer(max_epochs=1, plot=False)
    with pytest.raises(ValueError, match=r"train_dataloader\(\) has no batches"):
        trainer.fit(d2lgpu.LinearRegression(), ListData(0))


class Stream(torch.utils.data.IterableDataset):
    """Examples from an IterableDataset: its DataLoader has no len()."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        g = torch.Generator().manual_seed(0)
        return iter([(torch.randn(2, generator=g), torch.randn(1, generator=g))
                     for _ in range(self.n)])


class Loaders(d2lgpu.DataModule):
    """Whatever loaders a test gives, for training and validation."""

    def __init__(self, train, val=None):
        self.loaders = {True: train, False: val}

    def get_dataloader(self, train):
        return self.loaders[train]


def test_a_loader_without_a_length_trains():
    # DataLoader(IterableDataset) has no len(): 'Stream' has no len() was a traceback.
    loader = torch.utils.data.DataLoader(Stream(8), batch_size=4)
    trainer = d2lgpu.Trainer(max_epochs=2, plot=False)
    trainer.fit(d2lgpu.LinearRegression(), Loaders(loader, loader))
    assert len(trainer.train_loss) == len(trainer.val_loss) == 2
    assert trainer.num_train_batches is None and trainer.train_batch_idx == 4


@pytest.mark.parametrize("which", ["train", "val"])
def test_a_loader_used_up_after_one_epoch_is_an_error_naming_it(which):
    # A generator gives its batches once; the second epoch had none and ended in
    # "unsupported operand type(s) for /: 'NoneType' and 'int'".
    g = torch.Generator().manual_seed(0)
    batches = [(torch.randn(4, 2, generator=g), torch.randn(4, 1, generator=g))] * 2
    once = (batch for batch in batches)
    data = Loaders(once, batches) if which == "train" else Loaders(batches, once)
    trainer = d2lgpu.Trainer(max_epochs=2, plot=False)
    with pytest.raises(ValueError, match=rf"data.{which}_dataloader\(\) gave no batches in "
                                         r"epoch 2; an iterator is used up after one pass"):
        trainer.fit(d2lgpu.LinearRegression(), data)
    assert len(trainer.train_loss) == 1


# --- Trainer: gradient clipping by global norm. ----------------------------------

class Line(d2lgpu.Module):
    def __init__(self, lr):
        super().__init__()
        self.lr = lr
        self.net = nn.Linear(2, 1, bias=False)
        nn.init.zeros_(self.net.weight)

    def loss(self, y_hat, y):
        return ((y_hat - y) ** 2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


class OneBatch(d2lgpu.DataModule):
    def get_dataloader(self, train):
        # Gradient at w=0: -2 * 1000 * (3, 4), norm 10000, direction (3, 4)/5.
        return [(torch.tensor([[3.0, 4.0]]), torch.tensor([[1000.0]]))] if train else None


@pytest.mark.parametrize("clip, expected", [
    (0, [6000.0, 8000.0]),        # no clipping: lr * 10000 * (0.6, 0.8)
    (1.0, [0.6, 0.8]),           # global norm 1, same direction
    (2.5, [1.5, 2.0]),
])
def test_gradient_clipping(clip, expected):
    model = Line(lr=1.0)
    trainer = d2lgpu.Trainer(max_epochs=1, gradient_clip_val=clip, plot=False)
    trainer.fit(model, OneBatch())
    assert model.net.weight.detach().reshape(-1).tolist() == pytest.approx(
        expected, rel=1e-5)


# --- Trainer: devices. ----------------------------------------------------------

def test_trainer_keeps_the_gpus_that_exist(cuda_count_2):
    assert d2lgpu.Trainer(1, num_gpus=0).gpus == []
    assert d2lgpu.Trainer(1, num_gpus=1).gpus == [torch.device("cuda:0")]
    two = d2lgpu.Trainer(1, num_gpus=2)
    assert two.gpus == [torch.device("cuda:0"), torch.device("cuda:1")]
    assert two.device == torch.device("cuda:0")


def test_fit_trains_on_the_first_of_its_gpus_alone():
    # As its docstring says, the Trainer trains on one device, .gpus[0]: a
    # second one in .gpus, here 'meta' (which holds no values), is not used.
    first_line = inspect.getdoc(d2lgpu.Trainer).splitlines()[0]
    assert "on one device" in first_line, first_line
    torch.manual_seed(0)
    trainer = d2lgpu.Trainer(3, plot=False)
    trainer.gpus = [torch.device("cpu"), torch.device("meta")]
    model = d2lgpu.LinearRegression()
    trainer.fit(model, d2lgpu.SyntheticRegressionData(w=[2, -3.4], b=4.2))
    assert {p.device for p in model.parameters()} == {torch.device("cpu")}
    assert trainer.val_loss[-1] < 1e-3


def test_trainer_on_mps(mps_available):
    assert d2lgpu.Trainer(1, num_gpus=1).gpus == [torch.device("mps:0")]


@pytest.mark.parametrize("available, asked", [(0, 1), (1, 2), (2, 8)])
def test_asking_for_more_gpus_warns_once(hardware, available, asked):
    hardware(cuda=available)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer = d2lgpu.Trainer(1, num_gpus=asked)
    assert len(caught) == 1
    assert caught[0].category is UserWarning
    message = str(caught[0].message)
    assert f"num_gpus={asked}" in message and f"only {available} accelerator" in message
    assert caught[0].filename == __file__  # points at the caller's line
    assert len(trainer.gpus) == available


def test_no_warning_when_enough_gpus(cuda_count_2):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d2lgpu.Trainer(1, num_gpus=2)


def test_force_cpu_trains_on_the_cpu(monkeypatch, cuda_count_2):
    monkeypatch.setenv("D2LGPU_FORCE_CPU", "1")
    with pytest.warns(UserWarning, match="only 0 accelerator"):
        trainer = d2lgpu.Trainer(1, num_gpus=2, plot=False)
    assert trainer.gpus == [] and trainer.device == torch.device("cpu")
    data = d2lgpu.SyntheticRegressionData(w=W, b=B, num_train=64, num_val=32)
    trainer.fit(d2lgpu.LinearRegression(), data)  # really runs, on the CPU
    assert data.pin_memory is False
    monkeypatch.setenv("D2LGPU_FORCE_CPU", "on")
    with pytest.raises(ValueError, match="D2LGPU_FORCE_CPU must be '1'"):
        d2lgpu.Trainer(1, num_gpus=1)


class RecordsTo:
    """Stands in for a tensor (pinned or not) and records where it was asked to go."""

    def __init__(self, pinned=True):
        self.moved_to = []
        self.pinned = pinned

    def is_pinned(self):
        return self.pinned

    def to(self, device, non_blocking=False):
        self.moved_to.append((device, non_blocking))
        return self

    def __len__(self):
        return 1


@pytest.mark.parametrize("kinds, num_gpus, pinned, device, non_blocking", [
    # Each tensor goes to the first GPU, pinned and without blocking.
    (dict(cuda=2), 2, True, torch.device("cuda:0"), True),
    (dict(xpu=2), 1, True, torch.device("xpu:0"), True),
    # On MPS a non-blocking copy from pageable memory can read the batch after
    # it is freed (pytorch/pytorch#189690), and DataLoaders do not pin there.
    (dict(mps=True), 1, False, torch.device("mps", 0), False),
], ids=["cuda", "xpu", "mps-not-pinned"])
def test_prepare_batch_copies_without_blocking_only_a_pinned_batch(
        hardware, kinds, num_gpus, pinned, device, non_blocking):
    hardware(**kinds)
    trainer = d2lgpu.Trainer(1, num_gpus=num_gpus, plot=False)
    batch = [RecordsTo(pinned=pinned), RecordsTo(pinned=pinned)]
    trainer.prepare_batch(batch)
    assert [t.moved_to for t in batch] == [[(device, non_blocking)]] * 2


@pytest.mark.parametrize("kinds, pinned", [
    (dict(cuda=1), True), (dict(mps=True), False), (dict(xpu=1), True),
    (dict(), False),
], ids=["cuda", "mps", "xpu", "cpu"])
def test_batches_are_pinned_for_every_accelerator_but_mps(hardware, kinds,
                                                          pinned):
    # As DataLoader(pin_memory=True) pins: for the current accelerator, but
    # not for MPS (PyTorch 2.7 and later; before, for CUDA only).
    hardware(**kinds)
    trainer = d2lgpu.Trainer(1, num_gpus=1, plot=False) if kinds else (
        d2lgpu.Trainer(1, plot=False))
    data = d2lgpu.SyntheticRegressionData(w=W, b=B, num_train=64, num_val=32)
    trainer.prepare_data(data)
    assert data.pin_memory is pinned
    assert trainer.train_dataloader.pin_memory is pinned
    assert trainer.val_dataloader.pin_memory is pinned


def test_no_pin_memory_warning_on_the_cpu():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        train_linear_regression(max_epochs=1)


@pytest.fixture
def fake_cuda_copies(monkeypatch, cuda_count_1):
    """A machine with one fake CUDA GPU whose copies stay on the CPU.

    ``Tensor.to`` and ``Module.to`` towards CUDA record whether the copy
    blocks (returned list: one bool per tensor copy) and return the CPU
    tensor or module unchanged, so that fit really runs. ``pin_memory`` marks
    a tensor pinned (real pinning needs CUDA) for ``is_pinned`` to report.
    """
    blocking = []
    tensor_to, module_to = torch.Tensor.to, nn.Module.to
    pinned = []

    def fake_pin_memory(self, *args, **kwargs):
        pinned.append(self)
        return self

    monkeypatch.setattr(torch.Tensor, "pin_memory", fake_pin_memory)
    monkeypatch.setattr(torch.Tensor, "is_pinned",
                        lambda self, *args, **kwargs: any(self is t for t in pinned))

    def to_cuda(args, kwargs):
        target = args[0] if args else kwargs.get("device")
        return target is not None and torch.device(target).type == "cuda"

    def fake_tensor_to(self, *args, **kwargs):
        if not args or not isinstance(args[0], (str, torch.device)):
            return tensor_to(self, *args, **kwargs)
        if to_cuda(args, kwargs):
            blocking.append(not kwargs.get("non_blocking", False))
            return self
        return tensor_to(self, *args, **kwargs)

    def fake_module_to(self, *args, **kwargs):
        return self if to_cuda(args, kwargs) else module_to(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "to", fake_tensor_to)
    monkeypatch.setattr(nn.Module, "to", fake_module_to)
    return blocking


@pytest.mark.parametrize("num_batches", [3, 30])
def test_an_epoch_on_cuda_waits_once_whatever_the_batch_count(
        fake_cuda_copies, host_copies, num_batches):
    # Waits for the GPU: a blocking copy to it, or a copy of values to Python.
    torch.manual_seed(0)
    model = d2lgpu.LinearRegression()
    model(torch.ones(1, 2))
    trainer = d2lgpu.Trainer(max_epochs=2, num_gpus=1, plot=False)
    assert trainer.device == torch.device("cuda:0")
    host_copies.clear()
    trainer.fit(model, ListData(num_batches))
    batches = 2 * (num_batches + 2)  # two epochs of training and validation
    assert fake_cuda_copies == [False] * 2 * batches  # X and y: none blocks
    assert host_copies == ["tolist"] * 2
    assert trainer.host_transfers == 2


def test_prepare_batch_really_moves_tensors():
    # 'meta' is a real non-CPU device on every PyTorch build.
    trainer = d2lgpu.Trainer(1, plot=False)
    x, y = torch.ones(2, 2), torch.ones(2, 1)
    assert trainer.prepare_batch([x, y])[0] is x  # CPU: left alone
    trainer.gpus = [torch.device("meta")]
    moved = trainer.prepare_batch([x, y])
    assert [t.device.type for t in moved] == ["meta", "meta"]


def test_prepare_model_moves_the_model_to_the_first_gpu(cuda_count_1):
    class Recorded(d2lgpu.LinearRegression):
        def to(self, *args, **kwargs):
            self.moved_to = args
            return self

    trainer = d2lgpu.Trainer(1, num_gpus=1, plot=False)
    model = Recorded()
    assert trainer.prepare_model(model) is model
    assert model.moved_to == (torch.device("cuda:0"),)
    assert model.trainer is trainer and trainer.model is model


def test_prepare_model_leaves_the_model_on_the_cpu(cuda_count_0):
    trainer = d2lgpu.Trainer(1, plot=False)
    model = d2lgpu.LinearRegression()
    model(torch.ones(1, 2))
    trainer.prepare_model(model)
    assert model.net.weight.device == torch.device("cpu")


# --- Trainer: bad input. ---------------------------------------------------------

@pytest.mark.parametrize("kwargs, error, message", [
    (dict(max_epochs=0), ValueError, "Trainer(max_epochs): max_epochs must be an int >= 1, got 0"),
    (dict(max_epochs=2.0), TypeError, "Trainer(max_epochs): max_epochs must be an int >= 1, got 2.0"),
    (dict(max_epochs=True), TypeError, "max_epochs must be an int >= 1, got True"),
    (dict(num_gpus=-1), ValueError, "Trainer(num_gpus): num_gpus must be a non-negative int, got -1"),
    (dict(num_gpus=1.5), TypeError, "Trainer(num_gpus): num_gpus must be a non-negative int, got 1.5"),
    (dict(num_gpus="1"), TypeError, "num_gpus must be a non-negative int, got '1'"),
    (dict(gradient_clip_val=-0.5), ValueError, "Trainer(gradient_clip_val): gradient_clip_val must be a finite number >= 0 (0 turns clipping off), got -0.5"),
    (dict(gradient_clip_val=float("nan")), ValueError, "gradient_clip_val must be a finite number >= 0 (0 turns clipping off), got nan"),
    (dict(gradient_clip_val="1"), TypeError, "gradient_clip_val must be a finite number >= 0 (0 turns clipping off), got '1'"),
    (dict(plot="no"), TypeError, "Trainer(plot): plot must be True or False, got 'no'"),
])
def test_trainer_bad_input(kwargs, error, message):
    args = dict(max_epochs=1) | kwargs
    with pytest.raises(error, match=re.escape(message)):
        d2lgpu.Trainer(**args)


def test_trainer_checks_everything_before_warning(cuda_count_0):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning here would fail the test
        with pytest.raises(ValueError, match="max_epochs"):
            d2lgpu.Trainer(max_epochs=0, num_gpus=4)
        with pytest.raises(ValueError, match="gradient_clip_val"):
            d2lgpu.Trainer(max_epochs=1, num_gpus=4, gradient_clip_val=-1)
