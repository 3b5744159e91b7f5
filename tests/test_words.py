"""The chapters' prose stays within the word limits of pyproject.toml."""
import textwrap

import pytest

from booktools import words

PAGE = textwrap.dedent('''\
    ---
    jupytext:
      formats: ipynb,md:myst
    ---

    (a-label)=
    # One title

    Two words, `three()` here.
    <!-- a comment for maintainers only -->

    ```{code-cell} ipython3
    :tags: [hardware]

    not counted at all
    ```

    | a | b |
    |---|---|

    $$
    t = \\ell + B
    $$

    ```{exercise} Exercise title
    :label: ex-one

    Body text.
    ```

    ```{solution-start} ex-one
    :class: dropdown
    ```

    ```python
    code in a solution
    ```

    Solved.
    ''')


def test_only_prose_counts():
    # One title / Two words, `three()` here. / a b / Exercise title / Body text. / Solved.
    assert words.count_words(PAGE) == 2 + 4 + 2 + 2 + 2 + 1


@pytest.mark.parametrize("limit", words.limits(), ids=lambda lim: lim.name)
def test_chapters_within_word_limits(limit):
    assert limit.words() <= limit.limit, (
        f"{limit.name}: {limit.words()} words, at most {limit.limit} "
        "(python -m booktools.words)")


def test_a_limit_naming_a_missing_chapter_is_refused(tmp_path):
    (tmp_path / "intro.md").write_text("# Intro\n")
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.booktools.word-limits.main]\n'
                      'chapters = ["intro", "gone"]\nlimit = 10\n')
    with pytest.raises(ValueError, match="gone"):
        words.limits(config, tmp_path)
    config.write_text('[tool.booktools.word-limits.all]\nchapters = "*"\nlimit = 1\n')
    [limit] = words.limits(config, tmp_path)
    assert limit.chapters == ("intro",) and limit.words(tmp_path) == 1
