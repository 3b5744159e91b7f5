"""The book's Sphinx extensions, listed in _config.yml (sphinx.extra_extensions);
each module's docstring says what it adds or works around."""
__all__: list[str] = []
