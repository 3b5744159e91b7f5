"""The figures drawn by code in d2lgpu.figures (shown in chapters/tensors.md)."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from d2lgpu.figures import copy_figure  # noqa: E402


def _texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.texts]


@pytest.fixture
def fig():
    figure = copy_figure()
    yield figure
    plt.close(figure)


def test_returns_one_figure_with_hidden_axes(fig):
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 1
    assert not fig.axes[0].axison


def test_labels_name_devices_tensors_copy_and_operation(fig):
    texts = _texts(fig)
    for label in ("cuda:0", "cuda:1", "X", "Y", "Z", "Y + Z", "copy",
                  "Z = X.to('cuda:1')"):
        assert label in texts, label
    assert any("refused" in t for t in texts)


def test_device_names_can_be_chosen():
    figure = copy_figure("cpu", "mps:0")
    try:
        texts = _texts(figure)
        assert "cpu" in texts and "mps:0" in texts
        assert "Z = X.to('mps:0')" in texts
        assert "cuda:0" not in texts
    finally:
        plt.close(figure)


def test_leaves_rcparams_alone():
    before = dict(matplotlib.rcParams)
    figure = copy_figure()
    figure.canvas.draw()
    plt.close(figure)
    after = dict(matplotlib.rcParams)
    assert before == after


def test_draws_without_error_and_closes_cleanly():
    open_before = set(plt.get_fignums())
    figure = copy_figure()
    figure.canvas.draw()
    assert figure.number in plt.get_fignums()
    plt.close(figure)
    assert set(plt.get_fignums()) == open_before


@pytest.mark.parametrize("language", ["en", "zh-CN", "ja", "pt-BR"])
def test_the_words_are_in_the_language_asked_for(language, monkeypatch):
    from d2lgpu.figures import LABELS
    monkeypatch.delenv("D2LGPU_LANGUAGE", raising=False)
    figure = copy_figure(language=language)
    try:
        texts = _texts(figure)
        words = LABELS[language]
        assert words["copy"] in texts and words["refused"] in texts
        assert words["runs"].format(target="cuda:1") in texts
        assert "Z = X.to('cuda:1')" in texts  # code is code in every language
        if language != "en":
            assert LABELS["en"]["refused"] not in texts
    finally:
        plt.close(figure)


def test_the_language_comes_from_the_environment_unless_asked(monkeypatch):
    from d2lgpu.figures import LABELS, labels
    monkeypatch.setenv("D2LGPU_LANGUAGE", "ja")
    assert labels() == LABELS["ja"] and labels("pt-BR") == LABELS["pt-BR"]
    monkeypatch.setenv("D2LGPU_LANGUAGE", "xx")
    with pytest.raises(ValueError, match=r"no labels in 'xx' \(\$D2LGPU_LANGUAGE"):
        labels()


def test_every_language_has_every_word():
    from d2lgpu.figures import LABELS
    assert all(set(words) == set(LABELS["en"]) for words in LABELS.values())


def test_every_language_fills_in_the_same_values():
    import string

    from d2lgpu.figures import LABELS

    def fields(text):
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}
    for code, words in LABELS.items():
        for key, text in words.items():
            assert fields(text) == fields(LABELS["en"][key]), (code, key)
