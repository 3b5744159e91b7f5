"""Cells of chapters/performance.ipynb on a CUDA GPU this machine lacks, faked.

nbval runs the chapter here, where every CUDA cell takes its CPU branch. These
tests run the CUDA branches with ``exec`` in a namespace made by the chapter's
own cells, with PyTorch's CUDA calls replaced by fakes that behave as the real
ones do where the cell relies on it: a captured graph replays the captured
operations into the same output tensor (FakeGraph), a model compiled with
reduce-overhead replays into the same output or refuses to show an
overwritten one (FakeCompiled), allocations past a size raise
``torch.OutOfMemoryError``, memory counters record the order in which they
are called. What the fakes cannot show (speed, the real allocator) is for a
recorded GPU run to show.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import d2lgpu

from chapter_code import cell_source  # tests/unit/chapter_code.py

CUDA = torch.device("cuda")


def cell(name=None, marker=None) -> str:
    """The source of performance's cell named ``name``, or the one containing ``marker``."""
    return cell_source("performance", name, marker)


def run(source: str, namespace: dict) -> dict:
    exec(compile(source, "<cell>", "exec"), namespace)
    return namespace


@pytest.fixture
def chapter(tmp_path, monkeypatch, hardware):
    """The chapter's namespace up to its model, with ``device`` set to CUDA.

    The tensors stay on the CPU, even on a machine with a GPU (d2lgpu sees
    none while the namespace is made); waiting for CUDA does nothing.
    """
    hardware()  # try_gpu() is the CPU: the model and inputs are made there
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


def install_fake_cuda_graphs(monkeypatch) -> list:
    """Streams that only log; torch.cuda.graph(g) records into g. Returns the log.

    Dynamo reads ``torch.cuda.Stream`` once, when it is first imported (the
    optimizer's ``add_param_group`` imports it), and on PyTorch <= 2.5
    refuses a class that does not inherit torch's stream base: "DeviceInterface
    member Stream should be inherit from _StreamBase", after which every
    import of ``torch._dynamo`` in the process fails. So it is imported here
    while ``Stream`` is still torch's.
    """
    import torch._dynamo  # noqa: F401  (before the fake Stream; see above)

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


@pytest.fixture
def fake_cuda_graphs(monkeypatch):
    """Streams that only log; torch.cuda.graph(g) records into g (``install_fake_cuda_graphs``)."""
    return install_fake_cuda_graphs(monkeypatch)


