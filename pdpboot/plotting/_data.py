"""Reading a result for plotting: node look-up, output selection, axis labels and bands."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import xarray as xr

from ..schema import get_node

BandChoice = bool | Literal["auto", "pointwise", "simultaneous"]


def as_names(features: Any) -> list[str]:
    if isinstance(features, np.ndarray):
        features = features.tolist()
    if isinstance(features, str) or not isinstance(features, Sequence):
        return [str(features)]
    return [str(f) for f in features]


def lookup(result: Any, features: Any) -> tuple[xr.Dataset, dict, xr.DataTree | None]:
    """The node dataset of ``features``, its attrs merged over the root's, and the root (or None)."""
    wanted = as_names(features)
    if isinstance(result, xr.DataTree):
        if "features" in result.attrs:
            have = as_names(result.attrs["features"])
            if have != wanted:
                raise ValueError(
                    f"This node holds features {tuple(have)}, not {tuple(wanted)}; pass the whole result "
                    "tree to look the node up, or the node of the features you want."
                )
            node = result
        else:
            node = get_node(result, wanted if len(wanted) > 1 else wanted[0])
        root = node.root
        attrs = {**root.attrs, **node.attrs} if root is not node else dict(node.attrs)
        return node.to_dataset(), attrs, (root if root is not node else None)
    if isinstance(result, xr.Dataset):
        attrs = dict(result.attrs)
        if "features" in attrs and as_names(attrs["features"]) != wanted:
            raise ValueError(
                f"This Dataset holds features {tuple(as_names(attrs['features']))}, not {tuple(wanted)}."
            )
        missing = [f for f in wanted if f not in result.dims]
        if missing:
            raise ValueError(
                f"The Dataset has no dimension for feature(s) {missing}; dims: {list(result.dims)}."
            )
        attrs["features"] = wanted
        return result, attrs, None
    raise TypeError(
        f"result must be a pdpboot result (xarray.DataTree), one of its nodes, or a node's Dataset; "
        f"got {type(result).__name__}."
    )


def is_categorical(ds: xr.Dataset, attrs: Mapping, feature: str, position: int) -> bool:
    flags = attrs.get("categorical")
    if flags is not None:
        flags = np.atleast_1d(np.asarray(flags))
        if len(flags) > position:
            return bool(flags[position])
    return not np.issubdtype(ds[feature].dtype, np.number)


def deciles(attrs: Mapping, position: int) -> np.ndarray:
    values = attrs.get("deciles")
    if values is None:
        return np.empty(0)
    values = np.asarray(values, dtype=float).ravel()
    chunk = values[9 * position : 9 * (position + 1)]
    return chunk[np.isfinite(chunk)]


def is_classification(attrs: Mapping) -> bool:
    response = attrs.get("response")
    return attrs.get("task") == "classification" or response in ("predict_proba", "decision_function")


def select_output(ds: xr.Dataset, attrs: Mapping, output: Hashable | None) -> tuple[xr.Dataset, Any, int]:
    """Drop the ``output`` dim by selecting one label; returns (dataset, label, number of outputs)."""
    if "output" not in ds.dims:
        return ds, None, 1
    labels = ds["output"].values.tolist()
    if output is None:
        if len(labels) == 1:
            index = 0
        elif len(labels) == 2 and is_classification(attrs):
            index = 1  # the positive class of a binary classifier
        else:
            raise ValueError(
                f"This result has {len(labels)} outputs {labels}; choose one to plot with output=<label>."
            )
    else:
        matches = [i for i, lab in enumerate(labels) if lab == output]
        matches = matches or [i for i, lab in enumerate(labels) if str(lab) == str(output)]
        if not matches:
            raise ValueError(f"output={output!r} is not one of this result's outputs {labels}.")
        index = matches[0]
    return ds.isel(output=index), labels[index], len(labels)


def response_label(attrs: Mapping, label: Any, n_outputs: int) -> str:
    """The y-axis label of a PD: what is averaged, and whose PD it is.

    A result whose header says ``target = "dgp"`` (the debiased estimator) is the data's PD, not the
    fitted model's: its label says so instead of "Predicted ...".

    >>> response_label({"target_name": "Price"}, "Price", 1)
    'Predicted Price'
    >>> response_label({"target_name": "Price", "target": "dgp"}, "Price", 1)
    "Price (the data's PD)"
    """
    text = _learner_label(attrs, label, n_outputs)
    if attrs.get("target") == "dgp":
        return f"{text.removeprefix('Predicted ')} (the data's PD)"
    return text


