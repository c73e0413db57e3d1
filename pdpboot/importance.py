"""PD-based feature importance with bootstrap intervals: :func:`pd_importance`."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from .engine.ice_stats import pd_flatness
from .engine.intervals import POINTWISE_METHODS, pointwise_interval, standard_error
from .schema import feature_nodes

#: Columns of :func:`pd_importance`'s table, in order.
IMPORTANCE_COLUMNS = ("feature", "output", "importance", "lower", "upper", "se", "measure", "rank", "method",
                      "confidence_level", "n_resamples")


def pd_importance(
    result: xr.DataTree,
    features: Sequence[Hashable] | None = None,
    *,
    variable: str = "pd",
    confidence_level: float = 0.95,
    method: str = "percentile",
) -> pd.DataFrame:
    """PD-based feature importance (Greenwell et al. 2018) of every 1-D node, with a bootstrap interval.

    The SD of the PD over the grid (numeric features) or its range / 4 (categorical ones), computed on
    the estimate and on every resample's curve.

    Parameters
    ----------
    result : xarray.DataTree
        A pdpboot result with 1-D nodes (a one-fit result gets no interval).
    features : list of str, optional
        The features to rank; default: every 1-D node.
    variable : str, default "pd"
        The curve measured (``"ale"`` for an ALE result).
    confidence_level : float, default 0.95
        Level of the intervals.
    method : {"percentile", "basic", "normal", "bc"}, default "percentile"
        The bootstrap interval of the importance.

    Returns
    -------
    pandas.DataFrame
        One row per feature and output, columns :data:`IMPORTANCE_COLUMNS` (``importance``,
        ``lower``, ``upper``, ``se``, ``measure``, ``rank`` within an output, ...), sorted by output,
        then rank.

    Notes
    -----
    An importance is never negative, so a feature without effect has an interval above 0: compare
    features, or read the PD's simultaneous band for whether there is an effect at all.

    Examples
    --------
    >>> import numpy as np, pandas as pd, pdpboot
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80)})
    >>> y = 2 * X["a"] + 0.1 * X["b"] + rng.normal(size=80)
    >>> res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a", "b"], n_resamples=20,
    ...                                            grid=pdpboot.Grid(10), rng=0,
    ...                                            execution=pdpboot.Execution(progress=False))
    >>> pdpboot.pd_importance(res)[["feature", "rank"]].to_numpy().tolist()
    [['a', 1], ['b', 2]]
    """
    if not isinstance(result, xr.DataTree):
        raise TypeError(f"pd_importance needs a pdpboot result (an xarray.DataTree); got {type(result).__name__}.")
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be in (0, 1); got {confidence_level!r}.")
    if method not in POINTWISE_METHODS or method == "bca":
        raise ValueError(f"method must be 'percentile', 'basic', 'normal' or 'bc'; got {method!r}.")
    nodes = [n for n in feature_nodes(result) if len(n.attrs["features"]) == 1]
    if features is not None:
        wanted = [str(f) for f in features]
        have = {str(n.attrs["features"][0]): n for n in nodes}
        missing = [f for f in wanted if f not in have]
        if missing:
            raise ValueError(f"pd_importance: no 1-D node for {missing}; the result has {sorted(have)}.")
        nodes = [have[f] for f in wanted]
    if not nodes:
        raise ValueError("pd_importance needs 1-D nodes; this result has none.")
    rows = []
    for node in nodes:
        name = str(node.attrs["features"][0])
        ds = node.to_dataset()
        if variable not in ds:
            raise ValueError(f"The node of {name!r} has no {variable!r} variable; variables: {sorted(map(str, ds))}.")
        categorical = bool(np.atleast_1d(node.attrs.get("categorical", [0]))[0])
        est = pd_flatness(ds[variable].transpose("output", name).values, categorical=categorical)
        res_name = f"{variable}_resamples"
        if res_name in ds and ds.sizes.get("resample", 0) > 1:
            res = pd_flatness(ds[res_name].transpose("resample", "output", name).values, categorical=categorical)
            lower, upper = pointwise_interval(est, res, level=confidence_level, method=method)
            se = standard_error(res)
            n_valid = np.sum(np.isfinite(res), axis=0)
        else:
            lower = upper = se = np.full(est.shape, np.nan)
            n_valid = np.zeros(est.shape, dtype=int)
        for o, output in enumerate(ds["output"].values.tolist()):
            rows.append({"feature": name, "output": output, "importance": float(est[o]), "lower": float(lower[o]),
                         "upper": float(upper[o]), "se": float(se[o]),
                         "measure": "range/4" if categorical else "sd",
                         "method": method if n_valid[o] else None, "confidence_level": confidence_level,
                         "n_resamples": int(n_valid[o])})
    frame = pd.DataFrame(rows)
    frame["rank"] = frame.groupby("output", sort=False)["importance"].rank(ascending=False, method="min").astype(int)
    order = {o: i for i, o in enumerate(dict.fromkeys(frame["output"]))}
    frame = frame.sort_values(["output", "rank"], key=lambda c: c.map(order) if c.name == "output" else c,
                              kind="stable")
    return frame.reset_index(drop=True)[list(IMPORTANCE_COLUMNS)]


__all__ = ["IMPORTANCE_COLUMNS", "pd_importance"]
