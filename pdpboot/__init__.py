"""pdpboot: bootstrap confidence bands for partial dependence and ICE.

The public names are imported on first use (PEP 562), so ``import pdpboot`` and the
``pdpboot --help`` / ``--version`` commands do not import NumPy, xarray or scikit-learn.
"""

import importlib

from ._version import __version__

#: Public name -> module that defines it.
_EXPORTS = {
    "partial_dependence": "._pd",
    "confidence_bands": ".bands",
    "bootstrap_partial_dependence": ".bootstrap",
    "ice_heterogeneity": ".heterogeneity",
    "HStatisticTestResult": ".interaction",
    "h_statistic": ".interaction",
    "h_statistic_test": ".interaction",
    "load": ".io",
    "save": ".io",
    "plot_h_statistic": ".plotting",
    "plot_heterogeneity": ".plotting",
    "plot_partial_dependence": ".plotting",
    "plot_pd": ".plotting",
    "plot_pd_contour": ".plotting",
    "plot_pd_panels": ".plotting",
    "get_node": ".schema",
}

__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    try:  # a submodule used as an attribute (pdpboot.schema, ...)
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
