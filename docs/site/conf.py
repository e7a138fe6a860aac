"""Sphinx configuration of the geoforest documentation site.

Build (from the repository root, see ``.ci/docs``)::

    python -m sphinx -W --keep-going -b html docs/site docs/site/_build/html

Why this stack: ``docs/site/README.md``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# The package is installed editable in the venv; this also lets a checkout
# without the install be documented.
sys.path.insert(0, str(ROOT))

# The gallery examples run inside this process: draw their figures off-screen.
os.environ.setdefault("MPLBACKEND", "Agg")

import geoforest  # noqa: E402

# -- Project -----------------------------------------------------------------

project = "geoforest"
author = "the geoforest developers"
copyright = "the geoforest developers"
release = geoforest.__version__
version = ".".join(release.split(".")[:2])

# -- General -----------------------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "README.md",  # notes for maintainers of this site, not a page
    "examples",  # the gallery's sources; sphinx-gallery renders them into auto_examples/
]
default_role = "py:obj"
nitpicky = False  # no intersphinx (no network at build time), so outside names stay plain text

# -- autodoc / autosummary / numpydoc ------------------------------------------

autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"  # the numpydoc "Parameters" sections carry the types
autodoc_member_order = "bysource"

# numpydoc renders Parameters/Returns/Attributes/References; the class pages
# list methods themselves (templates), so numpydoc does not add a second table.
numpydoc_show_class_members = False
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# -- MyST (the Markdown guides in docs/ and the changelog are included, not copied)

myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# -- sphinx-gallery ------------------------------------------------------------


sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",  # every plot_*.py is executed
    "ignore_pattern": r"__init__\.py",
    "abort_on_example_error": False,  # report every failing example, then fail the build
    "only_warn_on_example_error": False,
    "doc_module": ("geoforest",),
    "reference_url": {"geoforest": None},  # link names in the code to the API pages
    "backreferences_dir": "api/generated/backreferences",
    "min_reported_time": 0,
    "remove_config_comments": True,
    "download_all_examples": False,
    "within_subsection_order": "FileNameSortKey",
    "write_computation_times": True,
}

# -- HTML ------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"geoforest {release}"
html_static_path = []
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "navbar_end": ["theme-switcher", "navbar-icon-links"],
}


# -- The API reference lists every public name ---------------------------------


def _check_api_coverage(app):
    """Warn (an error under -W) for a public name missing from ``api/index.rst``.

    Public: ``geoforest.__all__`` and the ``__all__`` of its public subpackages.
    Constants may be named in the page's prose instead of an autosummary list.
    """
    import importlib
    import re

    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    text = (HERE / "api" / "index.rst").read_text(encoding="utf-8")
    listed = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    subpackages = ("cluster", "datasets", "diffusion", "embedding", "graph", "llpd", "metrics")
    names = [n for n in geoforest.__all__ if n not in subpackages and n != "__version__"]
    for sub in subpackages:
        module = importlib.import_module(f"geoforest.{sub}")
        names += [n for n in module.__all__ if not hasattr(geoforest, n)]
    for name in sorted(set(names) - listed):
        message = "public name %r is not in docs/site/api/index.rst"
        logger.warning(message, name, type="geoforest", subtype="api")


def _plain_sklearn_refs(app, what, name, obj, options, lines):
    """Third-party only: scikit-learn's inherited docstrings (``score``,
    ``fit_predict``, ...) link into scikit-learn's own user guide with
    ``:ref:``, which cannot resolve here (no intersphinx); keep the link text."""
    import re

    if not getattr(obj, "__module__", "").startswith("sklearn."):
        return
    for i, line in enumerate(lines):
        lines[i] = re.sub(r":ref:`([^`<]*?)\s*<[^`>]+>`", r"\1 (scikit-learn)", line)


def _included_pages() -> dict[str, str]:
    """``docs/<page>.md`` -> the site page that includes it (``guide/scale``, ...).

    The Markdown pages live once, in ``docs/``; the site includes them
    (``{include} ../../<page>.md``), so this map is read from the includes.
    """
    import re

    pages = {}
    for path in HERE.rglob("*.md"):
        if "_build" in path.parts:
            continue
        for target in re.findall(r"\{include\}\s+(\S+\.md)", path.read_text(encoding="utf-8")):
            source = (path.parent / target).resolve()
            if source.is_relative_to(ROOT / "docs"):
                docname = path.relative_to(HERE).with_suffix("").as_posix()
                pages[source.relative_to(ROOT).as_posix()] = docname
    return pages


_DOC_PAGES = _included_pages()


def _link_cited_docs(app, what, name, obj, options, lines):
    """Docstrings cite the design notes by path (````docs/scale.md````, with an
    optional ``#section``, or bare); on the API pages that path becomes a link to the
    site page holding the note.  A cited page the site does not include is an
    error under -W, so no docstring points at nothing."""
    import re

    from sphinx.util import logging

    def link(match):
        path, section = match.group(1) or match.group(3), match.group(2) or ""
        docname = _DOC_PAGES.get(path)
        if docname is None:
            logging.getLogger(__name__).warning(
                "%s cites %s, which no page of the site includes", name, path,
                type="geoforest", subtype="docs-link",
            )  # fmt: skip
            return match.group(0)
        return f":doc:`{path}{section} </{docname}>`"

    for i, line in enumerate(lines):
        lines[i] = re.sub(
            r"``(docs/[\w./-]+\.md)(#[\w-]+)?``|(?<![\w/`])(docs/[\w./-]+\.md)", link, line
        )


def setup(app):
    app.connect("builder-inited", _check_api_coverage)
    app.connect("autodoc-process-docstring", _plain_sklearn_refs)
    app.connect("autodoc-process-docstring", _link_cited_docs)
