"""ProgressBoard: draws headless, updates one display in a notebook."""

import base64

import pytest
import torch
from matplotlib.figure import Figure

import d2lgpu
from d2lgpu import plotting


def test_headless_fit_draws_two_curves_of_one_point_per_epoch():
    torch.manual_seed(0)
    trainer = d2lgpu.Trainer(max_epochs=3)  # plot=True is the default
    trainer.fit(d2lgpu.LinearRegression(),
                d2lgpu.SyntheticRegressionData(w=[2, -3.4], b=4.2,
                                               num_train=200, num_val=100))
    board = trainer.board
    assert board.display is False  # no Jupyter kernel here
    assert isinstance(board.fig, Figure)
    ax, = board.fig.axes
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("epoch", "loss")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["train", "val"]
    train, val = ax.get_lines()
    assert list(train.get_xdata()) == [1, 2, 3]
    assert list(train.get_ydata()) == pytest.approx(trainer.train_loss)
    assert list(val.get_ydata()) == pytest.approx(trainer.val_loss)
    assert ax.get_yscale() == "log"
    assert ax.get_title() == "LinearRegression on cpu"
    assert board.to_png().startswith(b"\x89PNG")


def test_no_board_without_plot():
    trainer = d2lgpu.Trainer(1, plot=False)
    trainer.fit(d2lgpu.LinearRegression(),
                d2lgpu.SyntheticRegressionData(w=[1.0], b=0, num_train=64,
                                               num_val=32))
    assert trainer.board is None


class FakeHandle:
    def __init__(self):
        self.updates = []

    def update(self, bundle, raw=False, metadata=None):
        self.updates.append((bundle, raw))


def test_notebook_shows_one_display_and_updates_it(monkeypatch):
    import IPython.display  # pinned with ipykernel: always there

    shown, handle = [], FakeHandle()

    def fake_display(bundle, raw=False, metadata=None, display_id=None):
        shown.append((bundle, raw, metadata, display_id))
        return handle

    monkeypatch.setattr(IPython.display, "display", fake_display)
    board = d2lgpu.ProgressBoard(display=True)
    board.draw(1, 0.5, "train", refresh=False)
    assert shown == []  # nothing shown until a refresh
    board.draw(1, 0.4, "val")
    board.draw(2, 0.3, "train")
    board.draw(2, 0.2, "val")
    assert len(shown) == 1 and len(handle.updates) == 2
    bundle, raw, metadata, display_id = shown[0]
    assert raw is True and display_id is True
    png = base64.b64decode(bundle["image/png"])
    assert png.startswith(b"\x89PNG")
    # Retina: the PNG has twice the pixels of the size it is shown at.
    pixels = int.from_bytes(png[16:20], "big")
    assert pixels == 2 * metadata["image/png"]["width"]
    assert bundle["text/plain"] == "<ProgressBoard: loss by epoch>"


def test_log_scale_falls_back_to_linear_for_non_positive_values():
    board = d2lgpu.ProgressBoard(yscale="log", display=False)
    board.draw(1, 1.0, "train")
    assert board.ax.get_yscale() == "log"
    board.draw(2, 0.0, "train")
    assert board.ax.get_yscale() == "linear"


def test_not_in_a_notebook_here():
    assert plotting._in_notebook() is False
    assert d2lgpu.ProgressBoard().display is False


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(yscale="symlog"), ValueError, "yscale must be 'linear' or 'log'"),
    (dict(display="yes"), TypeError, "display must be None (automatic), True or False"),
])
def test_board_bad_input(kwargs, error, message):
    import re
    with pytest.raises(error, match=re.escape(message)):
        d2lgpu.ProgressBoard(**kwargs)
