"""d2lgpu: the helpers of the book on using GPUs from PyTorch.

Importing it has no side effects: no seeds, no matplotlib settings or
backend, no warning filters. Each helper's docstring names the chapter that
introduces it.
"""

from importlib import metadata as _metadata

from .cuda_arch import kernels_for
from .devices import (accelerator, cpu, device_report, format_bytes, gpu,
                      memory_counters, num_gpus, show_devices, try_all_gpus,
                      try_gpu)
from .peaks import Peak, format_rate, peak_for, share_of_peak
from .plotting import ProgressBoard
from .precision import (autocast_device, autocast_dtype, autocasts_to,
                        grad_scaler, mixed_precision, scaler_works)
from .timing import (Measurement, benchmark, compare, count_waits,
                     format_conditions, format_speedup, format_time, speedup,
                     synchronize)
from .training import (DataModule, LinearRegression, Module,
                       SyntheticRegressionData, Trainer)

try:  # the git tag the installed d2lgpu was built from (setuptools-scm)
    __version__ = _metadata.version("d2lgpu")
except _metadata.PackageNotFoundError:  # a checkout on sys.path, never installed
    __version__ = "0+unknown"

__all__ = [
    # Computing devices
    "cpu", "gpu", "num_gpus", "try_gpu", "try_all_gpus", "accelerator",
    "device_report", "show_devices", "format_bytes", "kernels_for",
    # Tensors and GPUs: timing and memory
    "synchronize", "benchmark", "Measurement", "format_time", "memory_counters",
    "compare", "speedup", "format_speedup", "format_conditions", "count_waits",
    # Neural networks and GPUs: training
    "Module", "DataModule", "SyntheticRegressionData", "LinearRegression",
    "Trainer", "ProgressBoard",
    # Neural networks and GPUs: mixed precision
    "autocast_device", "autocasts_to", "autocast_dtype", "scaler_works",
    "mixed_precision", "grad_scaler",
    # Neural networks and GPUs: datasheet peaks
    "Peak", "peak_for", "share_of_peak", "format_rate",
]
