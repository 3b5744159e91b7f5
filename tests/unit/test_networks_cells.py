"""The networks chapter's epoch-waits cell, run on a CUDA build whose GPU is faked.

The cell counts the waits of one epoch with ``count_waits`` on CUDA and says
so without it. Here ``torch.cuda.is_available`` answers True and
``count_waits`` is replaced by one that records what it was given, so the
test checks that the cell counts exactly one epoch of a real ``fit``, with no
plot, and prints the count it got.
"""

import warnings

import torch

from chapter_code import cell_source  # tests/unit/chapter_code.py


def run_cells(namespace, *names):
    """Run the chapter's import cell, then the cells ``names``, in ``namespace``."""
    namespace.setdefault("torch", torch)
    code = cell_source("networks", marker="from d2lgpu import")
    exec(code, namespace)
    for name in names:
        exec(cell_source("networks", name=name), namespace)
    return namespace


def test_epoch_waits_counts_one_epoch_of_fit(monkeypatch, hardware, capsys):
    hardware(cuda=0)  # the trainer finds no GPU and trains on the CPU
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    namespace, counted = {}, []

    def count_waits(fn):
        fn()
        trainer = namespace["counted"]
        counted.append((trainer.max_epochs, trainer.plot,
                        trainer.train_batch_idx))
        return 3

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "only 0 accelerator device(s)"
        run_cells(namespace, "make-trainer")
        namespace["count_waits"] = count_waits  # after the import cell's
        exec(cell_source("networks", name="epoch-waits"), namespace)
    (epochs, plot, batches), = counted
    assert (epochs, plot) == (1, False)
    assert batches > 0  # fit ran inside count_waits
    assert capsys.readouterr().out.endswith("waits in one epoch: 3\n")


def test_epoch_waits_without_cuda(monkeypatch, hardware, capsys):
    hardware(cuda=0)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_cells({}, "make-trainer", "epoch-waits")
    assert capsys.readouterr().out.endswith("No CUDA GPU: no waits to count.\n")
