"""Timing that waits for the device before every clock read.

Accelerators run asynchronously: a PyTorch call on a GPU returns as soon as
the work is queued. A clock read right after it measures the launch, not the
work. Every clock read here is preceded by ``synchronize`` on the device of
the work, unless ``sync=False`` asks for that naive measurement on purpose.

``benchmark`` follows ``torch.utils.benchmark``'s recipe (warm-up, blocks
long enough that the clock's overhead is negligible, median and spread) and
runs with the thread count PyTorch runs with. It is written out rather than
built on ``torch.utils.benchmark.Timer`` (which, given ``timer=`` and
``num_threads=``, could wait for any device and time naively) because that
Timer's ``timeit(number)`` first makes ``max(number // 100, 2)`` warm-up
calls of its own, every block: 3 calls per block where one call fills it.
Measured on a 2-core CPU (torch 2.13): 7 blocks of one ``time.sleep(0.02)``
took 0.43 s through ``Timer.timeit(1)``, 0.18 s through ``benchmark``
(warm-up and calibration included). Its ``blocked_autorange`` has no block
count to give (``repeat``) and sizes blocks by relative overhead, not by a
minimum time per block.

On CUDA, ``benchmark`` also samples the timed GPU's SM clock and power draw
after each measured block, outside the timed region (``_Conditions``): a
datasheet peak assumes the boost clock, which a GPU at its power limit does
not hold, so a share of peak means little without them.
"""

from __future__ import annotations

import itertools
import math
import shutil
import statistics
import subprocess
import time
import warnings
from dataclasses import dataclass

import torch

from . import devices
from ._checks import check_bool, check_int, check_real, with_unit

__all__ = [
    "synchronize",
    "benchmark",
    "Measurement",
    "format_time",
    "compare",
    "speedup",
    "format_speedup",
    "format_conditions",
    "count_waits",
]

# The clock. One name, so that tests can check what happens around each read.
_clock = time.perf_counter


# --- Waiting for a device. ---------------------------------------------------

def _as_device(device, where: str) -> torch.device:
    if isinstance(device, torch.device):
        return device
    if isinstance(device, str):
        try:
            return torch.device(device)
        except RuntimeError as err:
            raise ValueError(
                f"{where}: device must name a torch device such as 'cpu', "
                f"'cuda:0' or 'mps', got {device!r}") from err
    raise TypeError(
        f"{where}: device must be None, a str or a torch.device, "
        f"got {device!r} of type {type(device).__name__}")


def _synchronize_one(device: torch.device) -> None:
    kind = device.type
    if kind == "cuda":
        torch.cuda.synchronize(device)
    elif kind == "mps":
        torch.mps.synchronize()
    elif kind == "xpu":
        torch.xpu.synchronize(device)
    elif kind in ("cpu", "meta"):
        return  # CPU kernels have finished when the call returns.
    else:
        generic = getattr(torch, "accelerator", None)
        if generic is not None and hasattr(generic, "synchronize"):
            generic.synchronize(device)


def _current_device() -> torch.device | None:
    """The accelerator device that PyTorch's calls go to by default; None without one."""
    kind = devices.accelerator()
    if kind is None:
        return None
    if kind == "mps":
        return torch.device("mps")
    return torch.device(kind, getattr(torch, kind).current_device())


def _initialized() -> bool:
    """Whether this process has initialised the current accelerator's backend (True where the backend cannot tell)."""
    kind = devices.accelerator()
    if kind is None:
        return False
    initialized = getattr(getattr(torch, kind), "is_initialized", None)
    return initialized is None or bool(initialized())


def _holds_memory(backend, i: int) -> bool:
    """Whether PyTorch's caching allocator holds memory on device ``i`` (True where the backend cannot tell)."""
    reserved = getattr(backend, "memory_reserved", None)
    if reserved is None:
        return True
    try:
        return reserved(i) > 0
    except RuntimeError:
        # "Invalid device argument : did you call init?": a device this
        # process cannot use the way the count suggests holds none of its
        # memory, so it has nothing queued.
        return False


