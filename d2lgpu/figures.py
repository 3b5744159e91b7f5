"""Figures drawn by code, so that they also load in Colab and Studio Lab.

The chapter "Tensors and GPUs" (chapters/tensors.md) shows :func:`copy_figure`.
Nothing here changes matplotlib's global state (``rcParams``): every style is
passed to the artists that use it.

A figure's words, and those of d2lgpu.plotting's plots, are in the book's
languages (``LABELS``): the one asked for, else the one ``$D2LGPU_LANGUAGE``
names, else English. The chapter's code is the same in every edition; the
book's translated notebooks store the figure drawn in their language
(booktools.i18n sync sets the variable; a plot is redrawn from its data).
"""
from __future__ import annotations

import os

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

__all__ = ["LANGUAGE_VARIABLE", "LABELS", "labels", "fonts", "copy_figure"]

LANGUAGE_VARIABLE = "D2LGPU_LANGUAGE"
# The words of the copy figure and of d2lgpu.plotting's plots, by language.
LABELS = {
    "en": {"device": "its memory and its cores", "copy": "copy",
           "stays": "X stays here:\n.to() copies, it does not move",
           "runs": "runs on {target}; the result stays there",
           "refused": "X + Y directly is refused (RuntimeError): its operands are on two devices",
           "intensity": "arithmetic intensity (FLOP per byte)",
           "rates_x": "n (product of two n × n matrices)",
           "rates_y": "achieved TFLOP/s (2n³ flops each)",
           "rates_title": "Matrix product speed by size", "cpu": "CPU ({threads} threads)",
           "curve": "{device}, {dtype}",
           "loss_x": "optimisation step", "loss_y": "training loss (mean squared error)",
           "loss_title": "Linear regression:\none process versus data parallel",
           "one_process": "1 process, batch {batch} ({device})",
           "processes": "{n} processes, {batch} each ({backend}, {device})"},
    "zh-CN": {"device": "它的内存和计算核心", "copy": "复制",
              "stays": "X 留在原处：\n.to() 是复制，不是移动",
              "runs": "在 {target} 上运行，结果也留在那里",
              "refused": "直接计算 X + Y 会被拒绝（RuntimeError）：两个操作数在不同设备上",
              "intensity": "计算强度（每字节的 FLOP 数）",
              "rates_x": "n（两个 n × n 矩阵相乘）",
              "rates_y": "实际达到的 TFLOP/s（每次 2n³ FLOP）",
              "rates_title": "矩阵乘法的速度与矩阵大小", "cpu": "CPU（{threads} 个线程）",
              "curve": "{device}，{dtype}",
              "loss_x": "训练步", "loss_y": "训练损失（均方误差）",
              "loss_title": "线性回归：单进程与数据并行",
              "one_process": "1 个进程，批量 {batch}（{device}）",
              "processes": "{n} 个进程，每个 {batch}（{backend}，{device}）"},
    "ja": {"device": "メモリと演算コア", "copy": "コピー",
           "stays": "X はここに残る：\n.to() はコピーであり、移動ではない",
           "runs": "{target} で実行され、結果もそこに残る",
           "refused": "X + Y を直接計算するとエラー（RuntimeError）：オペランドが別々のデバイスにある",
           "intensity": "演算強度（1 バイトあたりの FLOP）",
           "rates_x": "n（n × n 行列 2 つの積）",
           "rates_y": "実効速度 TFLOP/s（1 回 2n³ FLOP）",
           "rates_title": "行列積の実効速度とサイズ", "cpu": "CPU（{threads} スレッド）",
           "curve": "{device}、{dtype}",
           "loss_x": "最適化ステップ", "loss_y": "訓練損失（平均二乗誤差）",
           "loss_title": "線形回帰：1 プロセスとデータ並列",
           "one_process": "1 プロセス、バッチ {batch}（{device}）",
           "processes": "{n} プロセス、各 {batch}（{backend}、{device}）"},
    "pt-BR": {"device": "sua memória e seus núcleos", "copy": "cópia",
              "stays": "X fica aqui:\n.to() copia, não move",
              "runs": "roda em {target}; o resultado fica lá",
              "refused": "X + Y direto é recusado (RuntimeError): os operandos estão em dois "
                         "dispositivos",
              "intensity": "intensidade aritmética (FLOP por byte)",
              "rates_x": "n (produto de duas matrizes n × n)",
              "rates_y": "TFLOP/s alcançados (2n³ FLOPs cada)",
              "rates_title": "Velocidade do produto de matrizes\npor tamanho",
              "cpu": "CPU ({threads} threads)", "curve": "{device}, {dtype}",
              "loss_x": "passo de otimização",
              "loss_y": "perda de treinamento\n(erro quadrático médio)",
              "loss_title": "Regressão linear: um processo\nversus paralelismo de dados",
              "one_process": "1 processo, lote de {batch} ({device})",
              "processes": "{n} processos, {batch} cada ({backend}, {device})"},
}
# DejaVu Sans has no CJK glyphs: matplotlib takes them from the next family it
# has, the language's own glyph forms first.
_CJK = {"ja": ("Noto Sans CJK JP", "IPAexGothic", "BIZ UDPGothic"),
        "zh": ("Noto Sans CJK SC", "WenQuanYi Micro Hei", "Noto Sans CJK JP")}


