"""Uncertainty strategies by name: every way the package puts a band on an effect, in one table.

A strategy is a public function ``f(estimator, X, y, features, **options) ->
xarray.DataTree`` whose result follows the schema of :mod:`pdpboot.schema`:
the effect's variables, and either ``<name>_resamples`` (bands later, by
:func:`pdpboot.confidence_bands`) or ``<name>_se`` and ``<name>_band`` filled
directly (written with the shared band writer,
:func:`pdpboot._assemble.band_variables`); its header
(:class:`pdpboot.header.ResultHeader`) records ``uncertainty`` and ``target``
(``"learner"``: the PD of the learner fitted to data of this size;
``"dgp"``: the PD of the data-generating process).  Adding a strategy is its
own module plus one row of :data:`STRATEGIES`; callers (the command line, the
experiments) choose one by name with :func:`get_strategy`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["STRATEGIES", "Strategy", "get_strategy"]


@dataclass(frozen=True)
class Strategy:
    """One uncertainty strategy: where its function lives and what its bands are about.

    Attributes
    ----------
    module, function : str
        ``pdpboot.<module>.<function>``, imported on first use.
    target : {"learner", "dgp"}
        The PD its bands are about (recorded in the result's header).
    resamples : bool
        Whether its result holds ``_resamples`` (bands by :func:`pdpboot.confidence_bands`)
        rather than finished ``_se``/``_band`` variables.
    """

    module: str
    function: str
    target: str = "learner"
    resamples: bool = True

    def load(self) -> Callable:
        return getattr(importlib.import_module(f"pdpboot.{self.module}"), self.function)


#: name -> strategy; a new strategy is one row here (its module is imported only when used)
STRATEGIES: dict[str, Strategy] = {
    "bootstrap": Strategy("bootstrap", "bootstrap_partial_dependence"),
    "debiased": Strategy("debiased", "debiased_partial_dependence", target="dgp", resamples=False),
}


def get_strategy(name: str) -> Callable:
    """The function of the strategy called ``name`` (see :data:`STRATEGIES`).

    Examples
    --------
    >>> get_strategy("bootstrap").__name__
    'bootstrap_partial_dependence'
    """
    if name not in STRATEGIES:
        raise ValueError(f"uncertainty={name!r} is not one of {sorted(STRATEGIES)}.")
    return STRATEGIES[name].load()
