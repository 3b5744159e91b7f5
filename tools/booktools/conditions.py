"""The GPU's clocks and power while a recording runs (run.json's ``conditions``): a GPU
at its power limit lowers its SM clock, and every rate with it.

``Sampler`` runs nvidia-smi's own sampling (``-lms``) into a file: each GPU's SM clock and
its maximum, power draw and limit, and clock-event reasons; ``summarise`` gives their
min/median/max per GPU. Without nvidia-smi nothing is sampled (None).
"""
from __future__ import annotations

import statistics
import subprocess
import tempfile

__all__ = ["Sampler", "QUERY", "parse", "summarise"]

FIELDS = ("index", "sm_clock_mhz", "max_sm_clock_mhz", "power_w", "power_limit_w", "reasons")
QUERY = "index,clocks.sm,clocks.max.sm,power.draw,power.limit,clocks_throttle_reasons.active"
# Drivers that dropped the old name call it clocks_event_reasons.
QUERY_NEW = QUERY.replace("clocks_throttle_reasons", "clocks_event_reasons")
IDLE_REASONS = {"0x0000000000000000", "[N/A]", "[Not Supported]", ""}


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:  # "[N/A]", "[Not Supported]"
        return None


def parse(output: str) -> list[dict]:
    """One dict per GPU line of ``nvidia-smi --query-gpu=QUERY --format=csv,noheader,nounits``."""
    lines = [[part.strip() for part in line.split(",")] for line in output.strip().splitlines()]
    return [{**dict(zip(FIELDS, map(_number, parts))), "reasons": parts[-1]}
            for parts in lines if len(parts) == len(FIELDS)]


def summarise(rows: list[dict], interval: float) -> dict | None:
    """Per GPU, min/median/max of each field and the non-idle reasons seen; None if empty."""
    gpus = []
    for index in sorted({row["index"] for row in rows}):
        mine = [row for row in rows if row["index"] == index]
        gpu = {"index": int(index)}
        for key in FIELDS[1:-1]:
            values = [row[key] for row in mine if row[key] is not None]
            if values:
                gpu[key] = {"min": min(values), "median": statistics.median(values),
                            "max": max(values)}
        gpu["clock_event_reasons"] = sorted({row["reasons"] for row in mine} - IDLE_REASONS)
        gpus.append(gpu)
    if not gpus:
        return None
    return {"source": f"nvidia-smi --query-gpu={QUERY}", "interval_s": interval,
            "samples": sum(row["index"] == gpus[0]["index"] for row in rows),
            "gpus": gpus}


class Sampler:
    """nvidia-smi sampling every ``interval`` seconds between start() and stop()."""

    def __init__(self, interval: float = 1.0):
        self.interval = interval
        self._out = tempfile.TemporaryFile()
        self._smi = None

    def start(self) -> "Sampler":
        for query in (QUERY, QUERY_NEW):  # the first that this driver knows
            command = ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"]
            try:
                known = subprocess.run(command, capture_output=True, timeout=10).returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                return self  # no nvidia-smi here: nothing to sample
            if known:
                every = f"--loop-ms={max(1, round(self.interval * 1000))}"
                self._smi = subprocess.Popen([*command, every], stdout=self._out,
                                             stderr=subprocess.DEVNULL)
                return self
        return self

    def stop(self) -> dict | None:
        """Stop sampling and return the summary."""
        if self._smi is not None:
            self._smi.terminate()
            self._smi.wait()
        self._out.seek(0)
        rows = parse(self._out.read().decode("utf-8", "replace"))
        self._out.close()
        return summarise(rows, self.interval)
