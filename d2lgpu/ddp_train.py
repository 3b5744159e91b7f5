"""Train the book's linear-regression model with DistributedDataParallel.

This script belongs to the chapter "Beyond one device"
(chapters/distributed.md), which explains every part of it. It ships with
d2lgpu, so that the chapter runs offline once the package is installed, and
imports nothing but torch: torchrun may start it by module or by its path
(d2lgpu.launch does, to spare each rank importing d2lgpu). It runs in two
ways:

    # several processes on one machine, started by torchrun (the DDP run)
    torchrun --standalone --nproc-per-node=2 -m d2lgpu.ddp_train --out ddp.json

    # one plain process, no process group (the reference run)
    python -m d2lgpu.ddp_train --out single.json

With GPUs (at least one per process) every process drives its own GPU and the
processes talk through NCCL; otherwise every process computes on the CPU and
they talk through Gloo. ``--batch-size`` is the *global* batch: each of the
``world_size`` processes takes ``batch_size // world_size`` examples of it, so
that both runs take the same optimisation steps on the same examples and end
with the same parameters up to float rounding.

Only rank 0 prints and writes ``--out`` (JSON with the final parameters and
the per-step training loss).
"""
from __future__ import annotations

import argparse
import datetime
import inspect
import json
import os
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.elastic.multiprocessing.errors import record
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

__all__ = ["TRUE_W", "TRUE_B", "make_data", "make_model", "group_options",
           "setup", "gather_to_rank0", "show_all_reduce", "train",
           "parse_args", "main"]

TRUE_W = (2.0, -3.4)
TRUE_B = 4.2


def make_data(num_train: int = 1024, noise: float = 0.01,
              seed: int = 0) -> TensorDataset:
    """Synthetic data y = X w + b + noise, the same in every process."""
    gen = torch.Generator().manual_seed(seed)
    w = torch.tensor(TRUE_W)
    X = torch.randn(num_train, len(TRUE_W), generator=gen)
    y = X @ w + TRUE_B + noise * torch.randn(num_train, generator=gen)
    return TensorDataset(X, y.reshape(-1, 1))


def make_model(seed: int = 0) -> nn.Linear:
    """One linear layer; seeded start: weights with std 0.01, bias 0."""
    gen = torch.Generator().manual_seed(seed)
    net = nn.Linear(len(TRUE_W), 1)
    with torch.no_grad():
        net.weight.copy_(0.01 * torch.randn(net.weight.shape, generator=gen))
        net.bias.zero_()
    return net


def group_options(backend: str, device: torch.device) -> dict:
    """Extra arguments of init_process_group: NCCL is told each rank's GPU.

    With ``device_id`` NCCL connects the ranks when the group is created, not
    at the first collective, so a broken setup fails at once. Releases of
    PyTorch whose init_process_group lacks the argument, and Gloo, get none.
    """
    accepted = inspect.signature(dist.init_process_group).parameters
    if backend == "nccl" and "device_id" in accepted:
        return {"device_id": device}
    return {}


def setup(timeout_s: float) -> tuple[int, int, torch.device, str]:
    """Join the process group that torchrun describes in the environment.

    Returns (rank, world_size, device, backend). Without torchrun (no RANK
    variable) there is no group: rank 0 of a world of size 1.
    """
    if "RANK" not in os.environ:
        cuda = torch.cuda.is_available()
        device = torch.device("cuda" if cuda else "cpu")
        return 0, 1, device, "none"
    local_rank = int(os.environ["LOCAL_RANK"])
    procs_here = int(os.environ["LOCAL_WORLD_SIZE"])
    if torch.cuda.is_available() and torch.cuda.device_count() >= procs_here:
        backend, device = "nccl", torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    else:
        backend, device = "gloo", torch.device("cpu")
    # RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT come from torchrun.
    dist.init_process_group(
        backend, timeout=datetime.timedelta(seconds=timeout_s),
        **group_options(backend, device))
    return dist.get_rank(), dist.get_world_size(), device, backend


def gather_to_rank0(obj, world_size: int) -> list:
    """Every rank's `obj`, in rank order (all ranks must call this)."""
    if world_size == 1:
        return [obj]
    objs = [None] * world_size
    dist.all_gather_object(objs, obj)
    return objs


def show_all_reduce(rank: int, world_size: int, device: torch.device,
                    log) -> None:
    """Rank r holds r + 1; after all_reduce(SUM) every rank holds the sum."""
    value = torch.tensor([rank + 1.0], device=device)
    before = gather_to_rank0(value.item(), world_size)
    dist.all_reduce(value, op=dist.ReduceOp.SUM)
    after = gather_to_rank0(value.item(), world_size)
    log(f"all_reduce(SUM): ranks held {before}, "
        f"afterwards they hold {after}")


