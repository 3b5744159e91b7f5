"""Tests of d2lgpu.matmul on the CPU, with GPU names and properties faked."""

import matplotlib
import pytest
import torch

from d2lgpu import matmul, peaks

matplotlib.use("Agg")


@pytest.fixture
def fake_gpu(monkeypatch):
    """``fake_gpu(name, capability=(9, 0), memory_gib=80)`` fakes cuda:0."""
    def fake(name, capability=(9, 0), memory_gib=80):
        monkeypatch.setattr(matmul, "_gpu_name", lambda device: name)
        monkeypatch.setattr(matmul, "_gpu_capability",
                            lambda device: capability)
        monkeypatch.setattr(matmul, "_gpu_memory",
                            lambda device: int(memory_gib * 2**30))
    return fake


def test_the_peaks_live_in_d2lgpu_peaks():
    # One table of datasheet peaks: the exercise's helpers hold none of their own.
    for gone in ("DATASHEET_PEAKS", "peak_report", "datasheet_row"):
        assert not hasattr(matmul, gone)


def test_sizes_on_the_cpu():
    sizes = matmul.matmul_sizes("cpu")
    assert sizes[:4] == [16, 24, 32, 48]
    assert sizes[-1] == 1024 and 1536 not in sizes
    assert sizes == sorted(set(sizes))


@pytest.mark.parametrize("memory_gib, largest", [
    (15, 8192),      # T4
    (22, 8192),      # L4
    (39.5, 16384),   # A100 40 GB, as the driver reports it
    (79.2, 16384),   # H100 80 GB
])
def test_sizes_by_gpu_memory(fake_gpu, memory_gib, largest):
    fake_gpu("some GPU", memory_gib=memory_gib)
    sizes = matmul.matmul_sizes(torch.device("cuda", 0))
    assert sizes[-1] == largest
    assert sizes[-2] == largest * 3 // 4


def test_sizes_on_mps_stop_at_8192():
    assert matmul.matmul_sizes(torch.device("mps"))[-1] == 8192


@pytest.mark.parametrize("capability, half", [
    ((7, 5), torch.float16),    # T4
    ((8, 0), torch.bfloat16),   # A100
    ((9, 0), torch.bfloat16),   # H100
])
def test_dtypes_on_cuda(fake_gpu, capability, half):
    fake_gpu("some GPU", capability=capability)
    assert matmul.dtypes_to_measure(torch.device("cuda", 0)) == [
        torch.float32, half]


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_dtypes_elsewhere(device):
    assert matmul.dtypes_to_measure(device) == [torch.float32]


def test_device_names(fake_gpu, monkeypatch):
    fake_gpu("NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(matmul, "cpu_model", lambda: "Some CPU")
    assert matmul.device_name("cuda:0") == "NVIDIA H100 80GB HBM3"
    threads = torch.get_num_threads()
    assert matmul.device_name("cpu") == f"Some CPU, {threads} threads"
    assert matmul.device_name("mps").startswith("Apple GPU (MPS")


def test_cpu_model_is_a_name():
    name = matmul.cpu_model()
    assert isinstance(name, str) and name and "\n" not in name


@pytest.mark.parametrize("flops, text", [
    (52.3456e12, "52.3 TFLOP/s"),
    (783.8e12, "784 TFLOP/s"),
    (1.5e12, "1.50 TFLOP/s"),
    (588.4e9, "588 GFLOP/s"),
    (2.2e9, "2.20 GFLOP/s"),
    (1e9, "1.00 GFLOP/s"),
    (0.5e9, "500 MFLOP/s"),
    (2.62e6, "2.62 MFLOP/s"),
    (4000.0, "0.00 MFLOP/s"),
    (99.96e12, "100 TFLOP/s"), (999.7e9, "1.00 TFLOP/s"),  # rounding reaches a digit, a unit
])
def test_format_rate(flops, text):
    assert matmul.format_rate(flops) == text


def test_format_rate_rejects_negative():
    with pytest.raises(ValueError, match="negative"):
        matmul.format_rate(-1.0)
    with pytest.raises(ValueError, match=r"format_rate\(flops\): flops must be a finite number"):
        matmul.format_rate(float("nan"))


@pytest.mark.parametrize("dtype, kind", [
    (torch.float32, "fp32"), (torch.bfloat16, "bf16"), (torch.float16, "fp16"),
])
def test_peak_kind(dtype, kind):
    assert matmul.peak_kind(dtype) == kind
    # The kind share_of_peak needs for the exercise's line.
    assert peaks.share_of_peak(1e12, "NVIDIA H100 80GB HBM3", kind).endswith("TFLOP/s)")


def test_peak_kind_of_another_dtype():
    with pytest.raises(ValueError, match=r"peak_kind\(dtype\): dtype must be one of "
                       r"torch.float32, torch.bfloat16, torch.float16, got torch.float64"):
        matmul.peak_kind(torch.float64)


def test_the_exercise_line_on_the_gpus_it_measures(fake_gpu, monkeypatch):
    # What the exercise prints for the best speed of each dtype it measures.
    monkeypatch.setattr(peaks, "_gpu_name", lambda device: "Tesla T4")
    fake_gpu("Tesla T4", capability=(7, 5), memory_gib=15)
    lines = [peaks.share_of_peak(rate, "cuda:0", matmul.peak_kind(dtype))
             for dtype, rate in zip(matmul.dtypes_to_measure("cuda:0"), (4e12, 26e12))]
    assert lines == ["49% of the NVIDIA T4 FP32 peak (8.1 TFLOP/s)",
                     "40% of the NVIDIA T4 FP16 tensor-core peak (65 TFLOP/s)"]


def test_tf32_state_follows_the_setting():
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("high")
        assert "'high'" in matmul.tf32_state()
        torch.set_float32_matmul_precision("highest")
        assert "'highest'" in matmul.tf32_state()
    finally:
        torch.set_float32_matmul_precision(before)


def test_time_matmuls_on_the_cpu():
    rates = matmul.time_matmuls("cpu", torch.float32, [16, 24], repeat=3)
    assert list(rates) == [16, 24]
    for n, (seconds, flops) in rates.items():
        assert seconds > 0
        assert flops == pytest.approx(2 * n**3 / seconds)


def test_plot_rates_labels_each_curve(fake_gpu):
    fake_gpu("NVIDIA H100 80GB HBM3")
    results = {
        (torch.device("cuda", 0), torch.bfloat16): {16: (1e-5, 8e8),
                                                    32: (1e-5, 6e9)},
        (torch.device("cpu"), torch.float32): {16: (4e-6, 2e9),
                                               32: (5e-6, 1.3e10)},
    }
    fig = matmul.plot_rates(results).fig
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    threads = torch.get_num_threads()
    assert labels == ["H100 80GB HBM3, bfloat16",
                      f"CPU ({threads} threads), float32"]
    assert list(ax.get_lines()[1].get_ydata()) == pytest.approx([2e-3, 1.3e-2])
    assert ax.xaxis.get_ticklabels()[0].get_fontsize() >= 12


@pytest.mark.parametrize("name", [n for n in matmul.__all__
                                  if callable(getattr(matmul, n))])
def test_docstring_first_line_names_the_chapter(name):
    first = getattr(matmul, name).__doc__.strip().splitlines()[0]
    assert first.endswith('(chapter "Exercises, with measured solutions").')
