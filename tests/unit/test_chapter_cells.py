"""Chapter cells run on hardware this machine lacks, faked.

nbval runs the chapters on the machine at hand only. These tests take a few
cells' code from the executed notebooks and run it, with ``exec``, on fake
hardware: Apple's MPS (which accepts any device index) and PyTorch's CUDA
build on a machine without a GPU (whose ``torch.accelerator`` still names
CUDA). Each cell runs in a namespace set up by the chapter's own import cell.
"""

from pathlib import Path

import pytest
import torch

from chapter_code import cell_source  # tests/unit/chapter_code.py



def run_cells(chapter, *names):
    """Run the chapter's import cell, then the cells named ``names``, in one namespace."""
    namespace = {"torch": torch}
    exec(cell_source(chapter, marker="from d2lgpu import"), namespace)
    for name in names:
        exec(cell_source(chapter, name=name), namespace)
    return namespace


# --- devices: a tensor on gpu(num_gpus()), the first index the machine lacks. --

@pytest.fixture
def fake_mps(monkeypatch, hardware):
    """MPS as a Mac has it: d2lgpu picks it, and any index is accepted."""
    hardware(mps=True)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    zeros = torch.zeros

    def zeros_on_mps(*args, device=None, **kwargs):
        if device is not None and torch.device(device).type == "mps":
            return zeros(*args, **kwargs)  # a CPU tensor stands in, no error
        return zeros(*args, device=device, **kwargs)

    monkeypatch.setattr(torch, "zeros", zeros_on_mps)


def test_missing_device_cells_on_mps(fake_mps, capsys):
    namespace = run_cells("devices", "missing-device-error")
    assert namespace["missing"] == torch.device("mps:1")
    out = capsys.readouterr().out
    assert "mps:1" in out
    assert "Error" not in out


def test_missing_device_cells_without_accelerator(monkeypatch, hardware, capsys):
    # gpu(0) is cuda:0 here: a CPU-only build raises AssertionError, a CUDA
    # build without a GPU a RuntimeError; the cells print the error either way.
    hardware(cuda=0)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    zeros = torch.zeros

    def zeros_without_cuda(*args, device=None, **kwargs):
        # As a CUDA build on a machine without a GPU answers (on a machine with
        # one, the real call would succeed and the cell print "no error").
        if device is not None and torch.device(device).type == "cuda":
            raise RuntimeError("No CUDA GPUs are available")
        return zeros(*args, device=device, **kwargs)

    monkeypatch.setattr(torch, "zeros", zeros_without_cuda)
    namespace = run_cells("devices", "missing-device-error")
    assert namespace["missing"] == torch.device("cuda:0")
    out = capsys.readouterr().out
    assert "Error" in out


# --- environment: torch.accelerator on PyTorch's CUDA build without a GPU. ----

@pytest.mark.skipif(not hasattr(torch, "accelerator"),
                    reason="torch.accelerator is new in PyTorch 2.6")
def test_torch_accelerator_cell_on_cuda_build_without_gpu(monkeypatch, hardware,
                                                         capsys):
    hardware()  # no accelerator for d2lgpu either
    monkeypatch.setattr(torch.accelerator, "current_accelerator",
                        lambda *args, **kwargs: torch.device("cuda"))
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    run_cells("environment", "torch-accelerator")
    lines = capsys.readouterr().out.splitlines()
    said = [line for line in lines if line.startswith("torch.accelerator:")]
    assert said == ["torch.accelerator: none"], lines
    assert "cpu" in next(line for line in lines if line.startswith("d2lgpu.try_gpu"))


# --- environment: does this build have kernels for the GPU? --------------------

@pytest.mark.parametrize("capability, verdict", [
    ((7, 0), "none"),                 # a V100 under a CUDA 13 build
    ((9, 0), "sm_90"),                # an H100
    ((12, 1), "sm_120 compute_120"),  # a newer Blackwell: cubin and PTX
])
def test_kernel_check_cell_on_a_fake_gpu(monkeypatch, capsys, capability,
                                         verdict):
    import d2lgpu

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability",
                        lambda device=None: capability)
    monkeypatch.setattr(torch.cuda, "get_arch_list", lambda: [
        "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"])
    exec(cell_source("environment", name="cuda-kernels"), {"torch": torch, "d2lgpu": d2lgpu})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"GPU 0 compute capability: {capability}"
    assert lines[-1] == f"of them, for this GPU:    {verdict}"


