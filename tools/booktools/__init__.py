"""The GPU book's maintainer tooling: recorded runs, notebook pairs, translations, the
site and its Sphinx extensions (booktools.ext). Each module's docstring names its
commands (``python -m booktools.MODULE``). Importing the package does nothing."""
__all__: list[str] = []
