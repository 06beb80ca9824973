"""Sphinx configuration: the API reference comes from the docstrings of the installed package."""

import cuforge

project = "cuforge"
author = "the cuforge developers"
release = cuforge.__version__
extensions = ["sphinx.ext.autodoc"]
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
html_theme = "furo"
html_title = f"cuforge {release}"
exclude_patterns = ["_build"]
