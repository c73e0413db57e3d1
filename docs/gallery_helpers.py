"""The gallery's order and image scraper (named in ``sphinx_gallery_conf`` of ``conf.py``)."""

from pathlib import Path

from sphinx_gallery.scrapers import matplotlib_scraper

#: from a first band to the report, then long runs
ORDER = ["plot_forest_bands", "plot_surface_width", "plot_ice_heterogeneity", "plot_h_statistic",
         "plot_ale_correlated", "plot_boosting_classifier", "plot_debiased", "plot_own_pipeline",
         "plot_tidy_seaborn", "plot_html_report", "plot_checkpoint_resume", "plot_dask"]


class ExampleOrder:
    """Sort key: an example's place in ``ORDER`` (examples not listed come last, by name)."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __repr__(self):
        return "<ExampleOrder>"

    def __call__(self, filename):
        stem = Path(filename).stem
        return (ORDER.index(stem), stem) if stem in ORDER else (len(ORDER), stem)


def tight_matplotlib_scraper(block, block_vars, gallery_conf, **kwargs):
    """Matplotlib's figures saved as Jupyter shows them: cropped to what is drawn (no clipped titles)."""
    return matplotlib_scraper(block, block_vars, gallery_conf, bbox_inches="tight", **kwargs)
