"""Device helpers: names, counts, fallbacks, bad input, reports."""

import re
import subprocess
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import d2lgpu
from d2lgpu import devices

cpu = torch.device("cpu")


def dev(name):
    return torch.device(name)


# --- What each helper returns on each kind of machine. ------------------------

def test_cpu_is_the_cpu_device():
    assert d2lgpu.cpu() == cpu
    assert isinstance(d2lgpu.cpu(), torch.device)


def _must_not_be_called(*args, **kwargs):
    raise AssertionError("called although the backend is not available")


@pytest.mark.parametrize("name, probe", [
    ("cuda", devices._cuda_device_count),
    ("xpu", devices._xpu_device_count),
])
def test_count_probes_ask_for_the_count_only_when_available(monkeypatch,
                                                          name, probe):
    # device_count() is not even asked where the backend is unavailable (a
    # CUDA build of torch on a machine without a driver reports no device).
    backend = getattr(torch, name)  # torch.xpu: see the torch_xpu fixture
    monkeypatch.setattr(backend, "is_available", lambda: False)
    monkeypatch.setattr(backend, "device_count", _must_not_be_called, raising=False)
    assert probe() == 0
    monkeypatch.setattr(backend, "is_available", lambda: True)
    monkeypatch.setattr(backend, "device_count", lambda: 3)
    assert probe() == 3


def test_mps_probe(monkeypatch):
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert devices._mps_is_available() is True
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert devices._mps_is_available() is False


def test_no_accelerator(cuda_count_0):
    assert d2lgpu.accelerator() is None
    assert d2lgpu.num_gpus() == 0
    # gpu(i) only names a device; with none it names CUDA's, as d2l does.
    assert (d2lgpu.gpu(), d2lgpu.gpu(1)) == (dev("cuda:0"), dev("cuda:1"))
    assert d2lgpu.try_gpu() == cpu
    assert d2lgpu.try_gpu(1) == cpu
    assert d2lgpu.try_all_gpus() == []


def test_one_cuda_gpu(cuda_count_1):
    assert d2lgpu.accelerator() == "cuda"
    assert d2lgpu.num_gpus() == 1
    assert d2lgpu.try_gpu() == dev("cuda:0")
    assert d2lgpu.try_gpu(1) == cpu
    assert d2lgpu.try_gpu(10) == cpu
    assert d2lgpu.try_all_gpus() == [dev("cuda:0")]


def test_two_cuda_gpus(cuda_count_2):
    assert d2lgpu.num_gpus() == 2
    assert d2lgpu.try_gpu(0) == dev("cuda:0")
    assert d2lgpu.try_gpu(1) == dev("cuda:1")
    assert d2lgpu.try_gpu(2) == cpu
    assert d2lgpu.try_all_gpus() == [dev("cuda:0"), dev("cuda:1")]
    assert d2lgpu.gpu(5) == dev("cuda:5")  # named, not checked


def test_mps(mps_available):
    assert d2lgpu.accelerator() == "mps"
    assert d2lgpu.num_gpus() == 1
    assert d2lgpu.gpu() == dev("mps:0")
    assert d2lgpu.try_gpu() == dev("mps:0")
    assert d2lgpu.try_gpu(1) == cpu
    assert d2lgpu.try_all_gpus() == [dev("mps:0")]


def test_xpu(xpu_count_2):
    assert d2lgpu.accelerator() == "xpu"
    assert d2lgpu.num_gpus() == 2
    assert d2lgpu.try_gpu(1) == dev("xpu:1")
    assert d2lgpu.try_all_gpus() == [dev("xpu:0"), dev("xpu:1")]


def test_cuda_wins_over_mps(hardware):
    hardware(cuda=1, mps=True, xpu=1)
    assert d2lgpu.accelerator() == "cuda"
    assert d2lgpu.try_all_gpus() == [dev("cuda:0")]


