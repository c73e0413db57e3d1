"""Regional PD curves with their bands, one colour per region."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import xarray as xr

from ..schema import node_name
from ._common import OKABE_ITO, new_ax

_COLOURS = [OKABE_ITO[c] for c in ("blue", "orange", "green", "vermillion", "purple", "sky_blue", "black")]


def plot_regional_pd(result: xr.DataTree, feature: str | None = None, *, ax: Any = None,
                     output: Hashable | None = None, centred: bool = False, legend: bool = True):
    """The PD of each region of a :func:`pdpboot.regional_partial_dependence` result with its band (after
    :func:`pdpboot.confidence_bands`); the legend gives each region's definition and share of rows, the
    title how often the refits chose the first split's feature.

    Parameters
    ----------
    result : xarray.DataTree
    feature : str, optional
        The node to draw (default: the first).
    ax : matplotlib Axes, optional
    output : optional
        The output to draw (default: the last, e.g. the positive class).
    centred : bool
        Draw ``pd_centered`` (each curve minus its value at the first grid point, as the regions' ICE
        heterogeneity sees them) instead of ``pd``.
    legend : bool

    Returns
    -------
    matplotlib.axes.Axes
    """
    nodes = [n for n in result.children.values() if n.attrs.get("effect") == "regional_pd"]
    if not nodes:
        raise ValueError("plot_regional_pd needs a result of pdpboot.regional_partial_dependence.")
    node = nodes[0] if feature is None else result[node_name([feature])]
    ds, name = node.to_dataset(), node.attrs["features"][0]
    ds = ds.sel(output=ds["output"].values[-1] if output is None else output)
    ax = new_ax(ax)
    x, var = ds[name].values, "pd_centered" if centred else "pd"
    if var not in ds:
        raise ValueError("centred=True draws pd_centered: add it with pdpboot.confidence_bands(result).")
    for r, region in enumerate(ds["region"].values):
        colour = _COLOURS[r % len(_COLOURS)]
        label = f"{region} ({float(ds['region_share'][r]):.0%} of rows)"
        ax.plot(x, ds[var].isel(region=r).values, color=colour, label=label, lw=1.8)
        if f"{var}_band" in ds:
            band = ds[f"{var}_band"].isel(region=r)
            ax.fill_between(x, band.sel(ci_bound="lower").values, band.sel(ci_bound="upper").values,
                            color=colour, alpha=0.25, lw=0)
    first = int(ds["split_feature"].values[0])
    if first >= 0:
        chosen = ds["split_frequency"].isel(split=0)
        top = str(chosen["candidate"].values[int(np.argmax(chosen.values))])
        ax.set_title(f"first split: {top} in {float(chosen.max()):.0%} of {ds.sizes['resample']} refits", fontsize=9)
    kind = "simultaneous" if f"{var}_band" in ds and ds[f"{var}_band"].attrs.get("simultaneous") else "pointwise"
    ax.set_xlabel(name)
    ax.set_ylabel(f"regional {'centred ' if centred else ''}PD{f' ({kind} band)' if f'{var}_band' in ds else ''}")
    if legend:
        ax.legend(fontsize=7, frameon=False)
    return ax