def labels(language: str | None = None) -> dict[str, str]:
    """The figure's words in that language, else in $D2LGPU_LANGUAGE's, else English."""
    language = language or os.environ.get(LANGUAGE_VARIABLE) or "en"
    if language not in LABELS:
        raise ValueError(f"d2lgpu.figures: no labels in {language!r} "
                         f"(${LANGUAGE_VARIABLE} or language=); these exist: {', '.join(LABELS)}")
    return LABELS[language]

# A light palette that reads well on a white page and in print.
_INK = "#1f2933"
_MUTED = "#52606d"
_DEVICE_FILL = "#f5f7fa"
_DEVICE_EDGE = "#9aa5b1"
_X_FILL = "#9ec5fe"      # X and its copy Z share a colour: same values
_Y_FILL = "#ffc078"
_OP_FILL = "#b2f2bb"
_COPY = "#1864ab"
_ERROR = "#c92a2a"
_FONT = "DejaVu Sans"


def fonts(language: str | None, words: dict[str, str]) -> str | list[str]:
    """DejaVu Sans, followed by the language's CJK families that are installed where
    its words need one (naming a missing family makes matplotlib warn)."""
    language = language or os.environ.get(LANGUAGE_VARIABLE) or "en"
    if all(ord(c) < 0x2E80 for text in words.values() for c in text):
        return _FONT
    from matplotlib import font_manager
    have = {font.name for font in font_manager.fontManager.ttflist}
    wanted = _CJK.get(language.split("-")[0], _CJK["ja"])
    return [_FONT, *(family for family in wanted if family in have)]


def _device(ax, x, y, w, h, name, subtitle, font=_FONT):
    """A rounded box standing for one device: its memory and its cores."""
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.15",
                                facecolor=_DEVICE_FILL, edgecolor=_DEVICE_EDGE, linewidth=1.5))
    ax.text(x + 0.2, y + h - 0.3, name, ha="left", va="top", fontsize=13,
            fontweight="bold", color=_INK, family=font)
    ax.text(x + 0.2, y + h - 0.72, subtitle, ha="left", va="top", fontsize=9,
            color=_MUTED, family=font)


def _tensor(ax, x, y, name, fill, rows=2, cols=3, cell=0.42, font=_FONT):
    """A small grid of cells standing for a 2 x 3 tensor, named above."""
    for r in range(rows):
        for c in range(cols):
            ax.add_patch(Rectangle((x + c * cell, y + r * cell), cell, cell,
                                   facecolor=fill, edgecolor="white", linewidth=1.5))
    ax.add_patch(Rectangle((x, y), cols * cell, rows * cell, fill=False,
                           edgecolor=_INK, linewidth=1.0))
    ax.text(x + cols * cell / 2, y + rows * cell + 0.12, name, ha="center", va="bottom",
            fontsize=12, fontweight="bold", color=_INK, family=font)
    return x, y, cols * cell, rows * cell


