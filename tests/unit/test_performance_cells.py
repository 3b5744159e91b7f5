"""Cells of chapters/performance.ipynb on a CUDA GPU this machine lacks, faked.

nbval runs the chapter here, where every CUDA cell takes its CPU branch. These
tests run the CUDA branches with ``exec`` in a namespace made by the chapter's
own cells, with PyTorch's CUDA calls replaced by fakes that behave as the real
ones do where the cell relies on it: a captured graph replays the captured
operations into the same output tensor (FakeGraph), allocations past a size
raise ``torch.OutOfMemoryError``, memory counters record the order in which
they are called. What the fakes cannot show (speed, the real allocator) is
for a recorded GPU run to show.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from booktools import runs

NOTEBOOK = Path(__file__).resolve().parents[2] / "chapters" / "performance.ipynb"
CUDA = torch.device("cuda")


def cell(name=None, marker=None) -> str:
    """The source of the cell named ``name``, or the one containing ``marker``."""
    cells = runs.code_cells(runs.read_notebook(NOTEBOOK))
    found = [c for c in cells if (name and runs.cell_name(c) == name)
             or (marker and marker in c.source)]
    assert len(found) == 1, (name or marker, len(found))
    return found[0].source


def run(source: str, namespace: dict) -> dict:
    exec(compile(source, "<cell>", "exec"), namespace)
    return namespace


@pytest.fixture
def chapter(tmp_path, monkeypatch):
    """The chapter's namespace up to its model, with ``device`` set to CUDA.

    The tensors stay on the CPU; waiting for CUDA does nothing.
    """
    monkeypatch.chdir(tmp_path)  # the chapter writes outputs/ beside itself
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *args, **kwargs: None)
    namespace = run(cell(marker="from d2lgpu import"), {})
    run(cell(marker="mlp = nn.Sequential"), namespace)
    namespace["device"] = CUDA
    return namespace


class Recorder(TorchDispatchMode):
    """Keeps every operator call made under it: (operator, args, kwargs, output)."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.calls.append((func, args, kwargs or {}, out))
        return out


class FakeGraph:
    """torch.cuda.CUDAGraph as the chapter relies on it: replay() runs the
    captured operators again on the same tensors and writes each result into
    the tensor that capture produced (the graph's static memory)."""

    def __init__(self):
        self.recorder = Recorder()
        self.replays = 0

    def replay(self):
        with torch.no_grad():
            for func, args, kwargs, out in self.recorder.calls:
                again = func(*args, **kwargs)
                if isinstance(out, torch.Tensor) and out is not again:
                    out.copy_(again)
        self.replays += 1


@pytest.fixture
def fake_cuda_graphs(monkeypatch):
    """Streams that only log; torch.cuda.graph(g) records into g."""
    log = []

    class Stream:
        def wait_stream(self, other):
            log.append("wait_stream")

    class OnStream:
        def __init__(self, stream):
            self.stream = stream

        def __enter__(self):
            log.append("side stream")

        def __exit__(self, *exc):
            log.append("back")

    class Capture:
        def __init__(self, graph, **kwargs):
            assert isinstance(graph, FakeGraph)
            self.graph = graph

        def __enter__(self):
            log.append("capture")
            self.graph.recorder.__enter__()

        def __exit__(self, *exc):
            self.graph.recorder.__exit__(*exc)

    monkeypatch.setattr(torch.cuda, "Stream", Stream)
    monkeypatch.setattr(torch.cuda, "stream", OnStream)
    monkeypatch.setattr(torch.cuda, "current_stream", Stream)
    monkeypatch.setattr(torch.cuda, "CUDAGraph", FakeGraph)
    monkeypatch.setattr(torch.cuda, "graph", Capture)
    return log


def test_cuda_graph_cell_warms_up_captures_and_replays(chapter, fake_cuda_graphs, capsys):
    run(cell("cuda-graph"), chapter)
    out = capsys.readouterr().out
    # The warm-up ran on the side stream, before the capture.
    assert fake_cuda_graphs[:4] == ["wait_stream", "side stream", "back", "wait_stream"]
    assert fake_cuda_graphs[4] == "capture"
    # 64 inputs, each copied into the static input and replayed: the cloned
    # outputs are the model's, as the cell checks (a replay overwrites the
    # static output, so without the clone all 64 would be the last).
    assert "replays equal the model: True" in out
    assert chapter["graph"].replays >= 64
    assert "64 calls:" in out and "64 replays:" in out


def test_compile_cell_asks_for_reduce_overhead(chapter, monkeypatch, capsys):
    asked = []

    def compile(model, **options):
        asked.append(options)
        return model  # eager stands in for the compiled model

    monkeypatch.setattr(torch, "compile", compile)
    run(cell("compile-reduce-overhead"), chapter)
    out = capsys.readouterr().out
    assert asked == [{"mode": "reduce-overhead"}]
    for line in ("first call (compiles):", "mlp(x):", "compiled(x):",
                 "batch of 2 (compiles again):"):
        assert line in out


COUNTERS = ("reset_peak_memory_stats", "memory_allocated", "max_memory_allocated")


class FakeCounters:
    """Memory counters that log their calls; the peak is 3000 bytes."""

    def __init__(self, log):
        self.log = log

    def install(self, monkeypatch, module):
        for name in COUNTERS:
            monkeypatch.setattr(module, name, getattr(self, name), raising=False)

    def reset_peak_memory_stats(self, *args):
        self.log.append("reset")

    def memory_allocated(self, *args):
        self.log.append("allocated")
        return 1000

    def max_memory_allocated(self, *args):
        self.log.append("peak")
        return 3000


