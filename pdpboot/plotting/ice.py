"""ICE curves of a fitted model, without storing ICE in a result first: :func:`plot_ice`."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, Literal

import numpy as np
import xarray as xr

from ..bootstrap import partial_dependence
from ..grid import Grid
from ..schema import get_node
from ._data import BandChoice
from .curves import plot_pd

__all__ = ["plot_ice"]


def plot_ice(
    estimator: Any,
    X: Any,
    feature: Hashable,
    *,
    result: xr.DataTree | None = None,
    ice: int | bool = 50,
    centered: bool = False,
    band: BandChoice = "auto",
    output: Hashable | None = None,
    response_method: str = "auto",
    ax: Any = None,
    scale: Literal["auto", "linear", "quantile"] = "auto",
    style: Mapping[str, Mapping | bool] | None = None,
):
    """Plot ICE curves of a fitted model (and its PD), computed now: no result with stored ICE needed.

    Without ``result`` the curves and the PD are computed on a 50-point grid
    between the 5th and 95th percentile; with ``result`` (a bootstrap of the
    same model on the same data) on the result's grid, drawn under its PD
    estimate and band.

    Parameters
    ----------
    estimator : fitted estimator
        The model (usually the one fitted on all of ``X``).
    X : DataFrame or array of shape (n_rows, n_columns)
        The rows whose ICE curves are drawn (pass a subset to choose them).
    feature : str or int
        The feature.
    result : xarray.DataTree, optional
        A pdpboot result holding ``feature``: its grid, categorical flag, PD estimate and bands are used.
    ice : int or True, default 50
        How many rows get a curve (a random subset, the same on every call), or True for every row.
    centered : bool, default False
        Anchor every curve (and the PD) at the first grid value, as in :func:`plot_pd`.
    band : bool or {"auto", "pointwise", "simultaneous"}, default "auto"
        The result's bands to draw (none without ``result``).
    output : label, optional
        The class or target drawn, as in :func:`plot_pd`.
    response_method : {"auto", "predict_proba", "decision_function", "predict"}, default "auto"
        What is averaged, as in :func:`pdpboot.partial_dependence`.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made if omitted.
    scale, style
        As in :func:`plot_pd`.

    Returns
    -------
    matplotlib.axes.Axes
        x = the feature's grid, y = the response; grey ICE curves under the PD (and its band).

    See Also
    --------
    plot_pd : The same drawing from a result that stored ICE (``statistics={"ice": n}`` of the bootstrap).
    pdpboot.partial_dependence : Computes the curves drawn here (``kind="both"``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LinearRegression
    >>> import pdpboot
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    >>> model = LinearRegression().fit(X, X["a"] + rng.normal(size=60))
    >>> ax = pdpboot.plot_ice(model, X, "a", ice=20)
    >>> len(ax.collections[0].get_segments())
    20
    """
    if isinstance(ice, bool) and not ice:
        raise ValueError("plot_ice draws ICE curves: ice must be True or a positive number of rows; got False.")
    if not isinstance(ice, bool) and (not isinstance(ice, (int, np.integer)) or ice < 1):
        raise ValueError(f"ice must be True or a positive number of rows; got {ice!r}.")
    settings: dict = {}
    node = None
    if result is not None:
        node = get_node(result, feature)
        name = str(node.attrs["features"][0])
        categorical = bool(np.atleast_1d(node.attrs.get("categorical", [0]))[0])
        settings = {"grid": Grid(custom_values={name: node[name].values},
                                 categorical_features=[name] if categorical else None)}
        if result.attrs.get("task") != "classification":  # a regressor's outputs are named after the target
            settings["target_names"] = [str(v) for v in node["output"].values.tolist()]
    one = partial_dependence(estimator, X, [feature], kind="both", max_ice_instances=None if ice is True else int(ice),
                             response_method=response_method, rng=0, **settings)
    computed = next(iter(one.children.values()))
    if node is None:
        drawn = computed
    else:  # the result's estimate and bands, with the ICE curves of the model on its grid
        ds = node.to_dataset()
        if "ice" in ds:
            ds = ds.drop_vars([v for v in ds.data_vars if "instance" in ds[v].dims]).drop_dims("instance")
        ice_da = computed["ice"]
        if list(ice_da["output"].values) != list(ds["output"].values):
            raise ValueError(f"The model's outputs {list(ice_da['output'].values)} differ from the result's "
                             f"{list(ds['output'].values)}; pass the model the result was made with.")
        ds["ice"] = ice_da.variable if ice_da.dims == ("instance", "output", str(ds.attrs["features"][0])) \
            else ice_da.transpose("instance", "output", ...).variable
        ds = ds.assign_coords(instance=ice_da["instance"].values)
        drawn = xr.DataTree(ds, name=node.name)
        drawn.attrs = {**result.attrs, **node.attrs}
    return plot_pd(drawn, feature if node is None else str(node.attrs["features"][0]), ax=ax,
                   band=band if node is not None else False, ice=True, centered=centered, output=output,
                   scale=scale, style=style)
