"""Sphinx configuration of dualad's documentation.

Build (from the repository root): ``python -m sphinx -W -b html docs docs/_build/html``.
The gallery (``examples/``) is executed during the build. Set ``DUALAD_DOCS_GALLERY=0``
to skip executing it (pages for the examples are still made, without outputs).
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE / "_ext"))

import dualad  # noqa: E402

project = "dualad"
author = "the dualad developers"
copyright = "the dualad developers"
release = dualad.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax served with the site (the docs extra has it)
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "dualad_run",
    "dualad_offline",  # the built pages load nothing from another host
]

# MathJax 3 from the site's own _static/mathjax (copied there by sphinx-mathjax-offline),
# not from a CDN: math renders without a network.
mathjax_path = "mathjax/tex-chtml.js"

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.json", "auto_examples/*.md5",
                    "sg_execution_times.rst"]
templates_path = ["_templates"]

myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# --- API reference --------------------------------------------------------------------
autosummary_generate = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# numpydoc validates only structure it can parse; keep its checks to what the
# docstrings promise (a summary and an Examples section are checked by the tests).
numpydoc_validation_checks: set[str] = set()


def _ufunc_signature(app, what, name, obj, options, signature, return_annotation):  # noqa: ANN001
    """A ufunc of ``dualad.numpy`` is a callable object taking ``*args``: show it as its
    docstring's Parameters name its arguments (``sin(x)``, ``add(a, b)``)."""
    from dualad.rules.elementwise import Ufunc

    if what == "function" and isinstance(obj, Ufunc):  # (its page; autosummary's table: data)
        return ("(x)" if obj.nin == 1 else "(a, b)"), None
    return None


# --- intersphinx: only when the inventories can be fetched -------------------------------
# A machine without network (CI here reaches only package registries) would turn the
# failed fetch into a warning, and -W into an error; links to Python, NumPy and SymPy are
# a convenience, so the build goes on without them there.
_INTERSPHINX = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable", None),
    "sympy": ("https://docs.sympy.org/latest", None),
}


def _online(host: str = "docs.python.org", timeout: float = 3.0) -> bool:
    if os.environ.get("DUALAD_DOCS_OFFLINE"):
        return False
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False


intersphinx_mapping = _INTERSPHINX if _online() else {}
intersphinx_timeout = 10

# --- the gallery ---------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/[^_][^/]*\.py$",  # execute every example
    "plot_gallery": os.environ.get("DUALAD_DOCS_GALLERY", "1") != "0",
    "download_all_examples": False,
    "remove_config_comments": True,
    # a learning path, first steps first (docs/_ext/gallery_order.py)
    "within_subsection_order": "gallery_order.learning_path",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "abort_on_example_error": True,
    "min_reported_time": 1,
    "write_computation_times": False,
}

# --- HTML ------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"dualad {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "navigation_with_keys": False,
    # one row at 1280 px: four sections, the rest under "More", and the search as an icon
    "header_links_before_dropdown": 4,
    "navbar_persistent": ["search-button"],
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_show_sourcelink = False


def setup(app):  # noqa: ANN001, ANN201
    app.connect("autodoc-process-signature", _ufunc_signature)
