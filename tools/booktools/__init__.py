"""The GPU book's maintainer tooling: recorded runs, notebook pairs, site extensions.

Modules: ``booktools.runs`` (runs/<machine>/ recordings, ``python -m
booktools.runs``), ``booktools.notebooks`` (chapter .md/.ipynb pairs,
``python -m booktools.notebooks``). Importing the package does nothing.
"""
__all__: list[str] = []
