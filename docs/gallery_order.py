"""The gallery's order: from a first band to the report (sphinx-gallery's ``within_subsection_order``)."""

from pathlib import Path

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
