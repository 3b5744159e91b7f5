"""The copies chapter's prefetcher, on CUDA streams faked on the CPU.

The real streams need a CUDA GPU; the fakes log, in order, every copy (on
which stream), every ``wait_stream`` and ``record_stream``, and every use of a
batch, so the test sees what the GPU would be asked to do.
"""

import contextlib

import pytest
import torch

from chapter_code import cell_source  # tests/unit/chapter_code.py


class FakeStream:
    """A stream that logs the streams it is told to wait for."""

    def __init__(self, name, log):
        self.name, self.log = name, log

    def wait_stream(self, other):
        self.log.append(("wait", self.name, other.name))


def fake_streams(monkeypatch, log):
    """torch.cuda's current stream, side stream and stream context, faked."""
    main, side = FakeStream("main", log), FakeStream("side", log)
    current = [main]

    @contextlib.contextmanager
    def stream(s):
        current.append(s)
        try:
            yield
        finally:
            current.pop()

    monkeypatch.setattr(torch.cuda, "Stream", lambda device=None: side)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: current[-1])
    monkeypatch.setattr(torch.cuda, "stream", stream)
    return current


class OnGpu:
    """Batch i on the GPU: logs record_stream."""

    def __init__(self, i, log):
        self.i, self.log = i, log

    def record_stream(self, stream):
        self.log.append(("record", self.i, stream.name))


class Batch:
    """Batch i in pinned main memory: logs the stream its copy is queued on."""

    def __init__(self, i, log, current):
        self.i, self.log, self.current = i, log, current

    def to(self, device, non_blocking=False):
        self.log.append(("copy", self.i, self.current[-1].name, non_blocking))
        return OnGpu(self.i, self.log)


@pytest.fixture(autouse=True)
def keep_threads():
    """The chapter's import cell sets one thread on the CPU: restore the count after."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def prefetcher(capsys):
    """The chapter's prefetched(), defined by its cell (which skips its timing on the CPU)."""
    namespace = {"torch": torch}
    exec(cell_source("copies", marker="from d2lgpu import"), namespace)
    namespace["device"] = torch.device("cpu")
    exec(cell_source("copies", name="side-stream-prefetch"), namespace)
    assert capsys.readouterr().out.startswith("cpu: skipped")
    return namespace["prefetched"]


def test_prefetcher_copies_ahead_on_the_side_stream_and_waits_before_use(monkeypatch,
                                                                      capsys):
    log = []
    current = fake_streams(monkeypatch, log)
    prefetched = prefetcher(capsys)
    for batch in prefetched([Batch(i, log, current) for i in range(3)]):
        log.append(("use", batch.i, current[-1].name))
    assert log == [
        ("copy", 0, "side", True),
        ("wait", "main", "side"), ("record", 0, "main"),
        ("copy", 1, "side", True),  # queued before batch 0 is used: overlap
        ("use", 0, "main"),
        ("wait", "main", "side"), ("record", 1, "main"),
        ("copy", 2, "side", True),
        ("use", 1, "main"),
        ("wait", "main", "side"), ("record", 2, "main"),
        ("use", 2, "main"),
    ]


def test_prefetcher_of_one_batch(monkeypatch, capsys):
    log = []
    current = fake_streams(monkeypatch, log)
    prefetched = prefetcher(capsys)
    used = [batch.i for batch in prefetched([Batch(0, log, current)])]
    assert used == [0]
    assert [entry[0] for entry in log] == ["copy", "wait", "record"]
