"""pdpboot: bootstrap confidence bands for partial dependence and ICE."""

from ._pd import partial_dependence
from ._version import __version__
from .bands import confidence_bands
from .bootstrap import bootstrap_partial_dependence
from .forest import forest_partial_dependence
from .heterogeneity import ice_heterogeneity
from .interaction import HStatisticTestResult, h_statistic, h_statistic_test
from .io import load, save
from .plotting import (
    plot_h_statistic,
    plot_heterogeneity,
    plot_partial_dependence,
    plot_pd,
    plot_pd_contour,
)
from .schema import get_node

__all__ = [
    "bootstrap_partial_dependence",
    "confidence_bands",
    "forest_partial_dependence",
    "get_node",
    "h_statistic",
    "h_statistic_test",
    "HStatisticTestResult",
    "ice_heterogeneity",
    "load",
    "partial_dependence",
    "plot_h_statistic",
    "plot_heterogeneity",
    "plot_partial_dependence",
    "plot_pd",
    "plot_pd_contour",
    "save",
    "__version__",
]
