"""Any result as one long ("tidy") table, and a faceted seaborn figure drawn from it.

:func:`tidy` turns the nodes of a result (PD, ALE, ICE statistics, from any uncertainty method) into
one row per (effect, feature(s), grid value(s), output) with the estimate, its band and SE and the
band's method: the shape pandas, seaborn, R's ggplot2 and spreadsheets read directly.
:func:`plot_facets` draws one panel per feature from that table.  Neither computes a statistic.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

#: Columns of :func:`tidy`'s table, in order.
TIDY_COLUMNS = ("effect", "feature", "feature_2", "value", "value_2", "output", "estimate", "lower", "upper",
                "se", "method", "confidence_level")
_DERIVED = ("_resamples", "_band", "_band_pointwise", "_band_simultaneous", "_se", "_bias")


def _effects(ds: xr.Dataset, features: list[str]) -> list[str]:
    """Variables of a node laid out over (output, ``*features``) that are estimates (not bands, SEs, ...)."""
    wanted = {"output", *features}
    return [str(v) for v in ds.data_vars
            if set(ds[v].dims) == wanted and not str(v).endswith(_DERIVED)]


def _method(band: xr.DataArray | None) -> str | None:
    method = None if band is None else band.attrs.get("method")
    return None if method is None else f"{method}, {'simultaneous' if band.attrs.get('simultaneous') else 'pointwise'}"


def tidy(result: xr.DataTree, *, effects=None) -> pd.DataFrame:
    """One row per effect, feature(s), grid value(s) and output of a result, with estimate and band.

    Parameters
    ----------
    result : xarray.DataTree
        A result of :func:`pdpboot.bootstrap_partial_dependence`, :func:`pdpboot.bootstrap_ale` or
        :func:`pdpboot.partial_dependence`, with or without bands.
    effects : list of str, optional
        Variables to keep (e.g. ``["pd"]``); default: every estimate laid out over the grid (``pd``,
        ``pd_centered``, ``ale``, ``ice_sd``, ...).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`TIDY_COLUMNS`; ``feature_2``/``value_2`` are None in 1-D nodes, ``lower``,
        ``upper`` and ``se`` NaN and ``method`` (e.g. ``"percentile, pointwise"``) None without a band.

    Examples
    --------
    >>> import numpy as np, pandas as pd, pdpboot
    >>> from sklearn.linear_model import LinearRegression
    >>> X = pd.DataFrame({"a": np.arange(20.0), "b": np.arange(20.0) % 3})
    >>> res = pdpboot.partial_dependence(LinearRegression().fit(X, X.a), X, ["a"], grid=pdpboot.Grid(3))
    >>> pdpboot.tidy(res)[["effect", "feature", "value", "estimate"]].round(2)
      effect feature  value  estimate
    0     pd       a   0.41      0.41
    1     pd       a   9.50      9.50
    2     pd       a  18.59     18.59
    """
    frames = []
    for node in result.children.values():
        features = [str(f) for f in node.attrs["features"]]
        ds = node.to_dataset()
        for var in _effects(ds, features) if effects is None else [e for e in effects if e in ds]:
            est = ds[var].transpose("output", *features)
            band = ds.get(f"{var}_band")
            grids = np.meshgrid(*[np.arange(ds.sizes[f]) for f in features], indexing="ij")
            for o, output in enumerate(ds["output"].values.tolist()):
                frame = {"effect": var, "feature": features[0],
                         "feature_2": features[1] if len(features) == 2 else None,
                         "value": ds[features[0]].values[grids[0].ravel()],
                         "value_2": ds[features[1]].values[grids[1].ravel()] if len(features) == 2 else None,
                         "output": output, "estimate": est.values[o].ravel()}
                if band is not None:
                    b = band.transpose("ci_bound", "output", *features)
                    frame["lower"] = b.sel(ci_bound="lower").values[o].ravel()
                    frame["upper"] = b.sel(ci_bound="upper").values[o].ravel()
                else:
                    frame["lower"] = frame["upper"] = np.nan
                se = ds.get(f"{var}_se")
                frame["se"] = se.transpose("output", *features).values[o].ravel() if se is not None else np.nan
                frame["method"] = _method(band)
                level = band.attrs.get("confidence_level", band.attrs.get("level")) if band is not None else None
                frame["confidence_level"] = np.nan if level is None else float(level)
                frames.append(pd.DataFrame(frame))
    if not frames:
        return pd.DataFrame(columns=list(TIDY_COLUMNS))
    out = pd.concat(frames, ignore_index=True)
    for column in ("value", "value_2"):
        values = out[column]
        if values.dtype == object and values.map(lambda v: isinstance(v, (int, float, np.number))).all():
            out[column] = values.astype(float)
    return out[list(TIDY_COLUMNS)]


def plot_facets(data, *, effect: str = "pd", output=None, col_wrap: int = 3, height: float = 2.6,
                sharey: bool = True):
    """One panel per feature of a 1-D effect: estimate and band, drawn with seaborn from :func:`tidy`.

    Parameters
    ----------
    data : xarray.DataTree or pandas.DataFrame
        A result, or :func:`tidy`'s table of one.
    effect : str
        The variable drawn (``"pd"``, ``"ale"``, ``"pd_centered"``, ...).
    output : optional
        The output drawn (default: the first).
    col_wrap, height, sharey
        Passed to :class:`seaborn.FacetGrid`.

    Returns
    -------
    seaborn.FacetGrid
        Numeric features as a line with a shaded band, categorical ones as points with interval bars.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    categorical = set()
    if isinstance(data, xr.DataTree):  # levels drawn as points even when they are numbers
        categorical = {str(node.attrs["features"][0]) for node in data.children.values()
                       if len(node.attrs["features"]) == 1 and any(np.atleast_1d(node.attrs.get("categorical", [])))}
    frame = tidy(data) if isinstance(data, xr.DataTree) else data
    frame = frame[(frame["effect"] == effect) & frame["feature_2"].isna()]
    if frame.empty:
        raise ValueError(f"No 1-D {effect!r} rows to draw.")
    output = frame["output"].iloc[0] if output is None else output
    frame = frame[frame["output"] == output]
    grid = sns.FacetGrid(frame, col="feature", col_wrap=min(col_wrap, frame["feature"].nunique()),
                         height=height, sharex=False, sharey=sharey)

    def draw(data, **kwargs):
        ax = plt.gca()
        x = data["value"].to_numpy()
        estimate, lower, upper = data["estimate"], data["lower"], data["upper"]
        numeric = np.issubdtype(np.asarray(list(x)).dtype, np.number) and data["feature"].iloc[0] not in categorical
        color = kwargs.get("color")
        if numeric:
            ax.plot(x, estimate, color=color)
            if lower.notna().any():
                ax.fill_between(x.astype(float), lower, upper, color=color, alpha=0.25, linewidth=0)
        else:
            pos = np.arange(len(x))
            if lower.notna().any():  # the band as stored (an estimate outside it stays visible)
                ax.vlines(pos, lower, upper, color=color, linewidth=2, alpha=0.6)
            ax.plot(pos, estimate, "o", color=color)
            ax.set_xticks(pos, [str(v) for v in x], rotation=90 if len(x) > 6 else 0)

    grid.map_dataframe(draw)
    grid.set_titles("{col_name}")
    grid.set_axis_labels("", f"{effect}" + (f" ({output})" if frame["output"].nunique() else ""))
    method = frame["method"].dropna()
    if not method.empty:
        grid.figure.suptitle(f"{effect} with {method.iloc[0]} bands")
    grid.tight_layout()  # room for the title and the y label inside the figure, as saved
    return grid


__all__ = ["TIDY_COLUMNS", "plot_facets", "tidy"]