def step_namespace(chapter, monkeypatch, log):
    """The chapter's step, small, logging each call; its data on the CPU."""
    randn = torch.randn

    def randn_here(*size, device=None, **kwargs):
        return randn(*size, **kwargs)

    monkeypatch.setattr(torch, "randn", randn_here)
    chapter["batch"], chapter["width"] = 4, 8
    big = torch.nn.Sequential(torch.nn.Linear(8, 8))
    chapter["big"] = big
    source = cell("step-peak").replace("big = big.to(device)\n", "")
    original = big.forward

    def forward(x):
        log.append("step")
        return original(x)

    monkeypatch.setattr(big, "forward", forward)
    return source


def test_step_peak_resets_before_the_step_and_reads_after(chapter, monkeypatch, capsys):
    log = []
    source = step_namespace(chapter, monkeypatch, log)
    FakeCounters(log).install(monkeypatch, torch.cuda)
    run(source, chapter)
    # A first step (Adam's state), then reset, the count before, the step, the peak.
    assert log == ["step", "reset", "allocated", "step", "peak"]
    out = capsys.readouterr().out
    assert "allocated between steps: 1000 B" in out
    assert "peak during the step:    2.93 KiB" in out


def test_step_peak_on_another_gpu_reads_torch_accelerator(chapter, monkeypatch, capsys,
                                                         torch_accelerator):
    log = []
    source = step_namespace(chapter, monkeypatch, log)
    chapter["device"] = torch.device("xpu")
    FakeCounters(log).install(monkeypatch, torch.accelerator)
    run(source, chapter)
    # memory_counters first reads the allocator once, to see that it can.
    assert log == ["step", "allocated", "reset", "allocated", "step", "peak"]


def test_step_peak_on_a_backend_without_counters_says_so(chapter, monkeypatch, capsys,
                                                       torch_accelerator):
    log = []
    source = step_namespace(chapter, monkeypatch, log)
    chapter["device"] = torch.device("mps")

    class Refusing(FakeCounters):
        def reset_peak_memory_stats(self, *args):
            raise RuntimeError("not supported on this backend")

    Refusing(log).install(monkeypatch, torch.accelerator)
    run(source, chapter)
    assert "mps: not supported on this backend" in capsys.readouterr().out


def test_snapshot_cell_records_only_the_steps_and_writes_beside_the_notebook(
        chapter, monkeypatch, capsys):
    log = []
    source = step_namespace(chapter, monkeypatch, log)
    run(source.split("memory = memory_counters")[0], chapter)  # defines train_step
    log.clear()
    monkeypatch.setattr(torch.cuda.memory, "_record_memory_history",
                        lambda enabled="all", **kwargs: log.append(f"history {enabled}"))
    monkeypatch.setattr(torch.cuda.memory, "_dump_snapshot",
                        lambda path: (log.append("dump"), Path(path).write_bytes(bytes(10))))
    run(cell("memory-snapshot"), chapter)
    assert log == ["history all", "step", "step", "step", "dump", "history None"]
    assert Path("outputs/memory-snapshot.pickle").is_file()
    assert "wrote outputs/memory-snapshot.pickle (10 B)" in capsys.readouterr().out


def test_oom_cell_halves_the_batch_until_it_fits(chapter, monkeypatch, capsys):
    tried, emptied = [], []
    randn = torch.randn

    def randn_on_a_small_gpu(n, *size, device=None, **kwargs):
        tried.append(n)
        if n > 3000:  # this GPU holds 3000 examples
            # As the chapter catches it: torch.OutOfMemoryError is new in PyTorch 2.5.
            raise getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)(
                "CUDA out of memory. Tried to allocate ...")
        return randn(1, 1)

    monkeypatch.setattr(torch, "randn", randn_on_a_small_gpu)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: emptied.append(len(tried)))
    run(cell("oom-retry"), chapter)
    assert tried == [2**k for k in range(20, 10, -1)]
    assert capsys.readouterr().out == "largest batch that fit: 2048 examples\n"
    assert len(emptied) == len(tried)  # after each failure, and once at the end


def test_expandable_segments_runs_fresh_processes_with_each_setting(chapter, monkeypatch,
                                                                    capsys):
    seen = []

    def fake_run(args, env=None, **kwargs):
        seen.append(env["PYTORCH_CUDA_ALLOC_CONF"])
        return subprocess.CompletedProcess(args, 0, stdout="512 MiB reserved\n", stderr="")

    monkeypatch.setattr(subprocess, "run", fake_run)
    run(cell("expandable-segments"), chapter)
    assert seen == ["", "expandable_segments:True"]
    assert capsys.readouterr().out.splitlines() == [
        f"{'default':25} 512 MiB reserved",
        f"{'expandable_segments:True':25} 512 MiB reserved"]


def test_trace_cell_asks_for_cuda_kernels_and_writes_outputs(chapter, monkeypatch, capsys):
    from torch import profiler

    asked = []
    real_profile = profiler.profile

    def profile(*, activities, **kwargs):
        asked.append(list(activities))
        return real_profile(activities=[profiler.ProfilerActivity.CPU], **kwargs)

    monkeypatch.setattr(profiler, "profile", profile)
    run(cell("profiler-trace"), chapter)
    assert asked == [[profiler.ProfilerActivity.CPU, profiler.ProfilerActivity.CUDA]]
    assert Path("outputs/trace.json").stat().st_size > 0
    assert capsys.readouterr().out.startswith("wrote outputs/trace.json (")