def _devices_in_use() -> list[torch.device]:
    """The current accelerator's devices that may have queued work: the current one, and every other where this process holds memory.

    Synchronising a GPU this process has not used would create a CUDA
    context there (hundreds of MiB), and such a GPU has nothing queued. So
    none counts before this process has initialised the backend
    (``is_initialized()``), and a device other than the current one counts
    only where PyTorch's caching allocator holds memory on it
    (``memory_reserved``, which creates nothing; a device it raises
    RuntimeError for does not count); where the backend lacks either call,
    the devices count. ``memory_reserved`` builds the allocator's whole
    statistics dict, so ``benchmark`` asks once, before it times anything.
    """
    kind = devices.accelerator()
    if kind is None or kind == "mps":
        return [] if kind is None else [torch.device("mps")]
    if not _initialized():
        return []
    backend = getattr(torch, kind)
    current = _current_device()
    found = [current]
    for i in range(devices.num_gpus()):
        device = torch.device(current.type, i)
        if device != current and _holds_memory(backend, i):
            found.append(device)
    return found


def _same_device(a: torch.device, b: torch.device) -> bool:
    """Whether two devices are one: 'mps' and 'mps:0' are (they compare unequal)."""
    if a.type == "mps" and b.type == "mps":
        return (a.index or 0) == (b.index or 0)
    return a == b


def _distinct(found: list[torch.device]) -> list[torch.device]:
    """``found`` without repeats, 'mps' and 'mps:0' counting as one."""
    kept: list[torch.device] = []
    for device in found:
        if not any(_same_device(device, k) for k in kept):
            kept.append(device)
    return kept


def synchronize(device=None) -> None:
    """Wait until all work queued on ``device`` (None: the current accelerator) has finished; the CPU never lags (chapter "Tensors and GPUs")."""
    if device is None:
        device = _current_device()
        if device is not None:
            _synchronize_one(device)
        return
    _synchronize_one(_as_device(device, "synchronize(device)"))


def _tensor_devices(args, kwargs) -> list[torch.device]:
    """Distinct devices of the tensors among the arguments (one level deep)."""
    found: list[torch.device] = []
    values = list(args) + list(kwargs.values())
    for value in values:
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if isinstance(item, torch.Tensor) and item.device not in found:
                found.append(item.device)
    return found


# --- Formatting. --------------------------------------------------------------

_TIME_UNITS = (("s", 1.0), ("ms", 1e-3), ("\u00b5s", 1e-6), ("ns", 1e-9))


def format_time(seconds: float) -> str:
    """A duration with three significant digits and a unit, e.g. '1.23 ms', '4.56 µs', '850 ns', '1.20 s' (chapter "Tensors and GPUs")."""
    return with_unit(check_real(seconds, "format_time", "seconds", 0), _TIME_UNITS)


def format_speedup(x: float) -> str:
    """A speed-up with three significant digits and an 'x', trailing zeros dropped: '124x', '13.9x', '1.45x', '0.14x', '0.0081x' (chapter "Tensors and GPUs").

    This is ``f"{x:.3g}x"`` without its exponents: 1234 reads '1230x', not
    '1.23e+03x', and 0.0000812 reads '0.0000812x'.
    """
    x = check_real(x, "format_speedup", "x", 0, hint="a speed-up cannot be negative")
    if x == 0:
        return "0x"
    rounded = float(f"{x:.2e}")  # three significant digits, before the exponent is read
    exponent = math.floor(math.log10(rounded))
    if -4 <= exponent < 3:
        return f"{rounded:.3g}x"  # the range where .3g writes no exponent
    if exponent >= 3:
        return f"{rounded:.0f}x"
    return f"{rounded:.{2 - exponent}f}".rstrip("0") + "x"


# --- Results. ------------------------------------------------------------------

# A measurement is noisy where its interquartile range exceeds this share of
# its median: the blocks disagree by more than 10%, so ratios between such
# measurements are not to be trusted to the digits printed.
NOISE_THRESHOLD = 0.1


