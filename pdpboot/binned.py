"""Rows and mean outcome per grid bin of a feature (PDPbox's "target plot"): :func:`binned_outcome`."""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import pandas as pd
import xarray as xr

from .schema import get_node

#: Columns of :func:`binned_outcome`'s table, in order.
BINNED_COLUMNS = ("value", "low", "high", "count", "output", "observed")


def bin_edges(grid: np.ndarray) -> np.ndarray:
    """Edges of the bins around numeric grid values: midpoints between neighbours, open outer ends.

    >>> bin_edges(np.array([0.0, 1.0, 3.0])).tolist()
    [-inf, 0.5, 2.0, inf]
    """
    grid = np.asarray(grid, dtype=float)
    return np.concatenate([[-np.inf], (grid[1:] + grid[:-1]) / 2, [np.inf]])


def binned_outcome(result: xr.DataTree, X, y, feature: Hashable) -> pd.DataFrame:
    """Rows and mean outcome per grid bin of ``feature``, beside a result's PD.

    Parameters
    ----------
    result : xarray.DataTree
        A pdpboot result with a 1-D node of ``feature``.
    X : pandas.DataFrame
        The data; ``X[feature]`` is binned.
    y : array-like of shape (n_rows,)
        The outcome: numbers (regression) or class labels (classification).
    feature : str
        The feature.

    Returns
    -------
    pandas.DataFrame
        One row per grid value and output, columns :data:`BINNED_COLUMNS`: ``value``, ``low``/``high``
        (edges at the midpoints between numeric grid values; NaN for levels), ``count``, ``output``
        and ``observed`` (the bin's mean of ``y``, or share of that class).

    Examples
    --------
    >>> import numpy as np, pandas as pd, pdpboot
    >>> from sklearn.linear_model import LinearRegression
    >>> X = pd.DataFrame({"a": np.arange(10.0)})
    >>> y = 2 * X["a"]
    >>> res = pdpboot.partial_dependence(LinearRegression().fit(X, y), X, ["a"],
    ...                                  grid=pdpboot.Grid(custom_values={"a": [0.0, 5.0, 9.0]}))
    >>> binned_outcome(res, X, y, "a")[["value", "count", "observed"]].to_numpy().tolist()
    [[0.0, 3.0, 2.0], [5.0, 4.0, 9.0], [9.0, 3.0, 16.0]]
    """
    node = get_node(result, feature)
    names = [str(f) for f in node.attrs["features"]]
    if len(names) != 1:
        raise ValueError(f"binned_outcome needs a 1-D node; {tuple(names)} is a pair.")
    name = names[0]
    if not isinstance(X, pd.DataFrame) or name not in X.columns:
        raise ValueError(f"X must be a DataFrame with the column {name!r} (the rows the result was computed on).")
    column = X[name]
    y = pd.Series(np.asarray(y), index=column.index)
    if len(y) != len(column):
        raise ValueError(f"y has {len(y)} values but X has {len(column)} rows.")
    missing = int(pd.isna(y).sum())
    if missing:  # they would count as rows of no class / NaN means (class shares biased towards 0)
        raise ValueError(f"y has {missing} missing value(s): each bin's observed outcome needs every row's outcome; "
                         "pass the rows that have one (keep = y.notna(); X[keep], y[keep]).")
    grid = node[name].values
    categorical = bool(np.atleast_1d(node.attrs.get("categorical", [0]))[0])
    if categorical:
        as_text = {str(v): i for i, v in enumerate(grid.tolist())}
        which = column.map(lambda v: as_text.get(str(v), -1) if pd.notna(v) else -1).to_numpy()
        low = high = np.full(len(grid), np.nan)
    else:
        edges = bin_edges(grid)
        values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
        which = np.where(np.isnan(values), -1, np.searchsorted(edges, values, side="right") - 1)
        low, high = edges[:-1], edges[1:]
    counts = np.bincount(which[which >= 0], minlength=len(grid))
    outputs = node["output"].values.tolist()
    root = node.root.attrs
    classification = root.get("task") == "classification" or root.get("response") in ("predict_proba",
                                                                                       "decision_function")
    rows = []
    for output in outputs:
        if classification:
            hits = (y.astype(str) == str(output)).to_numpy(dtype=float)
        else:
            hits = pd.to_numeric(y, errors="coerce").to_numpy(dtype=float)
            if np.isnan(hits).any():
                bad = y[np.isnan(hits)].iloc[0]
                raise ValueError(f"y holds values that are not numbers (e.g. {bad!r}) but the result is a "
                                 "regression's; pass the numeric outcome the model was fitted on.")
        sums = np.bincount(which[which >= 0], weights=hits[which >= 0], minlength=len(grid))
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        for i, value in enumerate(grid.tolist()):
            rows.append({"value": value, "low": float(low[i]), "high": float(high[i]), "count": int(counts[i]),
                         "output": output, "observed": float(observed[i])})
    return pd.DataFrame(rows, columns=list(BINNED_COLUMNS))


__all__ = ["BINNED_COLUMNS", "bin_edges", "binned_outcome"]
