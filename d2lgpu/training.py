"""d2l 1.0's minimal training loop, on a device, with the loss log kept there.

Differences from d2l on purpose, so that the CPU waits for a CUDA GPU once per
epoch and not at every minibatch:

- batches come from DataLoaders that pin them in page-locked memory when the
  training device is an accelerator other than Apple's MPS (the ``Trainer``
  sets ``data.pin_memory``; DataLoader pins for the current accelerator,
  CUDA or XPU, the XPU only from PyTorch 2.7, the book's floor; before, it
  pinned for CUDA alone), and ``prepare_batch`` copies a pinned
  batch with ``non_blocking=True``: a blocking copy, pinned or not, would
  wait for the GPU to finish the previous step. A pageable batch is copied
  blocking: on MPS a non-blocking copy from pageable memory can read the
  batch after it is freed (pytorch/pytorch#189690);
- the ``Trainer`` (not the model) records the loss: it adds each batch's loss
  to a tensor on the training device and copies the epoch's averages to the
  host once per epoch (``host_transfers`` counts these copies) instead of
  converting every batch's loss to a Python number, which waits for the GPU.
"""

from __future__ import annotations

import warnings

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from . import devices
from ._checks import check_bool, check_int, check_real
from .plotting import ProgressBoard

__all__ = [
    "Module",
    "DataModule",
    "SyntheticRegressionData",
    "LinearRegression",
    "Trainer",
]


class Module(nn.Module):
    """Base model: ``forward`` runs ``self.net``; subclasses give ``loss`` and ``configure_optimizers`` (chapter "Neural networks and GPUs")."""

    def loss(self, y_hat, y):
        """The loss of predictions ``y_hat`` against targets ``y``."""
        raise NotImplementedError(
            f"{type(self).__name__}.loss(y_hat, y) is not defined")

    def forward(self, X):
        """Apply ``self.net`` to ``X``."""
        if not hasattr(self, "net"):
            raise NotImplementedError(
                f"{type(self).__name__} has no self.net: define it in "
                f"__init__ or override forward()")
        return self.net(X)

    def training_step(self, batch):
        """Loss on one batch ``(*inputs, target)``, as a tensor (no host copy)."""
        return self.loss(self(*batch[:-1]), batch[-1])

    def validation_step(self, batch):
        """Validation loss on one batch ``(*inputs, target)``, as a tensor."""
        return self.loss(self(*batch[:-1]), batch[-1])

    def configure_optimizers(self):
        """The optimizer that updates this model's parameters."""
        raise NotImplementedError(
            f"{type(self).__name__}.configure_optimizers() is not defined")


class DataModule:
    """Base data: ``train_dataloader()`` and ``val_dataloader()`` call ``get_dataloader(train)`` (chapter "Neural networks and GPUs").

    ``pin_memory`` (False here) asks ``get_dataloader`` for batches in pinned
    (page-locked) memory; before asking for the dataloaders, the ``Trainer``
    sets it to whether it trains on an accelerator other than MPS.
    """

    pin_memory = False

    def get_dataloader(self, train: bool):
        """An iterable of batches for training (``train=True``) or validation."""
        raise NotImplementedError(
            f"{type(self).__name__}.get_dataloader(train) is not defined")

    def train_dataloader(self):
        """Batches for training."""
        return self.get_dataloader(train=True)

    def val_dataloader(self):
        """Batches for validation (None: no validation)."""
        return self.get_dataloader(train=False)


class SyntheticRegressionData(DataModule):
    """Data ``y = X w + b + noise`` with X and noise from a ``torch.Generator`` seeded with ``seed`` (chapter "Neural networks and GPUs")."""

    def __init__(self, w, b, noise=0.01, num_train=1000, num_val=1000,
                 batch_size=32, seed=0):
        w = torch.as_tensor(w, dtype=torch.float32)
        if w.dim() != 1 or w.numel() == 0:
            raise ValueError(
                f"SyntheticRegressionData(w): w must be a non-empty 1-D "
                f"sequence of weights, got shape {tuple(w.shape)}")
        where = "SyntheticRegressionData"
        b = check_real(b, where, "b")
        noise = check_real(noise, where, "noise", 0)
        num_train = check_int(num_train, where, "num_train", 1)
        num_val = check_int(num_val, where, "num_val", 0)
        batch_size = check_int(batch_size, where, "batch_size", 1)
        seed = check_int(seed, where, "seed", 0)
        self.w, self.b, self.noise = w, b, noise
        self.num_train, self.num_val = num_train, num_val
        self.batch_size, self.seed = batch_size, seed
        generator = torch.Generator().manual_seed(seed)
        n = num_train + num_val
        self.X = torch.randn(n, len(w), generator=generator)
        eps = torch.randn(n, 1, generator=generator) * noise
        self.y = self.X @ w.reshape(-1, 1) + b + eps
        # Shuffling draws from its own generator: no global RNG is touched.
        self._shuffle = torch.Generator().manual_seed(seed + 1)

    def get_dataloader(self, train: bool):
        """A DataLoader over the first ``num_train`` (shuffled) or the last ``num_val`` examples, pinned if ``pin_memory``."""
        if train:
            part = slice(0, self.num_train)
        else:
            if self.num_val == 0:
                return None
            part = slice(self.num_train, None)
        dataset = TensorDataset(self.X[part], self.y[part])
        return DataLoader(dataset, batch_size=self.batch_size, shuffle=train,
                          generator=self._shuffle if train else None,
                          pin_memory=self.pin_memory)