@dataclass(frozen=True)
class Measurement:
    """Seconds per call, one value per block, with median, IQR and mean, and on CUDA the SM clock and power sampled after each block (chapter "Tensors and GPUs").

    ``sm_clock_mhz`` and ``power_w`` hold the samples (empty off CUDA, or
    where neither NVML nor nvidia-smi answered); ``format_conditions``
    prints them. ``str`` shows neither.
    """

    times: tuple[float, ...]
    number: int
    device: torch.device
    label: str | None = None
    synchronized: bool = True
    sm_clock_mhz: tuple[float, ...] = ()
    power_w: tuple[float, ...] = ()

    @property
    def median(self) -> float:
        """Median over blocks of the seconds per call."""
        return statistics.median(self.times)

    @property
    def iqr(self) -> float:
        """Interquartile range over blocks (0 with a single block)."""
        if len(self.times) < 2:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.times, n=4, method="inclusive")
        return q3 - q1

    @property
    def mean(self) -> float:
        """Mean over blocks of the seconds per call."""
        return statistics.fmean(self.times)

    @property
    def spread(self) -> float:
        """IQR over median: 0.1 means the middle half of the blocks spans 10% of the median (inf for a zero median with a spread)."""
        if self.median == 0:
            return 0.0 if self.iqr == 0 else math.inf
        return self.iqr / self.median

    @property
    def noisy(self) -> bool:
        """Whether the spread (IQR over median) exceeds ``NOISE_THRESHOLD`` (0.1)."""
        return self.spread > NOISE_THRESHOLD

    def __str__(self) -> str:
        prefix = f"{self.label}: " if self.label else ""
        blocks = len(self.times)
        where = str(self.device)
        if not self.synchronized:
            where += ", not synchronized"
        return (f"{prefix}{format_time(self.median)} \u00b1 "
                f"{format_time(self.iqr / 2)} (median \u00b1 IQR/2 of "
                f"{blocks} block{'s' if blocks != 1 else ''} of "
                f"{self.number} call{'s' if self.number != 1 else ''}, "
                f"{where})")

    def __repr__(self) -> str:
        return f"<Measurement {self}>"

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


def _check_measurement(m, function: str, name: str) -> Measurement:
    if not isinstance(m, Measurement):
        which = "each" if name.startswith("*") else name  # *measurements: each
        raise TypeError(
            f"{function}({name}): {which} must be a Measurement (from benchmark), "
            f"got {m!r} of type {type(m).__name__}")
    return m


def speedup(reference: Measurement, m: Measurement) -> float:
    """How many times as fast ``m`` ran as ``reference``: the reference's median over m's (above 1: m is faster) (chapter "Tensors and GPUs")."""
    _check_measurement(reference, "speedup", "reference")
    _check_measurement(m, "speedup", "m")
    if m.median == 0:
        raise ValueError(
            "speedup(m): m's median is 0 s, so no speed-up can be computed "
            "(time more calls per block)")
    return reference.median / m.median


def compare(*measurements: Measurement) -> None:
    """Print each measurement's median ± IQR/2 and its speed-up over the first, the reference, and warn when one is noisy (chapter "Tensors and GPUs").

    One line per measurement: ``label: median ± IQR/2 (reference)`` for the
    first, ``label: median ± IQR/2 (6.77x as fast)`` for each other, where
    6.77x is ``speedup(first, m)``, the first's median over this one's (above
    1: faster than the reference; 0.5x: twice as slow). A measurement
    without a label is called by its place, "measurement 2". If any
    measurement is noisy (its IQR more than ``NOISE_THRESHOLD`` of its
    median), one more line, starting ``noisy:``, names the noisiest.
    """
    if not measurements:
        raise TypeError("compare(*measurements): give at least one Measurement")
    for m in measurements:
        _check_measurement(m, "compare", "*measurements")
    names = [m.label or f"measurement {k}" for k, m in enumerate(measurements, 1)]
    reference = measurements[0]
    for k, (name, m) in enumerate(zip(names, measurements)):
        if k == 0:
            how = "reference"
        elif m.median == 0:
            how = "a median of 0 s: no speed-up"
        else:
            how = f"{format_speedup(speedup(reference, m))} as fast"
        print(f"{name}: {format_time(m.median)} \u00b1 {format_time(m.iqr / 2)} "
              f"({how})")
    noisy = [(m.spread, name) for name, m in zip(names, measurements) if m.noisy]
    if noisy:
        spread, name = max(noisy, key=lambda pair: pair[0])
        print(f"noisy: the spread of \"{name}\" is {100 * spread:.0f}% of its median; "
              "rerun on an idle machine before trusting the ratios")