def _arrow(ax, start, end, color, style="-|>", linestyle="-", rad=0.0, width=1.8):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=16,
                                 color=color, linewidth=width, linestyle=linestyle,
                                 connectionstyle=f"arc3,rad={rad}", shrinkA=2, shrinkB=2))


def copy_figure(source: str = "cuda:0", target: str = "cuda:1",
                language: str | None = None) -> Figure:
    """Draw the copy of ``X`` to another device so that ``Y + Z`` can run there.

    ``X`` lives on ``source`` and ``Y`` on ``target``: ``X + Y`` is refused,
    so ``Z = X.to(target)`` copies ``X`` across, and ``Y + Z`` runs on
    ``target``, where the result is stored. Returns the (pyplot-managed)
    figure; call ``plt.show()`` to display it in a notebook. Its words are
    in ``language`` (``labels``).
    """
    words = labels(language)
    font = fonts(language, words)
    fig, ax = plt.subplots(figsize=(7.6, 3.7))
    ax.set_xlim(0, 10.2)
    ax.set_ylim(-0.1, 4.9)
    ax.set_aspect("equal")
    ax.axis("off")

    _device(ax, 0.1, 0.55, 3.2, 4.25, source, words["device"], font)
    _device(ax, 5.7, 0.55, 4.4, 4.25, target, words["device"], font)

    xx, xy, xw, xh = _tensor(ax, 1.07, 2.3, "X", _X_FILL)
    zx, zy, zw, zh = _tensor(ax, 6.1, 2.3, "Z", _X_FILL)
    yx, yy, yw, yh = _tensor(ax, 8.45, 2.3, "Y", _Y_FILL)

    # The copy: from X on the source device to Z on the target device.
    _arrow(ax, (xx + xw, xy + xh / 2), (zx, zy + zh / 2), _COPY, width=2.4)
    mid = (3.3 + 5.7) / 2
    ax.text(mid, xy + xh / 2 + 0.15, words["copy"], ha="center", va="bottom", fontsize=11,
            fontweight="bold", color=_COPY, family=font)
    ax.text(mid, xy + xh / 2 - 0.15, f"Z = X.to('{target}')", ha="center", va="top",
            fontsize=9, color=_COPY, family="DejaVu Sans Mono")

    ax.text(xx + xw / 2, xy - 0.45, words["stays"],
            ha="center", va="top", fontsize=9, color=_MUTED, family=font, linespacing=1.3)

    # The operation, on the device that holds both operands.
    centre = (zx + zw / 2 + yx + yw / 2) / 2
    ow, oh = 1.6, 0.6
    ox, oy = centre - ow / 2, 1.15
    ax.add_patch(FancyBboxPatch((ox, oy), ow, oh, boxstyle="round,pad=0.02,rounding_size=0.12",
                                facecolor=_OP_FILL, edgecolor=_INK, linewidth=1.0))
    ax.text(centre, oy + oh / 2, "Y + Z", ha="center", va="center", fontsize=12,
            fontweight="bold", color=_INK, family="DejaVu Sans Mono")
    _arrow(ax, (zx + zw / 2, zy), (ox + 0.35, oy + oh), _INK, width=1.4)
    _arrow(ax, (yx + yw / 2, yy), (ox + ow - 0.35, oy + oh), _INK, width=1.4)
    ax.text(centre, oy - 0.1, words["runs"].format(target=target),
            ha="center", va="top", fontsize=9, color=_MUTED, family=font)

    # What is refused: an operation whose operands are on two devices.
    ax.text(5.1, 0.2, words["refused"],
            ha="center", va="center", fontsize=9.5, color=_ERROR, family=font)
    fig.tight_layout(pad=0.2)
    return fig
