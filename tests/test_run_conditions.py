"""run.json's conditions: the GPU's clocks and power while a recording runs.

A fake nvidia-smi on PATH answers as the real one does to
``--query-gpu=...,--format=csv,noheader,nounits``: one line per GPU, and with
``--loop-ms=N`` a new reading every N ms until stopped (booktools.conditions).
No GPU is needed: the real nvidia-smi is not run here.
"""
from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import nbformat

from booktools import conditions, runs

# Each call prints the next line (two GPUs: the second is the same GPU idle).
READINGS = ["0, 1980, 1980, 690.50, 700.00, 0x0000000000000000",
            "0, 1755, 1980, 700.10, 700.00, 0x0000000000000004",
            "0, 1830, 1980, 695.00, 700.00, 0x0000000000000004"]
IDLE = "1, 345, 1980, 70.00, 700.00, 0x0000000000000001"


def _fake_smi(tmp_path, old_name_ok=True, lines=READINGS) -> Path:
    """bin/nvidia-smi: one reading, or with --loop-ms each reading in turn, then the
    first again (until killed); calls logged in calls.log."""
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "nvidia-smi"
    log = tmp_path / "calls.log"
    readings = " ".join(f'"{line}"' for line in lines)
    reject = "" if old_name_ok else \
        'case "$*" in *clocks_throttle_reasons*) echo "Field is not valid" >&2; exit 2;; esac\n'
    script.write_text(f"""#!/usr/bin/env bash
{reject}echo "$*" >> "{log}"
lines=({readings})
case "$*" in *--loop-ms=*) ;; *) lines=("${{lines[0]}}");; esac
for line in "${{lines[@]}}" "${{lines[0]}}"; do
  echo "$line"
  echo "{IDLE}"
  sleep 0.01
done
case "$*" in *--loop-ms=*) exec sleep 60;; esac
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return folder


def _on_path(monkeypatch, folder: Path | None) -> None:
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}/usr/bin:/bin" if folder else "/usr/bin:/bin")


def test_parse_reads_numbers_and_leaves_out_what_is_not_supported():
    assert conditions.parse("0, 1980, 1980, [N/A], 700.00, 0x0000000000000000\nbad line\n") == [
        {"index": 0.0, "sm_clock_mhz": 1980.0, "max_sm_clock_mhz": 1980.0, "power_w": None,
         "power_limit_w": 700.0, "reasons": "0x0000000000000000"}]


def test_the_sampler_summarises_each_gpus_clock_and_power(tmp_path, monkeypatch):
    _on_path(monkeypatch, _fake_smi(tmp_path))
    sampler = conditions.Sampler(interval=0.01).start()
    log = tmp_path / "calls.log"
    deadline = time.time() + 10
    while "--loop-ms=10" not in (log.read_text() if log.exists() else "") \
            and time.time() < deadline:
        time.sleep(0.01)
    time.sleep(0.5)  # the fake's four readings
    summary = sampler.stop()
    assert summary["samples"] == 4 and summary["interval_s"] == 0.01
    first, idle = summary["gpus"]
    assert first["sm_clock_mhz"]["min"] == 1755 and first["sm_clock_mhz"]["max"] == 1980
    assert 1755 <= first["sm_clock_mhz"]["median"] <= 1980
    assert first["power_w"]["max"] == 700.1 and first["power_limit_w"]["median"] == 700
    assert first["clock_event_reasons"] == ["0x0000000000000004"]  # idle (0) left out
    assert idle["index"] == 1 and idle["sm_clock_mhz"] == {"min": 345, "median": 345, "max": 345}
    assert "index,clocks.sm,clocks.max.sm,power.draw,power.limit" in log.read_text()


def test_a_driver_with_the_new_field_name_is_asked_by_it(tmp_path, monkeypatch):
    _on_path(monkeypatch, _fake_smi(tmp_path, old_name_ok=False))
    sampler = conditions.Sampler(interval=0.01).start()
    time.sleep(0.5)
    summary = sampler.stop()
    assert summary["gpus"][0]["sm_clock_mhz"]["max"] == 1980
    assert "clocks_event_reasons.active --format=csv,noheader,nounits --loop-ms=10" in \
        (tmp_path / "calls.log").read_text()


def test_without_nvidia_smi_nothing_is_sampled(tmp_path, monkeypatch):
    _on_path(monkeypatch, None)
    assert conditions.Sampler(interval=0.01).start().stop() is None
    assert conditions.summarise([], 1.0) is None


def test_record_writes_the_conditions_into_run_json(tmp_path, monkeypatch):
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    (chapters / "toy.md").write_text("")
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("print('ran')"))
    nbformat.write(nb, chapters / "toy.ipynb")
    monkeypatch.setattr(runs, "_machine_facts", lambda: {
        "gpus": ["NVIDIA H100 80GB HBM3"], "gpu_count": 1, "torch": "2", "cuda": "13",
        "python": "3", "driver": "1", "compute_capability": ["9.0"]})
    _on_path(monkeypatch, _fake_smi(tmp_path))
    assert runs.record("toy-gpu", None, chapters=chapters, root=tmp_path / "runs") == 0
    meta = json.loads((tmp_path / "runs" / "toy-gpu" / "run.json").read_text())
    assert meta["compute_capability"] == ["9.0"]
    gpu = meta["conditions"]["gpus"][0]
    assert gpu["sm_clock_mhz"]["max"] == 1980 and gpu["power_limit_w"]["max"] == 700
    assert runs.check_run(runs.read_run(tmp_path / "runs" / "toy-gpu"), chapters) == []