def train(args, rank: int, world_size: int, device: torch.device,
          backend: str, log) -> dict:
    """Train on global batches of args.batch_size, split over the ranks."""
    data = make_data(args.num_train, seed=args.seed)
    per_rank = args.batch_size // world_size
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank,
                                 shuffle=True, seed=args.seed)
    # On a GPU, as in the networks chapter, batches come pinned and are
    # copied without blocking: a step does not wait for its copy.
    pinned = device.type == "cuda"
    loader = DataLoader(data, batch_size=per_rank, sampler=sampler,
                        pin_memory=pinned)
    model = make_model(args.seed).to(device)
    if world_size > 1:
        # DDP broadcasts rank 0's parameters now and averages the
        # gradients in backward().
        model = DistributedDataParallel(
            model,
            device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    loss_fn = nn.MSELoss()

    view = (f"rank {rank} of {world_size}: {len(sampler)} examples per "
            f"epoch in {len(loader)} batches of {per_rank}")
    views = gather_to_rank0(view, world_size)
    for line in views:
        log(line)

    # The loss stays on the device; it is averaged over the ranks and copied
    # to the host once per epoch, not once per step.
    losses = torch.zeros(args.epochs, len(loader), device=device)
    start = time.perf_counter()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)  # a new shuffle, the same on every rank
        for step, (X, y) in enumerate(loader):
            if (rank == args.fail_rank and epoch == args.epochs // 2
                    and step == 0):
                raise RuntimeError(
                    f"rank {rank} stops on purpose (--fail-rank {rank})")
            X = X.to(device, non_blocking=pinned)
            y = y.to(device, non_blocking=pinned)
            loss = loss_fn(model(X), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses[epoch, step] = loss.detach()
        epoch_losses = losses[epoch].clone()
        if world_size > 1:
            dist.all_reduce(epoch_losses, op=dist.ReduceOp.SUM)
            epoch_losses /= world_size
        losses[epoch] = epoch_losses
        mean = epoch_losses.mean().item()
        log(f"epoch {epoch + 1}: mean training loss {mean:.6f}")
    seconds = time.perf_counter() - start

    net = model.module if world_size > 1 else model
    flat = torch.cat([p.detach().reshape(-1)
                      for p in net.parameters()]).cpu()
    if world_size > 1:
        replicas = gather_to_rank0(flat, world_size)
        spread = max((r - replicas[0]).abs().max().item()
                     for r in replicas)
        log(f"largest difference between the {world_size} replicas: "
            f"{spread}")
    return {
        "world_size": world_size,
        "backend": backend,
        "device": device.type,
        "global_batch": args.batch_size,
        "per_rank_batch": per_rank,
        "weight": net.weight.detach().cpu().reshape(-1).tolist(),
        "bias": net.bias.detach().cpu().item(),
        "step_loss": losses.cpu().reshape(-1).tolist(),
        "seconds": seconds,
    }


def parse_args(argv=None) -> argparse.Namespace:
    """The command line: --out, and the training settings with defaults."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True,
                        help="JSON file for the result (rank 0 writes it)")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32,
                        help="global batch, split evenly over the processes")
    parser.add_argument("--num-train", type=int, default=1024)
    parser.add_argument("--lr", type=float, default=0.03)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds a collective waits for the others")
    parser.add_argument("--fail-rank", type=int, default=None,
                        help="this rank fails half-way (to show failures)")
    return parser.parse_args(argv)


@record  # under torchrun: the failed rank's traceback goes to the summary
def main(argv=None) -> None:
    args = parse_args(argv)
    rank, world_size, device, backend = setup(args.timeout)
    try:
        log = print if rank == 0 else (lambda *a, **k: None)
        if args.batch_size % world_size or args.num_train % args.batch_size:
            raise ValueError(
                f"--batch-size {args.batch_size} must split evenly over "
                f"{world_size} processes and divide --num-train "
                f"{args.num_train}")
        log(f"world size {world_size}, backend {backend}, "
            f"device type {device.type}")
        if world_size > 1:
            show_all_reduce(rank, world_size, device, log)
        result = train(args, rank, world_size, device, backend, log)
        log(f"training: {result['seconds']:.2f} s for {args.epochs} epochs")
        if rank == 0:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(result, indent=1))
            w, b = result["weight"], result["bias"]
            log(f"w = [{w[0]:.4f}, {w[1]:.4f}], b = {b:.4f}  "
                f"(true: {list(TRUE_W)}, {TRUE_B})")
    except Exception as err:
        # One short line per failed rank, easy to find in the output.
        print(f"[rank {rank}] {type(err).__name__}: {err}",
              file=sys.stderr, flush=True)
        raise
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


if __name__ == "__main__":
    main()