class LinearRegression(Module):
    """Linear regression: ``nn.LazyLinear(1)``, mean squared error, SGD with rate ``lr`` (chapter "Neural networks and GPUs")."""

    def __init__(self, lr=0.03):
        super().__init__()
        self.lr = check_real(lr, "LinearRegression", "lr", 0)
        self.net = nn.LazyLinear(1)

    def loss(self, y_hat, y):
        """Mean squared error."""
        return nn.functional.mse_loss(y_hat, y)

    def configure_optimizers(self):
        """Plain minibatch SGD."""
        return torch.optim.SGD(self.parameters(), lr=self.lr)

    def get_w_b(self):
        """The learned weight and bias tensors."""
        return self.net.weight.data, self.net.bias.data


class Trainer:
    """Trains a Module on a DataModule on one device, the first accelerator or else the CPU, logging the loss on the device (chapter "Neural networks and GPUs").

    ``.gpus`` lists the first ``min(num_gpus, available)`` accelerators (a
    UserWarning says so once when fewer exist than asked for; none with
    ``D2LGPU_FORCE_CPU=1``); ``fit`` trains on ``.gpus[0]`` alone, moving the
    model and every batch there (batches pinned, except on MPS, and copied
    without blocking), or keeps them on the CPU when ``.gpus`` is empty. Asking for
    more than one GPU keeps d2l's interface; it does not split the work.
    After ``fit``, ``.train_loss`` and ``.val_loss`` hold one float per epoch
    (the mean loss over that epoch's examples) and ``.host_transfers`` counts
    the copies of the loss log to the host: exactly one per epoch. Where
    batches are pinned (CUDA and XPU, from PyTorch 2.7) it is the only time
    an epoch waits for the device (a test on a CUDA GPU makes any other wait
    raise); on MPS each batch copy waits too. With ``plot=True`` a
    ProgressBoard (``.board``) draws both curves.
    """

    def __init__(self, max_epochs, num_gpus=0, gradient_clip_val=0, *,
                 plot=True):
        max_epochs = check_int(max_epochs, "Trainer", "max_epochs", 1)
        num_gpus = check_int(num_gpus, "Trainer", "num_gpus", 0)
        gradient_clip_val = check_real(gradient_clip_val, "Trainer",
                                       "gradient_clip_val", 0,
                                       hint="0 turns clipping off")
        plot = check_bool(plot, "Trainer", "plot")
        available = devices.num_gpus()
        if num_gpus > available:
            warnings.warn(
                f"Trainer(num_gpus={num_gpus}): only {available} accelerator "
                f"device(s) available, using {available}"
                + (" (training on the CPU)" if available == 0 else ""),
                UserWarning, stacklevel=2)
        self.max_epochs = max_epochs
        self.num_gpus = num_gpus
        self.gradient_clip_val = gradient_clip_val
        self.plot = plot
        self.gpus = [devices.gpu(i) for i in range(min(num_gpus, available))]
        self.board = None
        self.model = None
        self._reset_log()

    def _reset_log(self) -> None:
        self.train_loss: list[float] = []
        self.val_loss: list[float] = []
        self.host_transfers = 0
        self.epoch = 0
        self.train_batch_idx = 0
        self.val_batch_idx = 0

    @property
    def device(self) -> torch.device:
        """Where the model and batches go: ``.gpus[0]``, or the CPU."""
        return self.gpus[0] if self.gpus else devices.cpu()

    def prepare_data(self, data) -> None:
        """Ask ``data`` for its dataloaders (pinned when training on an accelerator but MPS) and count their batches (None: a loader without a length, such as one of an IterableDataset)."""
        if isinstance(data, DataModule):
            data.pin_memory = self.device.type not in ("cpu", "mps")
        self.train_dataloader = data.train_dataloader()
        self.val_dataloader = data.val_dataloader()
        self.num_train_batches = _length(self.train_dataloader)
        if self.num_train_batches == 0:
            raise ValueError(
                "Trainer.fit(model, data): data.train_dataloader() has no "
                "batches")
        self.num_val_batches = (0 if self.val_dataloader is None
                                else _length(self.val_dataloader))

    def prepare_model(self, model):
        """Link ``model`` to this trainer and move it to ``self.device`` when that is an accelerator."""
        model.trainer = self
        if self.gpus:
            model = model.to(self.gpus[0])
        self.model = model
        return model

    def prepare_batch(self, batch):
        """Copy every tensor of ``batch`` to ``.gpus[0]``, without blocking when it is pinned (unchanged on the CPU)."""
        if self.gpus:
            batch = [a.to(self.gpus[0], non_blocking=a.is_pinned()) for a in batch]
        return batch

    def fit(self, model, data) -> None:
        """Train ``model`` on ``data`` for ``max_epochs`` epochs."""
        self.prepare_data(data)
        self.prepare_model(model)
        self.optim = model.configure_optimizers()
        self._reset_log()
        self.board = None
        if self.plot:
            self.board = ProgressBoard(
                "epoch", "loss", xlim=(0, self.max_epochs), yscale="log",
                title=f"{type(model).__name__} on {self.device}")
        for self.epoch in range(self.max_epochs):
            self.fit_epoch()

    def clip_gradients(self, max_norm, model) -> None:
        """Scale all gradients together so that their global norm is at most ``max_norm`` (no host copy)."""
        params = [p for p in model.parameters()
                  if p.requires_grad and p.grad is not None]
        torch.nn.utils.clip_grad_norm_(params, max_norm)

    def fit_epoch(self) -> None:
        """One pass over the training data, then one over the validation data."""
        model = self.model
        model.train()
        # Running sums live where the losses are; None until the first batch.
        train_sum, train_count = None, 0
        for batch in self.train_dataloader:
            batch = self.prepare_batch(batch)
            loss = model.training_step(batch)
            self.optim.zero_grad()
            loss.backward()
            if self.gradient_clip_val > 0:
                self.clip_gradients(self.gradient_clip_val, model)
            self.optim.step()
            size = len(batch[-1])
            weighted = loss.detach() * size  # stays on the device
            train_sum = weighted if train_sum is None else train_sum + weighted
            train_count += size
            self.train_batch_idx += 1
        if train_sum is None:
            raise ValueError(_no_batches("train", self.epoch))
        log = [train_sum / train_count]
        if self.val_dataloader is not None and self.num_val_batches != 0:
            model.eval()
            val_sum, val_count = None, 0
            with torch.no_grad():
                for batch in self.val_dataloader:
                    batch = self.prepare_batch(batch)
                    size = len(batch[-1])
                    weighted = model.validation_step(batch).detach() * size
                    val_sum = weighted if val_sum is None else val_sum + weighted
                    val_count += size
                    self.val_batch_idx += 1
            if val_sum is None:
                raise ValueError(_no_batches("val", self.epoch))
            log.append(val_sum / val_count)
        # The one copy of the loss log to the host this epoch (a wait for the device).
        values = torch.stack(log).tolist()
        self.host_transfers += 1
        self.train_loss.append(values[0])
        if len(values) > 1:
            self.val_loss.append(values[1])
        if self.board is not None:
            x = self.epoch + 1
            self.board.draw(x, values[0], "train", refresh=len(values) == 1)
            if len(values) > 1:
                self.board.draw(x, values[1], "val")


def _length(loader) -> int | None:
    """How many batches ``loader`` gives, or None where it cannot say (an IterableDataset's DataLoader, a generator)."""
    try:
        return len(loader)
    except TypeError:
        return None


def _no_batches(which: str, epoch: int) -> str:
    """Why an epoch cannot log a loss: its loader gave no batch, and what to pass instead."""
    return (f"Trainer.fit(model, data): data.{which}_dataloader() gave no batches "
            f"in epoch {epoch + 1}; an iterator is used up after one pass, so "
            f"return a DataLoader (or another iterable that can be iterated "
            f"again) that gives at least one batch")