def _learner_label(attrs: Mapping, label: Any, n_outputs: int) -> str:
    response = attrs.get("response")
    if response == "decision_function":
        return f"Decision function (class = {label})" if label is not None else "Decision function"
    if response == "predict_proba" or (response is None and attrs.get("task") == "classification"):
        return f"P(class = {label})"
    target = attrs.get("target_name")
    if isinstance(target, str) and target and n_outputs == 1:
        return f"Predicted {target}"
    if isinstance(label, str) and label:
        return f"Predicted {label}"
    return "Partial dependence"


def array_of(da: xr.DataArray, dims: Sequence[str], what: str) -> np.ndarray:
    extra = set(da.dims) - set(dims)
    if extra:
        raise ValueError(f"{what} has unexpected dimensions {sorted(map(str, extra))} besides {list(dims)}.")
    return np.asarray(da.transpose(*dims).values, dtype=float)


def band_bounds(band: xr.DataArray, dims: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    band = band.transpose("ci_bound", *dims)
    return (np.asarray(band.sel(ci_bound="lower").values, dtype=float),
            np.asarray(band.sel(ci_bound="upper").values, dtype=float))


def _band_label(band: xr.DataArray, attrs: Mapping, n_resamples: int | None, *, simultaneous: bool,
                short: bool, noun: str = "band") -> str:
    level = band.attrs.get("confidence_level")
    prefix = f"{100 * float(level):g} % " if level is not None else ""
    if simultaneous:
        text = f"{prefix}simultaneous {noun}"
    else:
        method = band.attrs.get("method")
        text = f"{prefix}{method} {noun}" if method else f"{prefix}pointwise {noun}"
    if not short and band.attrs.get("scale") == "logit":  # a probability PD's band formed on the logit scale
        text += " (logit scale)"
    b = band.attrs.get("n_resamples", attrs.get("n_resamples", n_resamples))
    if not short and b is not None and int(b) > 0:  # B = 0: a one-fit band (forest IJ, debiased)
        text += f", B = {int(b)}"
    return text


def find_bands(ds: xr.Dataset, attrs: Mapping, var: str, band: BandChoice,
                noun: str = "band") -> list[tuple[xr.DataArray, bool, str]]:
    """Bands of ``var`` to draw: list of (band, is_simultaneous, legend label), pointwise first."""
    if band is False or band is None:
        return []
    if band not in (True, "auto", "pointwise", "simultaneous"):
        raise ValueError(f"band must be True, False, 'auto', 'pointwise' or 'simultaneous'; got {band!r}.")
    found: dict[bool, xr.DataArray] = {}
    for name in (f"{var}_band", f"{var}_band_pointwise", f"{var}_band_simultaneous"):
        if name in ds.data_vars:
            da = ds[name]
            sim = bool(da.attrs.get("simultaneous", name.endswith("_simultaneous")))
            found.setdefault(sim, da)
    if band == "pointwise":
        found.pop(True, None)
    elif band == "simultaneous":
        found.pop(False, None)
    if not found:
        if band == "auto":
            return []
        hint = (
            f"run pdpboot.confidence_bands(result{', simultaneous=True' if band == 'simultaneous' else ''}) "
            f"first, or pass band=False"
        )
        kind = "" if band is True else f"{band} "
        raise ValueError(f"No {kind}band for {var!r} in this result ({var!r}_band missing); {hint}.")
    n_res = ds.sizes.get("resample")
    both = len(found) == 2
    out = []
    for sim in (False, True):
        if sim in found:
            short = both and sim
            out.append((found[sim], sim, _band_label(found[sim], attrs, n_res, simultaneous=sim, short=short,
                                                        noun=noun)))
    return out


def curve_bands(ds: xr.Dataset, attrs: Mapping, var: str, band: BandChoice, dim: str) -> list:
    """Bands of the curve ``var`` over ``dim`` as a list of ((lower, upper), is_simultaneous, label)."""
    return [(band_bounds(b, [dim]), sim, lab) for b, sim, lab in find_bands(ds, attrs, var, band)]
