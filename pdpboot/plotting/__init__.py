"""Plots of pdpboot results: PD curves with bands, ICE, 2-D surfaces, heterogeneity and H².

Every function takes *precomputed* results - the :class:`xarray.DataTree` returned by
:func:`pdpboot.bootstrap_partial_dependence` (usually after :func:`pdpboot.confidence_bands`),
one of its feature nodes, or a node's :class:`xarray.Dataset` - draws on the given Axes (or on a
new figure), and returns what it drew on.  Nothing here computes a statistic or calls
``plt.show()``; matplotlib is imported lazily, so ``import pdpboot`` does not import it.

Styling goes through one ``style=`` dict: element -> matplotlib keywords merged over the defaults
(or False to leave the element out).  Defaults use the Okabe-Ito colour-blind-safe palette and
perceptually uniform colour maps; :func:`paper_style` sets fonts and sizes for single-column (3.3 in)
paper figures.  Numeric axes of strongly skewed features are quantile-spaced by default (``scale=``,
:func:`is_skewed`).

Modules: ``curves`` (:func:`plot_pd`), ``ice`` (:func:`plot_ice`: ICE curves of a fitted model, computed
on the fly, optionally under a result's band), ``_scale`` (:func:`is_skewed`: which features get a
quantile-spaced axis), ``surfaces`` (:func:`plot_pd_contour`), ``panels``
(:func:`plot_pd_panels`),
``statistics`` (:func:`plot_heterogeneity`, :func:`plot_h_statistic`, :func:`plot_importance`),
``target`` (:func:`plot_target`: the actual outcome and the rows per grid bin beside the PD), ``tidy``
(:func:`tidy`: any result as one long table; :func:`plot_facets`: a seaborn panel per feature from
it); private helpers in ``_data`` (reading results) and ``_style`` (palette, :func:`paper_style`,
shared drawing helpers).
"""

from ._data import BandChoice
from ._scale import is_skewed
from ._style import OKABE_ITO, QUANTILE_NOTE, paper_style, tidy_ticks
from .curves import plot_pd
from .ice import plot_ice
from .panels import plot_pd_panels
from .statistics import plot_h_statistic, plot_heterogeneity, plot_importance
from .surfaces import plot_pd_contour
from .target import plot_target
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
    "plot_target",
    "tidy",
    "tidy_ticks",
]
