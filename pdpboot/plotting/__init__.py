"""Plots of pdpboot results: PD curves with bands, ICE, 2-D surfaces, heterogeneity and H².

Every function draws a *precomputed* result (or one of its nodes) on the given Axes or a new
figure and returns what it drew on; nothing here computes a statistic.  matplotlib is imported
lazily.  Styling goes through one ``style=`` dict: element -> matplotlib keywords merged over
the defaults (the Okabe-Ito palette), or False to leave the element out.
"""

from ._common import OKABE_ITO, QUANTILE_NOTE, BandChoice, is_skewed, paper_style, tidy_ticks
from .curves import plot_ice, plot_pd, plot_regional_pd, plot_target
from .statistics import plot_h_statistic, plot_heterogeneity, plot_importance
from .surfaces import plot_pd_contour, plot_pd_panels
from .tidy import TIDY_COLUMNS, plot_facets, tidy

__all__ = [
    "OKABE_ITO",
    "QUANTILE_NOTE",
    "TIDY_COLUMNS",
    "BandChoice",
    "is_skewed",
    "paper_style",
    "plot_facets",
    "plot_h_statistic",
    "plot_heterogeneity",
    "plot_ice",
    "plot_importance",
    "plot_pd",
    "plot_pd_contour",
    "plot_pd_panels",
    "plot_regional_pd",
    "plot_target",
    "tidy",
    "tidy_ticks",
]