def _span(values: list[float], unit: str) -> str:
    low, high = round(min(values)), round(max(values))
    return f"{low} {unit}" if low == high else f"{low}-{high} {unit}"


def format_conditions(*measurements: Measurement) -> str | None:
    """The SM clock and power draw sampled while measuring, as ranges over the given measurements, e.g. 'SM clock 1755-1980 MHz, 610-690 W'; None where none were sampled (chapter "Neural networks and GPUs").

    A datasheet peak assumes the boost clock; a GPU at its power or thermal
    limit runs slower, so a share of peak is quoted with these.
    """
    if not measurements:
        raise TypeError("format_conditions(*measurements): give at least one Measurement")
    for m in measurements:
        _check_measurement(m, "format_conditions", "*measurements")
    clocks = [v for m in measurements for v in m.sm_clock_mhz]
    power = [v for m in measurements for v in m.power_w]
    parts = ([f"SM clock {_span(clocks, 'MHz')}"] if clocks else []) + (
        [_span(power, "W")] if power else [])
    return ", ".join(parts) or None


# --- Clocks and power. ---------------------------------------------------------

_SMI_FIELDS = ("clock", "power")  # in the order of the query below
_SMI_QUERY = "--query-gpu=clocks.sm,power.draw"
_SMI_TIMEOUT = 5  # seconds; nvidia-smi answers in tens of milliseconds


def _smi_id(device: torch.device) -> str:
    """How ``nvidia-smi -i`` names a CUDA device: its PCI address (which neither CUDA_VISIBLE_DEVICES nor CUDA's device order renumbers), else its NVML index."""
    try:
        props = torch.cuda.get_device_properties(device)
        domain, bus, dev = props.pci_domain_id, props.pci_bus_id, props.pci_device_id
        return f"{domain:08X}:{bus:02X}:{dev:02X}.0"
    except Exception:  # a torch without the PCI fields: NVML's index
        nvml_index = getattr(torch.cuda, "_get_nvml_device_index", None)
        if nvml_index is not None:
            return str(nvml_index(device))
        return str(device.index or 0)


def _smi_query(device: torch.device) -> list[str]:
    """nvidia-smi's SM clock (MHz) and power draw (W) of ``device``, as the two strings it prints."""
    executable = shutil.which("nvidia-smi")
    if executable is None:
        raise FileNotFoundError("nvidia-smi is not on PATH")
    out = subprocess.run(
        [executable, _SMI_QUERY, "--format=csv,noheader,nounits", "-i", _smi_id(device)],
        capture_output=True, text=True, check=True, timeout=_SMI_TIMEOUT).stdout
    fields = [field.strip() for field in out.strip().splitlines()[0].split(",")]
    if len(fields) != len(_SMI_FIELDS):
        raise ValueError(f"nvidia-smi printed {out!r}")
    return fields


