"""pdpboot: bootstrap confidence bands for partial dependence and ICE.

The public names are imported on first use (PEP 562), so ``import pdpboot``
and the command line start fast and the NumPy layer (``pdpboot.engine``) can
be used without xarray.
"""

import importlib

from ._version import __version__

#: public name -> module that defines it
_PUBLIC = {
    "accumulated_local_effects": "ale",
    "binned_outcome": "heterogeneity",
    "bootstrap_ale": "ale",
    "bootstrap_partial_dependence": "bootstrap",
    "confidence_bands": "bands",
    "CoverageWarning": "caveats",
    "debiased_partial_dependence": "debiased",
    "DebiasedOptions": "debiased",
    "Execution": "options",
    "get_node": "schema",
    "Grid": "grid",
    "h_statistic": "interaction",
    "h_statistic_of_model": "interaction",
    "h_statistic_test": "interaction",
    "ice_heterogeneity": "heterogeneity",
    "load": "io",
    "partial_dependence": "bootstrap",
    "pd_importance": "interaction",
    "pd_variance_statistic": "interaction",
    "regional_partial_dependence": "regional",
    "regional_split_test": "regional",
    "Resampling": "options",
    "plot_h_statistic": "plotting",
    "plot_importance": "plotting",
    "plot_heterogeneity": "plotting",
    "plot_pd": "plotting",
    "plot_target": "plotting",
    "plot_ice": "plotting",
    "plot_pd_contour": "plotting",
    "plot_facets": "plotting",
    "plot_pd_panels": "plotting",
    "plot_regional_pd": "plotting",
    "save": "io",
    "start_workers": "bootstrap",
    "tidy": "plotting",
}

__all__ = [*_PUBLIC, "__version__"]


def __getattr__(name: str):
    if name in _PUBLIC:
        value = getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    try:  # a submodule used as an attribute (pdpboot.schema, ...)
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module 'pdpboot' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