def test_kernel_check_cell_without_a_gpu(monkeypatch, capsys):
    import d2lgpu

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    exec(cell_source("environment", name="cuda-kernels"), {"torch": torch, "d2lgpu": d2lgpu})
    assert capsys.readouterr().out == "No usable CUDA GPU: no kernels to look for.\n"


# --- environment: the PCI address of each GPU, as nvidia-smi prints it. --------

@pytest.mark.parametrize("pci, where", [
    ({"pci_domain_id": 0, "pci_bus_id": 0, "pci_device_id": 6},
     ", PCI 00000000:00:06.0"),  # the H100 VM: GPUs differ by device number
    ({}, ""),                    # a release without the PCI fields
])
def test_device_order_cell_prints_domain_bus_and_device(monkeypatch, capsys, pci,
                                                         where):
    from types import SimpleNamespace

    source = cell_source("environment", name="cuda-device-order")
    child = {"subprocess": None}
    exec(source.split("env = dict(")[0], child)  # the child program, unrun
    props = SimpleNamespace(name="NVIDIA H100 80GB HBM3", uuid="1ea945f7", **pci)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: props)
    exec(child["child"], {})
    assert capsys.readouterr().out.splitlines() == [
        "1 CUDA GPUs", f"cuda:0: NVIDIA H100 80GB HBM3, UUID 1ea945f7{where}"]


# --- measuring: Timer's clock waits for the device, whatever Timer does. ------

def test_timer_cell_clock_waits_for_the_device(monkeypatch):
    # Timer's own clock waits for MPS only from PyTorch 2.9, for XPU from 2.7.
    import d2lgpu

    waits = []
    monkeypatch.setattr(d2lgpu, "synchronize", lambda device=None: waits.append(device))
    namespace = {"torch": torch, "d2lgpu": d2lgpu}
    exec(cell_source("measuring", marker="from d2lgpu import"), namespace)
    namespace.update(device=torch.device("cpu"), A=torch.ones(2, 2))
    exec(cell_source("measuring", name="torch-benchmark-timer"), namespace)
    assert waits, "the clock given to Timer never waited for the device"


# --- tensors: memory counters for any GPU whose counters this PyTorch reads. --

@pytest.mark.skipif(not hasattr(getattr(torch, "accelerator", None),
                                "memory_allocated"),
                    reason="torch.accelerator's memory counters are new in 2.9")
@pytest.mark.parametrize("kind, readable", [("xpu", True), ("mps", False)])
def test_memory_counters_cell_on_other_gpus(monkeypatch, capsys, kind, readable):
    def allocated(device=None):
        if not readable:  # as MPS's allocator in releases that cannot read it
            raise RuntimeError("Allocator for mps is not a DeviceAllocator.")
        return 1024

    monkeypatch.setattr(torch.accelerator, "memory_allocated", allocated)
    monkeypatch.setattr(torch.accelerator, "memory_reserved",
                        lambda device=None: 2 * 1024 ** 2)
    monkeypatch.setattr(torch.accelerator, "max_memory_allocated",
                        lambda device=None: 4096)
    namespace = {}
    exec(cell_source("tensors", marker="from d2lgpu import"), namespace)
    namespace["device"] = torch.device(kind)
    exec(cell_source("tensors", name="memory-counters"), namespace)
    lines = capsys.readouterr().out.splitlines()
    if readable:
        assert [line.split()[0] for line in lines] == [
            "allocated:", "reserved:", "peak:"], lines
    else:
        assert lines == [f"{kind}: no memory counters for it in this PyTorch."]


# --- distributed: NCCL's log, on two GPUs this machine lacks. ----------------

def nccl_log(rank, pid):
    """Lines NCCL_DEBUG=INFO prints for one rank, start-up first, paths later."""
    head = f"gpu-host:{pid}:{pid} [{rank}] NCCL INFO"
    startup = [f"{head} Bootstrap: Using eth0:10.0.0.2<0>",
               f"{head} cudaDriverVersion 13000",
               f"{head} NCCL version 2.27.7+cuda13.0",
               f"{head} NET/Plugin: Could not find: libnccl-net.so.",
               f"{head} NET/IB : No device found.",
               f"{head} NET/Socket : Using [0]eth0:10.0.0.2<0>",
               f"{head} Using network Socket",
               f"{head} ncclCommInitRankConfig comm 0x55d0 rank {rank} nranks 2",
               f"{head} Setting affinity for GPU {rank} to ffff",
               f"{head} comm 0x55d0 rank {rank} nRanks 2 nNodes 1 localRanks 2",
               f"{head} Channel 00/02 : 0 1",
               f"{head} Channel 01/02 : 0 1",
               f"{head} P2P Chunksize set to 524288",
               f"{head} Connected all rings"]
    peer = 1 - rank
    paths = [f"{head} Channel {c:02d}/0 : {rank}[{rank}] -> {peer}[{peer}] "
             "via P2P/CUMEM/read" for c in range(2)]
    return startup + paths


