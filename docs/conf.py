"""Sphinx configuration of pdpboot's documentation (built by ``make docs``; see docs/README.md)."""

import os
import re
import sys
from pathlib import Path

# One native thread per fit: the gallery's timings are per core, and OpenMP learners (histogram boosting,
# XGBoost) spin-wait badly on a shared machine. Set before anything imports scikit-learn.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from validation_page import write_page  # noqa: E402

import pdpboot  # noqa: E402

project = "pdpboot"
author = "pdpboot developers"
copyright = "pdpboot developers"  # noqa: A001
release = pdpboot.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]
templates_path = ["_templates"]
exclude_patterns = ["_build", "examples/README.rst", "**/README.md"]

# -- API reference: autosummary writes one page per public name (generated/), numpydoc renders the docstrings
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"           # the numpydoc "Parameters" section says the types
numpydoc_show_class_members = False  # the public classes are option objects: their parameters are their API

# -- no network at build time: no intersphinx; the theme's assets are bundled with it
html_theme = "pydata_sphinx_theme"
html_title = f"pdpboot {release}"
html_static_path = ["_static"]
html_css_files = ["pdpboot.css"]
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
    "icon_links": [],
}
html_sidebars = {"index": [], "getting_started": [], "changelog": [], "validation": []}
html_show_sourcelink = False

# -- the gallery: every example executed at each build. PDPBOOT_DOCS_GALLERY (a regular expression on the
# script's path) runs a subset, e.g. `make docs-quick`; the other examples are shown without their output.
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": os.environ.get("PDPBOOT_DOCS_GALLERY", r"/plot_"),
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "capture_repr": ("_repr_html_", "__repr__"),
    "image_scrapers": ("gallery_helpers.tight_matplotlib_scraper",),
    "matplotlib_animations": False,
    "within_subsection_order": "gallery_helpers.ExampleOrder",
    "reset_modules": ("matplotlib",),
    "show_memory": False,
    "min_reported_time": 1,
    "promote_jupyter_magic": False,
    "backreferences_dir": None,
    "first_notebook_cell": None,
    "plot_gallery": "True",
}

# -- the changelog page: CHANGELOG.md (headings, bullets, code) as reStructuredText, no Markdown parser needed
def markdown_to_rst(text: str) -> str:
    """The subset of Markdown CHANGELOG.md uses: ``#``/``##``/``###`` headings, ``-`` bullets, inline code."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"(?<!`)`([^`]+)`(?!`)", r"``\1``", line)
        heading = re.match(r"^(#{1,3}) (.*)$", line)
        if heading:
            title = heading.group(2)
            out += [title, "=-~"[len(heading.group(1)) - 1] * len(title), ""]
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


write_if_changed(HERE / "changelog.rst", markdown_to_rst((ROOT / "CHANGELOG.md").read_text(encoding="utf-8")))

# -- the validation page: generated from experiments/summaries/ at every build
write_page(ROOT / "experiments" / "summaries", HERE / "validation.rst")