class _Conditions:
    """Samples one CUDA GPU's SM clock (MHz) and power draw (W); never raises.

    Each quantity is read through NVML as torch exposes it
    (``torch.cuda.clock_rate``, ``torch.cuda.power_draw`` in mW; they need
    the nvidia-ml-py package), else by ``nvidia-smi``, else not at all: a
    reader that fails once (not installed, not supported on this GPU, an
    answer such as "[N/A]") gives way to the next for the rest of the
    measurement. On ROCm, where torch reads AMD's counters instead, nothing
    is sampled.
    """

    def __init__(self, device: torch.device):
        self.device = device
        self.clock: list[float] = []
        self.power: list[float] = []
        nvml = torch.version.hip is None
        self._readers = {
            "clock": ([self._nvml_clock] if nvml else []) + [self._smi],
            "power": ([self._nvml_power] if nvml else []) + [self._smi],
        }

    def _nvml_clock(self, quantity: str, answers: dict) -> float:
        return float(torch.cuda.clock_rate(self.device))

    def _nvml_power(self, quantity: str, answers: dict) -> float:
        return torch.cuda.power_draw(self.device) / 1000  # NVML gives mW

    def _smi(self, quantity: str, answers: dict) -> float:
        # One nvidia-smi call a sample answers both quantities.
        if "smi" not in answers:
            try:
                answers["smi"] = _smi_query(self.device)
            except Exception as err:
                answers["smi"] = err
        if isinstance(answers["smi"], Exception):
            raise answers["smi"]
        return float(answers["smi"][_SMI_FIELDS.index(quantity)])

    def sample(self) -> None:
        """Read both quantities once, where this process uses CUDA (else reading could create a context)."""
        try:
            if not torch.cuda.is_initialized():
                return
        except Exception:
            return
        answers: dict = {}
        for quantity, values in (("clock", self.clock), ("power", self.power)):
            readers = self._readers[quantity]
            while readers:
                try:
                    value = readers[0](quantity, answers)
                    if not (math.isfinite(value) and value >= 0):
                        raise ValueError(f"{quantity} {value!r}")
                except Exception:
                    readers.pop(0)
                    continue
                values.append(value)
                break


# --- Measuring. -------------------------------------------------------------

_MAX_NUMBER = 10_000_000