@pytest.mark.slow
def test_fake_streams_leave_dynamo_torchs_stream():
    # In a fresh process, where Dynamo is not imported yet, as in the first
    # test of an xdist worker: Dynamo must see torch's Stream, not the fake.
    code = ("import pytest, torch\n"
            "from test_performance_cells import install_fake_cuda_graphs\n"
            "install_fake_cuda_graphs(pytest.MonkeyPatch())\n"
            "assert torch.cuda.Stream is not torch.cuda.streams.Stream\n"
            "from torch._dynamo.device_interface import CudaInterface\n"
            "assert CudaInterface.Stream is torch.cuda.streams.Stream, CudaInterface.Stream\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parent,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def fake_benchmark(chapter, timed):
    """benchmark(fn, ...) that calls fn once, recording its operators in timed[label]."""
    from d2lgpu import Measurement

    def replays():
        return sum(g.replays for g in chapter.values() if isinstance(g, FakeGraph))

    def benchmark(fn, *args, device=None, label=None, **kwargs):
        before = replays()
        with Recorder() as recorder:
            fn(*args)
        replays_made = replays() - before
        timed[label] = (recorder.calls, replays_made)
        return Measurement(times=(1e-3,), number=1, device=CUDA, label=label)

    chapter["benchmark"] = benchmark
    return timed


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
    assert "64 calls:" in out and "64 inputs by the recipe:" in out


def test_cuda_graph_cell_times_what_the_recipe_does(chapter, fake_cuda_graphs):
    # Serving 64 inputs with a graph is a copy in, a replay and a clone out
    # for each: the timed recipe must do all three, not replay alone.
    timed = fake_benchmark(chapter, {})
    run(cell("cuda-graph"), chapter)
    static_in, static_out = chapter["static_in"], chapter["static_out"]

    def count(calls, op, tensor):
        return sum(1 for func, args, _, _ in calls
                   if func is op and args[0].data_ptr() == tensor.data_ptr())

    aten = torch.ops.aten
    recipes = [label for label, (calls, replays) in timed.items()
               if replays == 64
               and count(calls, aten.copy_.default, static_in) == 64
               and count(calls, aten.clone.default, static_out) == 64]
    assert recipes == ["64 inputs by the recipe"], timed.keys()


@pytest.mark.slow
def test_whole_training_step_graph_trains_as_eager_steps_do(chapter, fake_cuda_graphs, on_the_cpu,
                                                            capsys):
    import copy

    timed = fake_benchmark(chapter, {})
    run(cell("cuda-graph"), chapter)  # the side stream the step's warm-up uses
    reference = copy.deepcopy(chapter["mlp"]).train()
    run(cell("cuda-graph-step"), chapter)
    out = capsys.readouterr().out
    assert "the loss falls at each replay: True" in out
    assert "eager step:" in out and "replayed step:" in out
    # The fake capture runs the step once (a real one only records it); then
    # 5 replays and one timed: each replay is a whole step, with fresh
    # gradients (no zero_grad), as eager steps give.
    assert chapter["step_graph"].replays == 6
    assert timed["replayed step"][1] == 1
    sgd = torch.optim.SGD(reference.parameters(), lr=0.01)
    x, y = chapter["x"], chapter["y"]
    for _ in range(3 + 1 + 1 + 6):  # warm-up, timed eager, capture, replays
        sgd.zero_grad()
        torch.nn.functional.mse_loss(reference(x), y).backward()
        sgd.step()
    for trained, expected in zip(chapter["net"].parameters(), reference.parameters()):
        torch.testing.assert_close(trained, expected)


class FakeCompiled:
    """torch.compile(mode="reduce-overhead") as its outputs behave: each call
    replays into the same output tensor; with ``raises``, reading an output
    of an earlier call raises as CUDAGraph Trees do while still recording."""

    MESSAGE = ("Error: accessing tensor output of CUDAGraphs that has been "
               "overwritten by a subsequent run. Stack trace: [...]")

    def __init__(self, model, raises=False):
        self.model, self.raises, self.out = model, raises, None

    def __call__(self, x):
        fresh = self.model(x)
        if self.out is None or self.raises:
            if self.out is not None:
                self.out.stale = True
            self.out = fresh.as_subclass(Replayed)
        else:
            self.out.copy_(fresh)  # the same memory, overwritten
        return self.out


class Replayed(torch.Tensor):
    stale = False

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if any(isinstance(a, Replayed) and a.stale for a in args):
            raise RuntimeError(FakeCompiled.MESSAGE)
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("raises", [False, True])
def test_kept_compiled_output_is_overwritten_and_a_clone_is_not(chapter, capsys, raises):
    chapter["compiled"] = FakeCompiled(chapter["mlp"], raises)
    chapter["one"] = chapter["inputs"][:1]
    run(cell("compiled-outputs"), chapter)
    first, second = capsys.readouterr().out.splitlines()
    if raises:
        assert first == ("output kept as it came: Error: accessing tensor output "
                         "of CUDAGraphs that has been overwritten by a subsequent run")
    else:
        assert first == "output kept as it came: False"
    assert second == "a clone of it:          True"


class CompiledWithHint:
    """A compiled model whose first call warns as inductor does on a GPU with TF32 off."""

    def __init__(self, model):
        self.model, self.calls = model, 0

    def __call__(self, *args):
        import warnings

        self.calls += 1
        if self.calls == 1:
            warnings.warn("TensorFloat32 tensor cores for float32 matrix multiplication "
                          "available but not enabled. Consider setting "
                          "`torch.set_float32_matmul_precision('high')` for better "
                          "performance.", UserWarning)
        return self.model(*args)


def test_compile_cell_asks_for_reduce_overhead(chapter, monkeypatch, capsys):
    import warnings

    asked = []

    def compile(model, **options):
        asked.append(options)
        return CompiledWithHint(model)  # eager stands in for the compiled model

    monkeypatch.setattr(torch, "compile", compile)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(cell("compile-reduce-overhead"), chapter)
    out = capsys.readouterr().out
    assert asked == [{"mode": "reduce-overhead"}]
    for line in ("first call (compiles):", "mlp(x):", "compiled(x):",
                 "batch of 2 (compiles again):"):
        assert line in out
    # inductor's TF32 hint stays off the page (the precision chapter covers it)
    assert [str(w.message) for w in caught if "TensorFloat32" in str(w.message)] == []


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


@pytest.fixture
def on_the_cpu(monkeypatch):
    """Tensors and modules asked onto the (fake) GPU stay on the CPU."""
    randn = torch.randn

    def randn_here(*size, device=None, **kwargs):
        return randn(*size, **kwargs)

    monkeypatch.setattr(torch, "randn", randn_here)
    monkeypatch.setattr(torch.nn.Module, "to", lambda self, *args, **kwargs: self)


def step_namespace(chapter, log):
    """The chapter's step, small, logging each phase; its data on the CPU."""
    chapter["batch"], chapter["width"] = 4, 8
    big = torch.nn.Sequential(torch.nn.Linear(8, 8))
    chapter["big"] = big

    def logged(name, method):
        def call(*args, **kwargs):
            log.append(name)
            return method(*args, **kwargs)
        return call

    big.forward = logged("forward", big.forward)
    Adam = torch.optim.Adam

    class LoggedAdam(Adam):
        made = []

        def __init__(self, params, **options):
            LoggedAdam.made.append(options)
            super().__init__(params, **options)

        def zero_grad(self, *args, **kwargs):
            log.append("zero_grad")
            return super().zero_grad(*args, **kwargs)

        def step(self, *args, **kwargs):
            log.append("step")
            return super().step(*args, **kwargs)

    return LoggedAdam


def run_step_peak(chapter, monkeypatch, log):
    LoggedAdam = step_namespace(chapter, log)
    monkeypatch.setattr(torch.optim, "Adam", LoggedAdam)
    run(cell("step-peak"), chapter)
    return LoggedAdam.made


def test_step_peak_reads_the_peak_of_each_phase(chapter, monkeypatch, on_the_cpu, capsys):
    log = []
    FakeCounters(log).install(monkeypatch, torch.cuda)
    made = run_step_peak(chapter, monkeypatch, log)
    # Adam's default and fused=True, each: a first step (Adam's state), the
    # count between steps, a reset, then the peak read and restarted after
    # the forward pass, after zero_grad and backward, and after the step.
    assert made == [{}, {"fused": True}]
    one_adam = (["forward", "zero_grad", "step", "allocated", "reset",
                 "forward", "peak", "reset", "zero_grad", "peak", "reset",
                 "step", "peak", "reset"])
    assert log == one_adam * 2
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == ["Adam(): 1000 B allocated between steps",
                         "  peak in forward         2.93 KiB",
                         "  peak in backward        2.93 KiB",
                         "  peak in optimizer.step  2.93 KiB"]
    assert lines[4] == "Adam(fused=True): 1000 B allocated between steps"


def test_step_peak_on_another_gpu_reads_torch_accelerator(chapter, monkeypatch, on_the_cpu,
                                                         torch_accelerator):
    log = []
    chapter["device"] = torch.device("xpu")
    FakeCounters(log).install(monkeypatch, torch.accelerator)
    run_step_peak(chapter, monkeypatch, log)
    # memory_counters first reads the allocator once, to see that it can.
    assert log[:5] == ["allocated", "forward", "zero_grad", "step", "allocated"]


@pytest.mark.parametrize("kind", ["xpu", "mps"])
def test_step_peak_on_a_gpu_without_counters_says_so(chapter, monkeypatch, on_the_cpu,
                                                     capsys, kind, torch_accelerator):
    # XPU before PyTorch 2.9, MPS where its allocator cannot be read: an
    # accelerator is there, PyTorch just keeps no counters for it.
    log = []
    chapter["device"] = torch.device(kind)
    chapter["memory_counters"] = lambda device: None
    run_step_peak(chapter, monkeypatch, log)
    assert capsys.readouterr().out == f"{kind}: no memory counters for it in this PyTorch.\n"
    assert log == []


@pytest.fixture
def small_batches(monkeypatch, on_the_cpu):
    """randn makes at most 32 rows (a 4096-row batch is slow on a CPU); the rows asked for are kept."""
    asked = []
    randn = torch.randn

    def randn_small(*size, **kwargs):
        asked.append(size[0])
        return randn(min(size[0], 32), *size[1:], **kwargs)

    monkeypatch.setattr(torch, "randn", randn_small)
    return asked


@pytest.mark.slow
def test_memory_savers_measure_each_way_and_agree(chapter, monkeypatch, small_batches,
                                                  capsys):
    log = []
    FakeCounters(log).install(monkeypatch, torch.cuda)
    chapter["memory"] = torch.cuda
    run(cell("memory-savers"), chapter)
    lines = capsys.readouterr().out.splitlines()
    # Each peak is net of what was allocated before: 3000 - 1000 bytes.
    assert lines == [f"{way + ':':13} peak 1.95 KiB, same gradient: True"
                     for way in ("whole", "accumulated", "checkpointed")] + [
        f"{'inference:':13} peak 1.95 KiB"]
    assert log == ["allocated", "reset", "peak"] * 4
    assert small_batches == [4096]  # the GPU's batch


@pytest.mark.slow
def test_memory_savers_without_counters_still_check_the_gradients(chapter, capsys,
                                                                 small_batches):
    chapter["memory"] = None
    chapter["device"] = torch.device("cpu")
    run(cell("memory-savers"), chapter)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [
        "whole:", "accumulated:", "checkpointed:", "inference:"]
    assert all(line.endswith("same gradient: True") for line in lines[:3])


def test_snapshot_cell_records_python_stacks_of_the_steps_beside_the_notebook(
        chapter, monkeypatch, on_the_cpu, capsys):
    log = []
    LoggedAdam = step_namespace(chapter, log)
    monkeypatch.setattr(torch.optim, "Adam", LoggedAdam)
    chapter["memory_counters"] = lambda device: None
    run(cell("step-peak"), chapter)  # defines train_step
    capsys.readouterr()
    log.clear()
    asked = []

    def record(enabled="all", **kwargs):
        asked.append(kwargs)
        log.append(f"history {enabled}")

    monkeypatch.setattr(torch.cuda.memory, "_record_memory_history", record)
    monkeypatch.setattr(torch.cuda.memory, "_dump_snapshot",
                        lambda path: (log.append("dump"), Path(path).write_bytes(bytes(10))))
    run(cell("memory-snapshot"), chapter)
    steps = ["forward", "zero_grad", "step"]
    assert log == ["history all"] + steps * 3 + ["dump", "history None"]
    # C++ frames can make the dump take minutes: Python stacks only.
    assert asked[0]["stacks"] == "python"
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
        seen.append((env["PYTORCH_CUDA_ALLOC_CONF"], env.get("PYTORCH_ALLOC_CONF")))
        return subprocess.CompletedProcess(args, 0, stdout="512 MiB reserved\n", stderr="")

    # The setting's newer name, set by the reader's environment, could
    # override the one the cell sets: the children must not inherit it.
    monkeypatch.setenv("PYTORCH_ALLOC_CONF", "expandable_segments:False")
    monkeypatch.setattr(subprocess, "run", fake_run)
    run(cell("expandable-segments"), chapter)
    assert seen == [("", None), ("expandable_segments:True", None)]
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


@pytest.mark.slow
def test_mfu_counts_six_flops_per_weight_and_example_but_four_in_the_first_layer(
        chapter, monkeypatch, small_batches, capsys):
    # 50% of an H100 SXM's 67 TFLOP/s of float32 (its datasheet row).
    from d2lgpu import Measurement, peaks

    chapter["memory"] = None
    run(cell("memory-savers"), chapter)  # the model and batch the cell times
    capsys.readouterr()
    layers = [layer[0].weight.numel() for layer in chapter["deep"]]
    flops = len(chapter["Z"]) * (6 * sum(layers) - 2 * layers[0])  # no input gradient
    seconds = flops / (0.5 * 67e12)
    timed = []

    def benchmark(fn, *args, **kwargs):
        timed.append(fn)
        return Measurement(times=(seconds,), number=1, device=CUDA)

    chapter["benchmark"] = benchmark
    monkeypatch.setattr(peaks, "_gpu_name", lambda device: "NVIDIA H100 80GB HBM3")
    chapter["d2lgpu"] = d2lgpu  # the install cell's import
    run(cell("mfu"), chapter)
    lines = capsys.readouterr().out.splitlines()
    assert timed == [chapter["whole"]]
    assert lines[0] == "forward and backward: 33.5 TFLOP/s in " + (
        f"{d2lgpu.format_time(seconds)} ± {d2lgpu.format_time(0.0)}"), lines
    assert lines[1].startswith("50% of the NVIDIA H100 SXM FP32 peak"), lines
    assert lines[2] == "while timed: no clocks or power sampled"  # no samples


def test_clocks_cell_asks_nvidia_smi_for_performance_and_clocks(chapter, monkeypatch,
                                                                capsys):
    import shutil

    asked = []

    def fake_run(args, **kwargs):
        asked.append(args[1:])
        return subprocess.CompletedProcess(args, 0, stdout="Clocks Event Reasons\n",
                                           stderr="")

    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(subprocess, "run", fake_run)
    run(cell("nvidia-smi-query"), chapter)
    capsys.readouterr()
    asked.clear()
    run(cell("nvidia-smi-clocks"), chapter)
    assert asked == [["-q", "-d", "PERFORMANCE,CLOCK"]]
    assert "Clocks Event Reasons" in capsys.readouterr().out
