"""Sphinx configuration of bece's documentation.

Build (from the repository root, with ``pip install -e ".[docs]"``)::

    sphinx-build -W --keep-going -b html docs docs/_build/html

Nothing here needs the network: intersphinx reads the inventories stored in
``docs/intersphinx/`` (``python docs/make_inventories.py`` rewrites them), and
MathJax is served from the build itself (``sphinx-mathjax-offline``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import bece

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS))  # make_inventories (the intersphinx table)

from make_inventories import PROJECTS  # noqa: E402
from transcripts import write_all  # noqa: E402

# The command-line transcripts the pages include, run now with the installed
# bece (docs/transcripts.py): none is written by hand, so none goes stale.
write_all()

project = "bece"
author = "bece developers"
copyright = "bece developers"
release = bece.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax copied into the build: maths renders offline
    "numpydoc",
    "myst_nb",
    "sphinx_gallery.gen_gallery",
    "sphinxarg.ext",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = [
    "_build",
    "**.ipynb_checkpoints",
    "tables/README.md",
    "examples/GALLERY_HEADER.rst",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.json",
    "auto_examples/*.md5",
]
templates_path = ["_templates"]
# Curly quotes and ellipses, but "--" stays two hyphens (command-line options).
smartquotes_action = "qe"

# -- notebooks ----------------------------------------------------------------
# docs/notebooks/ holds executed copies of notebooks/*.ipynb, written by
# docs/execute_notebooks.py (the originals are stored without outputs, and
# executing all four here would take minutes); they are rendered as stored.
# The tutorials (.md with code cells) have no stored outputs and are executed
# at each build ("auto": only what has no outputs).

# -- MyST-NB -----------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "auto"  # run what has no stored outputs (all of ours)
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_in_temp = True  # files a tutorial writes land in a temporary folder
nb_merge_streams = True

# -- autodoc, autosummary, numpydoc -------------------------------------------
autosummary_generate = True
# bece.torch's optional extra: its reference page builds without PyTorch
autodoc_mock_imports = ["torch", "torchmetrics"]
autosummary_imported_members = True
# Names documented twice (one object, two public paths): the second page is
# not indexed, so that autodoc's canonical name is described once.
autosummary_context = {"noindex": ["bece.smooth.SmoothBayesianECE"]}
autodoc_typehints = "none"  # numpydoc's Parameters section says the types
autodoc_default_options = {"inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = True
numpydoc_xref_ignore = {"optional", "default", "of", "or", "shape", "int64", "float64", "array-like"}
numpydoc_xref_aliases = {
    # numpydoc links these to python:True ...; the stored Python inventory has
    # no such entries, so the pages showed "default python:False": plain literals
    "True": ":literal:`True`",
    "False": ":literal:`False`",
    "None": ":literal:`None`",
    "ndarray": "numpy.ndarray",
    "array_like": ":term:`array_like <numpy:array_like>`",
    "Generator": "numpy.random.Generator",
}

# -- intersphinx: inventories stored in the repository (no network in CI) -----
intersphinx_mapping = {
    name: (spec["url"], str(DOCS / "intersphinx" / f"{name}.inv")) for name, spec in PROJECTS.items()
}
intersphinx_disabled_reftypes: list[str] = []

# -- sphinx-gallery -------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "reference_url": {"bece": None},
    "doc_module": ("bece",),
    "backreferences_dir": "auto_examples/backrefs",
    "show_memory": False,
    "min_reported_time": 0,
}

# -- HTML ---------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"bece {release}"
html_static_path = ["_static"]
html_css_files = ["bece.css"]  # code blocks wrap rather than scroll (docs/_static/bece.css)
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "contributing": []}
html_show_sourcelink = False


def _skip_member(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated metadata-routing methods (set_fit_request ...)."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