def test_nccl_debug_cell_reads_nccl_log_from_standard_output(monkeypatch, capsys,
                                                            tmp_path):
    # NCCL writes its log to standard output (stdout unless NCCL_DEBUG_FILE
    # is set); the paths (" via ") come after its start-up lines.
    import d2lgpu.launch
    from d2lgpu.launch import Run

    stdout = "\n".join(["world size 2, backend nccl, device type cuda"]
                       + nccl_log(0, 101) + nccl_log(1, 102)
                       + ["training: 0.52 s for 3 epochs"]) + "\n"
    asked = []

    def launch(script, *args, env=None, **kwargs):
        asked.append(env)
        return Run(str(script), [], "run", 1, 0, 1.0, stdout, "torchrun's banner\n")

    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(d2lgpu.launch, "launch", launch)
    namespace = {"torch": torch, "d2lgpu": d2lgpu, "SCRIPT": Path("ddp_train.py"),
                 "workdir": tmp_path}
    exec(cell_source("distributed", name="nccl-debug"), namespace)
    lines = capsys.readouterr().out.splitlines()
    assert asked == [{"NCCL_DEBUG": "INFO"}]
    paths = [line for line in lines if " via " in line]
    assert len(paths) == 4, lines  # both ranks' channels, not cut off
    assert lines[-1] == "32 lines of NCCL INFO, 4 of them paths"


# --- copies: loader workers where Python spawns them (macOS, Windows). -------

def test_loader_cell_uses_no_workers_where_they_would_not_find_the_dataset(monkeypatch,
                                                                          capsys):
    # A class defined in a notebook cannot be unpickled by a spawned worker:
    # there the cell keeps the loading in the loop (num_workers=0).
    import multiprocessing

    made = []
    namespace = {}
    exec(cell_source("copies", marker="from d2lgpu import"), namespace)
    DataLoader = namespace["DataLoader"]

    def loader(*args, **options):
        made.append(options)
        return DataLoader(*args, **options)

    namespace["DataLoader"] = loader
    monkeypatch.setattr(multiprocessing, "get_start_method", lambda *a, **k: "spawn")
    exec(cell_source("copies", name="loader-workers").replace("step_seconds=0.02",
                                                         "step_seconds=0.0"),
         namespace)
    assert made == [{"batch_size": 32, "num_workers": 0}] * 2
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "num_workers=0, epoch 1", "num_workers=0, epoch 2"] * 2


# --- measuring: the profiler's table of a CUDA run, the kernels faked away. ---

@pytest.mark.slow
def test_profiler_cell_records_steps_after_the_start_up(monkeypatch, capsys):
    # The profiler's own start-up ("Activity Buffer Request", on the H100 the
    # top row) must fall in the skipped and warm-up steps, not in the table.
    from torch import profiler

    asked = []
    real_profile = profiler.profile

    def profile(*, activities, **options):
        asked.append((list(activities), options))
        return real_profile(activities=[profiler.ProfilerActivity.CPU], **options)

    randn = torch.randn
    monkeypatch.setattr(torch, "randn", lambda *size, device=None: randn(*size))
    monkeypatch.setattr(profiler, "profile", profile)
    namespace = {}
    exec(cell_source("measuring", marker="from d2lgpu import"), namespace)
    namespace["device"] = torch.device("cuda")
    exec(cell_source("measuring", name="profiler-table"), namespace)
    (activities, options), = asked
    assert activities == [profiler.ProfilerActivity.CPU, profiler.ProfilerActivity.CUDA]
    assert options["profile_memory"] is True
    plan = options["schedule"]
    assert [plan(step) for step in range(2)] == [profiler.ProfilerAction.NONE,
                                                 profiler.ProfilerAction.WARMUP]
    steps = [e for e in namespace["prof"].key_averages() if e.key == "ProfilerStep*"]
    assert steps[0].count == 5  # the steps recorded: the third to the seventh
    table = capsys.readouterr().out
    assert "matrix-vector" in table and "norm and item" in table
