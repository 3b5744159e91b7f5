"""The GPU's clocks and power while a recording runs (run.json's ``conditions``): a GPU
at its power limit lowers its SM clock, and every rate with it.

``Sampler`` asks nvidia-smi each second, in a thread, for each GPU's SM clock and its
maximum, power draw and limit, and clock-event reasons; ``summarise`` gives their
min/median/max per GPU. Without nvidia-smi nothing is sampled (None).
"""
from __future__ import annotations

import statistics
import subprocess
import threading

__all__ = ["Sampler", "QUERY", "parse", "summarise"]

FIELDS = ("sm_clock_mhz", "max_sm_clock_mhz", "power_w", "power_limit_w", "reasons")
QUERY = "clocks.sm,clocks.max.sm,power.draw,power.limit,clocks_throttle_reasons.active"
# Drivers that dropped the old name call it clocks_event_reasons.
QUERY_NEW = QUERY.replace("clocks_throttle_reasons", "clocks_event_reasons")


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:  # "[N/A]", "[Not Supported]"
        return None


def parse(output: str) -> list[dict]:
    """One dict per GPU line of ``nvidia-smi --query-gpu=QUERY --format=csv,noheader,nounits``."""
    found = []
    for line in output.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != len(FIELDS):
            continue
        sample = {key: _number(value) for key, value in zip(FIELDS[:-1], parts)}
        sample["reasons"] = parts[-1]
        found.append(sample)
    return found


def _query() -> list[dict]:
    for query in (QUERY, QUERY_NEW):
        try:
            proc = subprocess.run(["nvidia-smi", f"--query-gpu={query}",
                                   "--format=csv,noheader,nounits"],
                                  capture_output=True, text=True, encoding="utf-8", timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return []
        if proc.returncode == 0:
            return parse(proc.stdout)
    return []


def _spread(values: list[float]) -> dict | None:
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def summarise(samples: list[list[dict]], interval: float) -> dict | None:
    """Per GPU, min/median/max of each field and the non-idle reasons seen; None if empty."""
    samples = [s for s in samples if s]
    if not samples:
        return None
    gpus = []
    for index in range(max(len(s) for s in samples)):
        rows = [s[index] for s in samples if index < len(s)]
        gpu = {"index": index}
        for key in FIELDS[:-1]:
            spread = _spread([row[key] for row in rows])
            if spread:
                gpu[key] = spread
        reasons = sorted({row["reasons"] for row in rows} - {"0x0000000000000000", "[N/A]",
                                                             "[Not Supported]", ""})
        gpu["clock_event_reasons"] = reasons
        gpus.append(gpu)
    return {"source": f"nvidia-smi --query-gpu={QUERY}", "interval_s": interval,
            "samples": len(samples), "gpus": gpus}


class Sampler:
    """Samples nvidia-smi every ``interval`` seconds between start() and stop()."""

    def __init__(self, interval: float = 1.0, query=_query):
        self.interval = interval
        self.samples: list[list[dict]] = []
        self._query = query
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            found = self._query()
            if not found and not self.samples:
                return  # no nvidia-smi here: nothing to sample
            self.samples.append(found)
            if self._stop.wait(self.interval):
                return

    def start(self) -> "Sampler":
        self._thread.start()
        return self

    def stop(self) -> dict | None:
        """Stop sampling (one last sample is taken) and return the summary."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
            self.samples.append(self._query())
        return summarise(self.samples, self.interval)
