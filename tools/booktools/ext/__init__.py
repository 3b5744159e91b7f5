"""The book's Sphinx extensions, listed in _config.yml (sphinx.extra_extensions).

launch_buttons (a Studio Lab entry, the paired .ipynb as download),
offline_mathjax (MathJax served by the site), page_scripts (no console
errors), recorded_runs (recorded GPU runs in tabs under hardware cells),
site_assets (no unused assets), exercise_numbers (exercises numbered per page),
book_pdf (a link to the edition's PDF), a11y (accessible names).
"""
__all__: list[str] = []
