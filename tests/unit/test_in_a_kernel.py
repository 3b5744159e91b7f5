"""In a fresh Jupyter kernel: importing d2lgpu changes nothing, fit stores one figure.

Both need a fresh Python process; they share one kernel (starting it and
importing torch there is most of their time).
"""

import base64
import json
import textwrap

import nbclient
import nbformat
import pytest

pytestmark = pytest.mark.slow  # a kernel of its own

# dict.items bypasses RcParams.__getitem__: reading rcParams["backend"] would
# itself resolve a backend and import pyplot.
IMPORT_PROBE = r"""
import json, random, sys, warnings
import matplotlib, torch
def state():
    return dict(rng=torch.get_rng_state().tolist(), py=repr(random.getstate()),
                rc=repr(sorted(dict.items(matplotlib.rcParams))),
                filters=repr(warnings.filters), threads=torch.get_num_threads(),
                backend=matplotlib.rcParams._get_backend_or_none())
loaded_before = {"matplotlib.pyplot", "d2lgpu"} & set(sys.modules)
before = state()
import d2lgpu
after = state()
changed = sorted(k for k in before if before[k] != after[k])
loaded = sorted(m for m in ("matplotlib.pyplot", "d2lgpu.figures",
                            "d2lgpu.launch") if m in sys.modules)
print(json.dumps(dict(changed=changed, loaded=loaded,
                      loaded_before=sorted(loaded_before))))
"""

FIT = textwrap.dedent("""
    import torch, d2lgpu
    torch.manual_seed(0)
    trainer = d2lgpu.Trainer(max_epochs=3)
    trainer.fit(d2lgpu.LinearRegression(),
                d2lgpu.SyntheticRegressionData(w=[2, -3.4], b=4.2,
                                               num_train=200, num_val=100))
""")


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    """The executed cells: the import probe, then a fit with its plot."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(IMPORT_PROBE),
                                         nbformat.v4.new_code_cell(FIT)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = tmp_path_factory.mktemp("kernel")
    client = nbclient.NotebookClient(nb, timeout=60, kernel_name="python3",
                                     resources={"metadata": {"path": str(path)}})
    client.execute()
    return nb.cells


def test_import_has_no_side_effects(cells):
    # No seeds, rcParams, warning filters, thread count or backend changed;
    # neither pyplot nor the chapters' figures module nor the launcher loaded.
    stream, = cells[0].outputs
    result = json.loads(stream.text.splitlines()[-1])
    assert result == {"changed": [], "loaded": [], "loaded_before": []}


def test_a_notebook_stores_one_figure_after_fit(cells):
    outputs = cells[1].outputs
    assert [o.output_type for o in outputs] == ["display_data"]
    assert base64.b64decode(outputs[0].data["image/png"]).startswith(b"\x89PNG")
    assert outputs[0].data["text/plain"] == "<ProgressBoard: loss by epoch>"