def test_probes_read_torch(monkeypatch):
    """The probes really ask torch (so the fixtures patch the right place)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 3)
    assert d2lgpu.num_gpus() == 3
    assert d2lgpu.try_gpu(2) == dev("cuda:2")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert d2lgpu.try_all_gpus() == [dev("mps:0")]


# --- D2LGPU_FORCE_CPU=1: as on a machine without an accelerator. -------------

@pytest.mark.parametrize("kinds", [dict(cuda=2), dict(mps=True), dict(xpu=1)],
                         ids=["cuda", "mps", "xpu"])
def test_force_cpu(monkeypatch, hardware, kinds):
    hardware(**kinds)
    monkeypatch.setenv("D2LGPU_FORCE_CPU", "1")  # read at each call
    assert d2lgpu.accelerator() is None
    assert d2lgpu.num_gpus() == 0
    assert d2lgpu.try_gpu() == cpu and d2lgpu.try_gpu(1) == cpu
    assert d2lgpu.try_all_gpus() == []
    assert d2lgpu.gpu(1) == dev("cuda:1")  # only a name, as without a GPU
    assert d2lgpu.device_report().startswith(
        "No accelerator in use (D2LGPU_FORCE_CPU=1): running on the CPU")
    monkeypatch.setenv("D2LGPU_FORCE_CPU", "0")
    assert d2lgpu.accelerator() is not None
    assert d2lgpu.num_gpus() == kinds.get("cuda", kinds.get("xpu", 1))
    monkeypatch.setenv("D2LGPU_FORCE_CPU", "")
    assert d2lgpu.try_gpu() != cpu


@pytest.mark.parametrize("value", ["yes please", "true", "2", "cpu"])
def test_force_cpu_bad_value(monkeypatch, cuda_count_1, value):
    monkeypatch.setenv("D2LGPU_FORCE_CPU", value)
    message = (f"environment variable D2LGPU_FORCE_CPU must be '1' (use the "
               f"CPU), '0' or unset (use the accelerator), got {value!r}")
    for helper in (d2lgpu.accelerator, d2lgpu.num_gpus, d2lgpu.try_gpu,
                   d2lgpu.try_all_gpus):
        with pytest.raises(ValueError, match=re.escape(message)):
            helper()


# --- Bad input. --------------------------------------------------------------

@pytest.mark.parametrize("helper", [d2lgpu.gpu, d2lgpu.try_gpu])
@pytest.mark.parametrize("bad, error", [
    (-1, ValueError), (-2, ValueError), (1.5, TypeError), ("1", TypeError),
    (True, TypeError), (None, TypeError), (torch.tensor(1), TypeError),
])
def test_bad_index(helper, bad, error):
    name = helper.__name__
    with pytest.raises(error, match=re.escape(
            f"{name}(i): i must be a non-negative int, got {bad!r}")):
        helper(bad)


def test_numpy_style_integers_are_accepted(cuda_count_2):
    assert d2lgpu.gpu(np.int64(1)) == dev("cuda:1")
    assert d2lgpu.try_gpu(np.int64(1)) == dev("cuda:1")


# --- Sizes. ------------------------------------------------------------------

@pytest.mark.parametrize("n, text", [
    (0, "0 B"), (512, "512 B"), (12 * 1024, "12.0 KiB"),
    (512 * 2**20, "512 MiB"), (int(1.5 * 2**30), "1.50 GiB"),
    (80 * 2**30, "80.0 GiB"), (3 * 2**40, "3.00 TiB"),
    (1000 * 1024, "1000 KiB"), (1023.9 * 1024, "1.00 MiB"),  # rounding reaches 1024 KiB
])
def test_format_bytes(n, text):
    assert d2lgpu.format_bytes(n) == text


@pytest.mark.parametrize("bad, error", [(-1, ValueError), ("1", TypeError),
                                        (float("nan"), ValueError),
                                        (float("inf"), ValueError)])
def test_format_bytes_bad(bad, error):
    with pytest.raises(error, match=re.escape(
            f"format_bytes(n): n must be a finite number >= 0, got {bad!r}")):
        d2lgpu.format_bytes(bad)


# --- Reports. ----------------------------------------------------------------

def test_report_without_accelerator(cuda_count_0):
    report = d2lgpu.device_report()
    assert report == (f"No accelerator: running on the CPU "
                      f"({torch.get_num_threads()} threads)")


@pytest.fixture
def fake_cuda_memory(monkeypatch):
    """Two fake cards with known memory, read where device_report reads it.

    This process holds memory on both (1 GiB reserved), so each has a CUDA
    context and mem_get_info may be asked. Returns the devices it was asked
    about.
    """
    gib, mib = 2**30, 2**20
    names = ["NVIDIA Fake A100", "NVIDIA Fake T4"]
    asked = []

    def mem_get_info(i):
        asked.append(i)
        return 30 * gib, 40 * gib  # 10 GiB used

    # As a GPU's properties have them (the report reads the compute capability);
    # a CUDA build lists its architectures even without a GPU, so the list is
    # this fake's too: empty, no kernel line to compare (tests/unit/test_cuda_arch.py).
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda i: SimpleNamespace(name=names[i], total_memory=40 * gib,
                                                  major=8, minor=0))
    monkeypatch.setattr(torch.cuda, "get_arch_list", lambda: [])
    monkeypatch.setattr(torch.cuda, "mem_get_info", mem_get_info)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda i: 512 * mib)
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda i: gib)
    monkeypatch.setattr(torch.version, "cuda", "12.4")
    return asked


def test_report_with_fake_cuda(cuda_count_2, fake_cuda_memory):
    report = d2lgpu.device_report()
    lines = report.splitlines()
    assert lines[0].startswith("2 CUDA devices (PyTorch ")
    assert "CUDA 12.4" in lines[0]
    assert "cuda:0: NVIDIA Fake A100" in lines
    assert "cuda:1: NVIDIA Fake T4" in lines
    assert report.count("10.0 GiB used of 40.0 GiB") == 2
    assert report.count("512 MiB in tensors, 1.00 GiB reserved") == 2
    assert "No accelerator" not in report
    assert fake_cuda_memory == [0, 1]


def test_report_creates_no_context_on_an_idle_gpu(cuda_count_2,
                                                  fake_cuda_memory,
                                                  monkeypatch):
    # mem_get_info would create a CUDA context (hundreds of MiB) on a GPU this
    # process has not used: the report asks it only about cuda:1, where this
    # process holds memory, and gives cuda:0's total from its properties.
    gib = 2**30
    monkeypatch.setattr(torch.cuda, "memory_reserved",
                        lambda i: [0, gib][i])
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda i: 0)
    report = d2lgpu.device_report()
    assert fake_cuda_memory == [1]
    lines = report.splitlines()
    first = lines.index("cuda:0: NVIDIA Fake A100")
    assert lines[first + 1:first + 3] == [
        "  memory: 40.0 GiB total",
        "  this process: 0 B in tensors, 0 B reserved by PyTorch's caching "
        "allocator"]
    assert "  memory: 10.0 GiB used of 40.0 GiB (all processes)" in lines


def test_report_with_fake_mps(mps_available, monkeypatch):
    gib, mib = 2**30, 2**20
    monkeypatch.setattr(torch.mps, "recommended_max_memory", lambda: 12 * gib,
                        raising=False)
    monkeypatch.setattr(torch.mps, "current_allocated_memory", lambda: 3 * mib,
                        raising=False)
    monkeypatch.setattr(torch.mps, "driver_allocated_memory", lambda: 64 * mib,
                        raising=False)
    report = d2lgpu.device_report()
    assert report.startswith("1 MPS device (PyTorch ")
    assert "mps:0: Apple GPU" in report
    assert "12.0 GiB" in report
    assert "3.00 MiB in tensors, 64.0 MiB held by the Metal driver" in report


def test_report_with_fake_xpu(xpu_count_2, monkeypatch):
    gib, mib = 2**30, 2**20
    fake = {"get_device_properties": lambda i: SimpleNamespace(
                name=f"Intel Fake Arc {i}", total_memory=16 * gib),
            "mem_get_info": lambda i: (12 * gib, 16 * gib),
            "memory_allocated": lambda i: 256 * mib,
            "memory_reserved": lambda i: 300 * mib}
    for name, value in fake.items():
        monkeypatch.setattr(torch.xpu, name, value, raising=False)
    report = d2lgpu.device_report()
    assert report.startswith("2 XPU devices (PyTorch ")
    assert "xpu:1: Intel Fake Arc 1" in report
    assert report.count("4.00 GiB used of 16.0 GiB") == 2
    assert report.count("256 MiB in tensors, 300 MiB reserved") == 2


def test_report_with_an_older_xpu_backend(xpu_count_2, monkeypatch):
    # Older torch.xpu has no mem_get_info and no allocator figures.
    gib = 2**30
    monkeypatch.setattr(torch.xpu, "get_device_properties",
                        lambda i: SimpleNamespace(name="Intel Fake Max",
                                                  total_memory=64 * gib),
                        raising=False)
    for name in ("mem_get_info", "memory_allocated", "memory_reserved"):
        monkeypatch.delattr(torch.xpu, name, raising=False)
    report = d2lgpu.device_report()
    assert report.splitlines()[1:] == [
        "xpu:0: Intel Fake Max", "  memory: 64.0 GiB total",
        "xpu:1: Intel Fake Max", "  memory: 64.0 GiB total"]


def test_report_sizes_survive_the_notebook_sanitizer(cuda_count_1,
                                                     fake_cuda_memory,
                                                     sanitize):
    # tests/sanitize.cfg replaces sizes with <SIZE>: no raw byte counts remain.
    clean = sanitize(d2lgpu.device_report())
    assert "<SIZE> used of <SIZE>" in clean
    assert not re.search(r"\d{4,}", clean)


# --- show_devices: nvidia-smi where it works, else the report. -----------------

class FakeRun:
    def __init__(self, returncode=0, stdout="", raises=None):
        self.returncode, self.stdout, self.raises = returncode, stdout, raises
        self.calls = []

    def __call__(self, args, **kwargs):
        self.calls.append((args, kwargs))
        if self.raises is not None:
            raise self.raises
        return subprocess.CompletedProcess(args, self.returncode,
                                           stdout=self.stdout, stderr="")


def test_show_devices_uses_nvidia_smi(monkeypatch, capsys, cuda_count_0):
    run = FakeRun(stdout="+----- FAKE nvidia-smi TABLE -----+\n")
    monkeypatch.setattr(devices.shutil, "which",
                        lambda name: "/usr/bin/nvidia-smi"
                        if name == "nvidia-smi" else None)
    monkeypatch.setattr(devices.subprocess, "run", run)
    d2lgpu.show_devices()
    assert capsys.readouterr().out == "+----- FAKE nvidia-smi TABLE -----+\n"
    (args, kwargs), = run.calls
    assert args == ["/usr/bin/nvidia-smi"]
    assert 0 < kwargs["timeout"] <= 10


@pytest.mark.parametrize("run", [
    FakeRun(returncode=9, stdout="NVIDIA-SMI has failed"),
    FakeRun(raises=subprocess.TimeoutExpired("nvidia-smi", 5)),
    FakeRun(raises=OSError("exec format error")),
], ids=["fails", "hangs", "cannot-run"])
def test_show_devices_falls_back_when_nvidia_smi_breaks(monkeypatch, capsys,
                                                        cuda_count_0, run):
    monkeypatch.setattr(devices.shutil, "which", lambda name: "/x/nvidia-smi")
    monkeypatch.setattr(devices.subprocess, "run", run)
    d2lgpu.show_devices()
    assert capsys.readouterr().out == d2lgpu.device_report() + "\n"
    assert len(run.calls) == 1


def test_show_devices_without_nvidia_smi(monkeypatch, capsys, cuda_count_0):
    run = FakeRun()
    monkeypatch.setattr(devices.shutil, "which", lambda name: None)
    monkeypatch.setattr(devices.subprocess, "run", run)
    d2lgpu.show_devices()
    assert capsys.readouterr().out.startswith("No accelerator: running on the CPU")
    assert run.calls == []


def test_memory_counters_cuda_counts_with_torch_cuda_and_the_cpu_has_none():
    assert d2lgpu.memory_counters("cuda:1") is torch.cuda
    assert d2lgpu.memory_counters(torch.device("cpu")) is None


@pytest.mark.parametrize("kind", ["xpu", "mps"])
def test_memory_counters_on_other_gpus_from_torch_accelerator(monkeypatch, torch_accelerator,
                                                             kind):
    asked = []
    monkeypatch.setattr(torch.accelerator, "memory_allocated",
                        lambda device=None: asked.append(device) or 0, raising=False)
    assert d2lgpu.memory_counters(kind) is torch.accelerator
    assert asked == [torch.device(kind)]


def test_memory_counters_none_before_pytorch_2_9_or_where_the_allocator_refuses(
        monkeypatch, torch_accelerator):
    monkeypatch.delattr(torch.accelerator, "memory_allocated", raising=False)
    assert d2lgpu.memory_counters("xpu") is None  # PyTorch 2.6 to 2.8

    def refuses(device=None):
        raise RuntimeError("MPS allocator cannot be read")

    monkeypatch.setattr(torch.accelerator, "memory_allocated", refuses, raising=False)
    assert d2lgpu.memory_counters("mps") is None
