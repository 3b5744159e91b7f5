"""d2lgpu.plotting: ProgressBoard draws headless and updates one display in a notebook;
the measured plots carry their data and draw again from it in each language."""

import base64

import pytest
import torch
from matplotlib.figure import Figure

import d2lgpu
from d2lgpu import matmul, plotting


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


# --- measured plots: drawn in a language, redrawn from the data their output carries ---

_LOSS = {"step_loss": [40.0, 3.0, 0.2, 0.001], "device": "cpu", "world_size": 1,
         "backend": "gloo", "global_batch": 32, "per_rank_batch": 32}
PLOTS = {
    "roofline": lambda: plotting.roofline({"x + y": (1 / 12, 2e9), "A @ A": (170.7, 1e12)},
                                          2.4e10),
    "loss_curves": lambda: plotting.loss_curves(
        _LOSS, {**_LOSS, "world_size": 2, "per_rank_batch": 16}),
    "rates": lambda: matmul.plot_rates(
        {(torch.device("cpu"), torch.float32): {16: (1e-6, 8e9), 32: (2e-6, 3e10)}}),
}


def _words(fig) -> str:
    ax, = fig.axes
    legends = [ax.get_legend(), *fig.legends]
    return " ".join([ax.get_xlabel(), ax.get_ylabel(), ax.get_title()]
                    + [t.get_text() for legend in legends if legend for t in legend.get_texts()])


@pytest.mark.parametrize("kind", PLOTS)
def test_a_measured_plot_carries_its_data_through_json_and_redraws_in_each_language(
        kind, monkeypatch):
    import json

    from d2lgpu.figures import LABELS
    monkeypatch.delenv("D2LGPU_LANGUAGE", raising=False)
    data, metadata = PLOTS[kind]()._repr_mimebundle_()
    metadata = json.loads(json.dumps(metadata))  # as the notebook stores it
    assert metadata[plotting.PLOT_DATA]["kind"] == kind
    assert plotting.redraw(metadata, "en") == (data["image/png"], metadata["image/png"])
    drawn = {code: plotting.redraw(metadata, code)[0] for code in LABELS}
    assert len(set(drawn.values())) == len(LABELS)  # each language its own words
    for code in LABELS:
        words = _words(plotting._DRAW[kind](metadata[plotting.PLOT_DATA]["data"], code))
        others = [w for c in LABELS if c != code for w in LABELS[c].values()
                  if "{" not in w and w not in LABELS[code].values()]
        assert not [w for w in others if w in words], (code, words)


def test_a_measured_plot_shows_as_a_png_of_a_phones_size_in_a_notebook():
    plot = PLOTS["rates"]()
    data, metadata = plot._repr_mimebundle_()
    assert base64.b64decode(data["image/png"]).startswith(b"\x89PNG")
    assert metadata["image/png"] == {"width": 500, "height": 440}  # drawn at twice that
    ax, = plot.fig.axes
    assert ax.xaxis.get_label().get_fontsize() >= 14
    assert all(t.get_fontsize() >= 12 for t in ax.get_legend().get_texts())


def test_a_plot_in_chinese_or_japanese_takes_a_cjk_font_where_one_is_installed():
    from matplotlib import font_manager
    have = {font.name for font in font_manager.fontManager.ttflist}
    for code, fonts in (("zh-CN", "Noto Sans CJK SC"), ("ja", "Noto Sans CJK JP")):
        label = plotting._DRAW["loss_curves"](
            PLOTS["loss_curves"]().data, code).axes[0].xaxis.get_label()
        assert label.get_family()[0] == "DejaVu Sans"
        assert (fonts in label.get_family()) == (fonts in have)


def test_the_loss_curves_name_both_runs_and_the_rates_each_device():
    fig = PLOTS["loss_curves"]().fig
    loss, = fig.axes
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "1 process, batch 32 (cpu)", "2 processes, 16 each (gloo, cpu)"]
    assert list(loss.get_lines()[0].get_ydata()) == _LOSS["step_loss"]
    rates = PLOTS["rates"]().fig.axes[0]
    assert [t.get_text() for t in rates.get_legend().get_texts()] == [
        f"CPU ({torch.get_num_threads()} threads), float32"]
    assert list(rates.get_lines()[0].get_ydata()) == pytest.approx([8e-3, 3e-2])
