"""pdpboot: bootstrap confidence bands for partial dependence and ICE."""

__version__ = "0.1.0"

from ._pd import partial_dependence  # noqa: E402
from .bands import confidence_bands  # noqa: E402
from .bootstrap import bootstrap_partial_dependence  # noqa: E402
from .heterogeneity import ice_heterogeneity  # noqa: E402
from .interaction import HStatisticTestResult, h_statistic, h_statistic_test  # noqa: E402
from .io import load, save  # noqa: E402
from .plotting import (  # noqa: E402
    plot_h_statistic,
    plot_heterogeneity,
    plot_partial_dependence,
    plot_pd,
    plot_pd_contour,
)
from .schema import get_node  # noqa: E402

__all__ = [
    "bootstrap_partial_dependence",
    "confidence_bands",
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
