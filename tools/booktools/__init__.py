"""The GPU book's maintainer tooling: recorded runs, notebook pairs, site extensions.

Modules: ``booktools.runs`` (runs/<machine>/ recordings, ``python -m
booktools.runs``), ``booktools.notebooks`` (chapter .md/.ipynb pairs,
``python -m booktools.notebooks``), ``booktools.gpu_figures`` (GPU figures
in the prose against the recordings, ``python -m booktools.gpu_figures``),
``booktools.claims`` (the prose's conclusions against every measured
output, ``python -m booktools.claims``), ``booktools.conditions`` (the GPU's
clocks and power while a recording runs), ``booktools.contributed`` (a
reader's recording: scrubbed, packed, and checked by ``python -m
booktools.runs verify``),
``booktools.words`` (words of prose against the limits, ``python -m
booktools.words``), ``booktools.release`` (release tags), ``booktools.repo``
(the repository's address), ``booktools.colab`` (the chapters as a Colab
reader runs them), ``booktools.book`` (the book's pages and configuration) and
``booktools.ext`` (the site's Sphinx extensions). Importing the package does
nothing.
"""
__all__: list[str] = []