def benchmark(fn, *args, device=None, warmup=1, repeat=7, min_block_time=0.02,
              sync=True, label=None, **kwargs) -> Measurement:
    """Time ``fn(*args, **kwargs)``: warm up, then ``repeat`` blocks of calls, waiting for ``device`` before each clock read (chapter "Tensors and GPUs").

    ``device=None`` waits for the devices of the tensor arguments and for
    every GPU of the current accelerator that may have work queued (once this
    process uses the accelerator: the current GPU, and each other where it
    holds memory), so work that ``fn`` queues on a second GPU, say on a
    closure's tensors, is waited for too; the result names the first tensor
    argument's device, else the current one. Which GPUs those are is decided
    once, after the warm-up, so that no measured block asks.
    Each block makes ``number`` calls, chosen
    (with waiting, whatever ``sync`` says) so that a block lasts at least
    ``min_block_time`` seconds. ``sync=False`` reads the clock without waiting:
    the naive measurement, for teaching; it waits once after the last clock
    read so that its queued work does not spill into the next measurement.
    On CUDA the timed GPU's SM clock and power draw are sampled after each
    measured block, outside the timed region (after the last block only,
    with ``sync=False``), into ``sm_clock_mhz`` and ``power_w``; a failed
    reading leaves them short or empty and never fails the measurement.
    """
    if not callable(fn):
        raise TypeError(
            f"benchmark(fn): fn must be callable, got {fn!r} of type "
            f"{type(fn).__name__}")
    warmup = check_int(warmup, "benchmark", "warmup", 0)
    repeat = check_int(repeat, "benchmark", "repeat", 1)
    min_block_time = check_real(min_block_time, "benchmark", "min_block_time",
                                0, hint="seconds")
    sync = check_bool(sync, "benchmark", "sync")
    if label is not None and not isinstance(label, str):
        raise TypeError(
            f"benchmark(label): label must be a str or None, got {label!r}")

    if device is not None:
        named = _as_device(device, "benchmark(device)")
        shown = named

        def wait_for() -> list[torch.device]:
            return [named]
    else:
        given = _distinct(_tensor_devices(args, kwargs))
        shown = given[0] if given else (_current_device() or devices.cpu())
        decided: list[list[torch.device]] = []

        def wait_for() -> list[torch.device]:
            # Decided once, at the first wait once this process has
            # initialised the accelerator (after the warm-up, unless fn has
            # not touched it by then), so that nothing is asked inside the
            # measured blocks. Until then only is_initialized() is asked
            # again, which costs nothing measurable.
            if decided:
                return decided[0]
            if devices.accelerator() is not None and not _initialized():
                return given
            decided.append(_distinct(given + _devices_in_use()))
            return decided[0]

    def wait() -> None:
        for dev in wait_for():
            _synchronize_one(dev)

    def block(number: int, waiting: bool) -> float:
        # The loop is as bare as timeit's: no kwargs dict unless there is one.
        calls = itertools.repeat(None, number)
        if waiting:
            wait()
        start = _clock()
        if kwargs:
            for _ in calls:
                fn(*args, **kwargs)
        elif args:
            for _ in calls:
                fn(*args)
        else:
            for _ in calls:
                fn()
        if waiting:
            wait()
        return _clock() - start

    for _ in range(warmup):
        fn(*args, **kwargs)
    wait()

    number = 1
    while True:
        elapsed = block(number, True)
        if elapsed >= min_block_time or number >= _MAX_NUMBER:
            break
        if elapsed <= 0:
            number *= 10
        else:
            wanted = math.ceil(number * 1.1 * min_block_time / elapsed)
            number = max(number + 1, min(number * 10, wanted))
        number = min(number, _MAX_NUMBER)

    # Clocks and power are read after a block's last clock read, outside
    # the timed region. Naive blocks leave work queued, and a reading (up to
    # tens of ms) between them would let the GPU catch up: those are read
    # once, after the last block.
    conditions = _Conditions(shown) if shown.type == "cuda" else None
    times = []
    for _ in range(repeat):
        times.append(block(number, sync) / number)
        if conditions is not None and sync:
            conditions.sample()
    if not sync:
        if conditions is not None:
            conditions.sample()
        wait()
    return Measurement(
        times=tuple(times), number=number, device=shown, label=label, synchronized=sync,
        sm_clock_mhz=tuple(conditions.clock) if conditions else (),
        power_w=tuple(conditions.power) if conditions else ())


# --- Counting waits. ------------------------------------------------------------

# PyTorch's one-time notice when the debug mode is first set; it mentions
# "synchronizing operations" but is no wait.
_PROTOTYPE_NOTICE = "Synchronization debug mode is a prototype feature"


def count_waits(fn) -> int:
    """How many times ``fn()`` makes the CPU wait for the CUDA GPU, as ``torch.cuda.set_sync_debug_mode("warn")`` reports them (chapter "Tensors and GPUs").

    Each synchronising CUDA call warns while the mode is on; the warnings
    whose message says "synchroniz" are counted and none is shown, nor is
    PyTorch's one-time notice that the mode is a prototype. The mode that
    was set before is restored, also when ``fn`` raises. The mode does not
    see every synchronising operation (PyTorch says so), so the count is a
    lower bound. CUDA only: RuntimeError without a CUDA GPU.
    """
    if not callable(fn):
        raise TypeError(
            f"count_waits(fn): fn must be callable, got {fn!r} of type "
            f"{type(fn).__name__}")
    if devices.accelerator() != "cuda":
        raise RuntimeError(
            "count_waits(fn) needs a CUDA GPU: torch.cuda.set_sync_debug_mode, "
            "which reports the waits, exists for CUDA only, and PyTorch sees "
            "none here")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        before = torch.cuda.get_sync_debug_mode()
        torch.cuda.set_sync_debug_mode("warn")
        try:
            fn()
        finally:
            torch.cuda.set_sync_debug_mode(before)
    return sum("synchroniz" in str(w.message)
               and not str(w.message).startswith(_PROTOTYPE_NOTICE)
               for w in caught)
