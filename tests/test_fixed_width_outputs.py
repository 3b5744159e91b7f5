"""The rule that marks an output as a text table (booktools.ext.fixed_width_outputs)."""
from booktools.ext.fixed_width_outputs import is_fixed_width

NVIDIA_SMI = """\
+-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
"""


PROFILER = """\
-------------------  ------------  ------------  ------------
               Name    Self CPU %      Self CPU    # of Calls
-------------------  ------------  ------------  ------------
       aten::addmv_        38.22%      69.363us             5
-------------------  ------------  ------------  ------------
Self CPU time total: 181.498us
"""


def test_ascii_and_box_drawn_tables_are_fixed_width():
    assert is_fixed_width(NVIDIA_SMI)
    assert is_fixed_width(PROFILER)
    assert is_fixed_width("┌──────┐\n│ H100 │\n└──────┘")


def test_messages_tracebacks_and_source_keep_wrapping():
    assert not is_fixed_width("UserWarning: Trainer(num_gpus=2): only 0 accelerator device(s) "
                              "available, using 0 (training on the CPU)\n")
    assert not is_fixed_width("def f(x: int | None,\n      y: str | None) -> int | None:\n"
                              "    return x or 0 | 1\n")
    # Two table rows are not yet a table; bars at one shared column are not either.
    assert not is_fixed_width("| a | b |\n| c | d |\nplain text")
    assert not is_fixed_width("a | b\nc | d\ne | f\n")
    # One dashed rule is a heading's underline, not a table's column rules.
    assert not is_fixed_width("Results\n-------  -------\nsome text\n")
    assert not is_fixed_width("-------\nplain\n-------\n")
