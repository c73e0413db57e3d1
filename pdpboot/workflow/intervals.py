"""The numbers summary.md reports, each with an interval: PD ranges, flatness, level contrasts.

:func:`interval_method` decides which interval a printed statistic gets (:data:`PREFERRED`);
:class:`IntervalCells` prints it, flagging (and explaining under the table) an interval that does
not contain its estimate or a contrast of levels with fewer than :data:`MIN_LEVEL_ROWS` rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from .. import confidence_bands, get_node
from ..engine.intervals import POINTWISE_METHODS
from .text import md, num

#: Interval methods per statistic, best first; the first one confidence_bands offers is used.  Bounded
#: statistics (ranges, variance indices, H²) get the percentile interval ("basic" would reflect them below 0;
#: see the validation page of the documentation); signed ones use the run's --band.
PREFERRED = {
    "pd_range": ("percentile",),
    "ale_range": ("percentile",),
    "heterogeneity_index": ("percentile",),
    "pdvi": ("percentile",),
    "h2": ("percentile",),
    "contrast": (None,),  # None: the run's --band
    "flat": (None,),
}
#: Most level contrasts listed per feature in summary.md.
MAX_CONTRASTS = 12
#: Level contrasts whose levels have fewer training rows than this are flagged: the refits rarely hold
#: such a level, so its PD barely varies between them and the interval is too narrow or off-centre.
MIN_LEVEL_ROWS = 5
METHOD_TEXT = {"percentile": "percentiles of the refits", "bc": "bias-corrected percentiles",
               "bca": "bias-corrected and accelerated percentiles", "basic": "reflected percentiles",
               "normal": "estimate ± z × bootstrap SE"}


def excludes(estimate: float, lower: float, upper: float, scale: float | None = None) -> bool:
    """Whether ``[lower, upper]`` leaves out ``estimate`` by more than round-off.

    Round-off is what :func:`pdpboot.workflow.text.num` prints as 0: 1e-9 of ``scale`` (a statistic printed
    ``0 [0, 0]`` is not flagged).  A NaN bound excludes nothing.

    >>> excludes(1.0, 1.1, 1.2)
    True
    >>> excludes(2.7e-31, 8.1e-32, 1.3e-31, scale=1.0)
    False
    """
    if np.isnan(lower) or np.isnan(upper) or np.isnan(estimate):
        return False
    slack = 1e-9 * abs(scale) if scale is not None and np.isfinite(scale) else 0.0
    return not lower - slack <= estimate <= upper + slack


@dataclass
class IntervalCells:
    """Prints intervals for one summary and keeps the flags to explain under its tables."""

    flags: list[str] = field(default_factory=list)
    small: dict = field(default_factory=dict)  # feature -> {level: training rows} of levels below MIN_LEVEL_ROWS

    def cell(self, ds: xr.Dataset, var: str, output, scale: float | None = None, *, what: str,
             signed: bool = False) -> str:
        """``[lower, upper]`` of ``<var>_band``, flagged ``†`` when it does not contain the estimate.

        ``signed``: a statistic of either sign (a level contrast), whose refits are off-centre for other
        reasons than the upward bias of ranges and spreads.
        """
        band = ds[f"{var}_band"].sel(output=output)
        lower, upper = float(band.sel(ci_bound="lower")), float(band.sel(ci_bound="upper"))
        estimate = float(ds[var].sel(output=output))
        text = f"[{num(lower, scale)}, {num(upper, scale)}]"
        if not excludes(estimate, lower, upper, scale):
            return text
        side = "above" if lower > estimate else "below"
        reason = ""
        if f"{var}_resamples" in ds:
            values = ds[f"{var}_resamples"].sel(output=output).values
            values = values[np.isfinite(values)]
            beyond = int((values > estimate).sum() if side == "above" else (values < estimate).sum())
            reason = f" {beyond} of {values.size} refits gave a value {side} the estimate"
        if signed:
            why = ("the refitted models differ systematically from the full-data fit here (a level the refits rarely "
                   "hold, or a model that changes much between refits)")
        elif side == "above":
            why = ("noise in a refitted model inflates ranges and spreads, so this statistic's refits sit above the "
                   "full-data fit")
        else:
            why = ("the refitted models are flatter (or less spread) here than the full-data fit, so this "
                   "statistic's refits sit below it")
        self.flags.append(
            f"† {md(what)}: estimate {num(estimate, scale)}, interval {text} lies {side} it.{reason}: {why}; the "
            "interval shows where the refits' values lie, not bounds around the estimate.")
        return text + " †"

    def few_rows(self, counts: dict, levels: list[str], feature: str) -> str:
        """`` ‡`` when one of ``levels`` has fewer than :data:`MIN_LEVEL_ROWS` training rows (explained once
        per feature under the table)."""
        small = {lev: counts.get(lev, 0) for lev in levels if counts.get(lev, 0) < MIN_LEVEL_ROWS}
        if not small:
            return ""
        self.small.setdefault(feature, {}).update(small)
        return " ‡"

    def notes(self) -> list[str]:
        """The flags raised so far as Markdown paragraphs (and forget them)."""
        for feature, small in self.small.items():
            shown = ", ".join(f"{md(lev)} has {n} row{'s' if n != 1 else ''}" for lev, n in small.items())
            self.flags.append(f"‡ {md(feature)}: {shown} (fewer than {MIN_LEVEL_ROWS} training rows): most refits "
                              "hold such a level a few times or not at all, so the intervals of its contrasts are "
                              "unreliable.")
        out = [line for flag in self.flags for line in ("", flag)]
        self.flags, self.small = [], {}
        return out


def interval_method(statistic: str, config) -> str:
    """The interval method summary.md uses for ``statistic`` (see :data:`PREFERRED`)."""
    for method in PREFERRED.get(statistic, (None,)):
        if method is None:
            return config.band
        if method in POINTWISE_METHODS:
            return method
    return config.band


def band_tree(result: xr.DataTree, per_node: dict[str, xr.Dataset], config, statistic: str, *,
              simultaneous: bool = False) -> xr.DataTree:
    """Bands of extra statistics (``<s>`` / ``<s>_resamples`` per node) with the summary's method."""
    tree = xr.DataTree(children={name: xr.DataTree(ds) for name, ds in per_node.items()})
    tree.attrs = dict(result.attrs)
    return confidence_bands(tree, confidence_level=config.confidence_level,
                            method=interval_method(statistic, config), simultaneous=simultaneous)


def ranges(result: xr.DataTree, features: list[str], config, variable: str = "pd") -> dict[str, xr.Dataset]:
    """PD (or ALE, ``variable="ale"``) range (max - min over the grid) per feature, with its interval.

    Returns
    -------
    dict
        feature -> Dataset with ``pd_range`` (``output``) and ``pd_range_band`` (``ci_bound``, ``output``)
        (``ale_range``, ``ale_range_band`` for ALE).
    """
    nodes = {}
    name = f"{variable}_range"
    for f in features:
        ds = get_node(result, f).to_dataset()
        nodes[get_node(result, f).name] = xr.Dataset(
            {name: ds[variable].max(f) - ds[variable].min(f),
             f"{name}_resamples": ds[f"{variable}_resamples"].max(f) - ds[f"{variable}_resamples"].min(f)},
            attrs=get_node(result, f).attrs)
    if not nodes:
        return {}
    banded = band_tree(result, nodes, config, name)
    return {f: banded[get_node(result, f).name].to_dataset() for f in features}


def flat_within_noise(result: xr.DataTree, features: list[str], config, variable: str = "pd"
                      ) -> dict[str, xr.DataArray]:
    """Whether each feature's PD (or ALE) is indistinguishable from a flat line (a null reference for ranking).

    The PD minus its own mean over the grid is zero everywhere for a feature without effect; the
    feature is "flat within noise" when the simultaneous band of that centred curve (sup-t over the
    grid, at the run's confidence level, from the same refits) contains 0 at every grid value.  A
    noise feature's range is positive whatever the data (a range interval never contains 0); this
    asks instead whether its shape exceeds what refitting on resamples produces.

    Returns
    -------
    dict
        feature -> boolean DataArray (``output``): True = indistinguishable from flat; empty when
        there are too few resamples for a simultaneous band at this level.
    """
    nodes = {}
    for f in features:
        ds = get_node(result, f).to_dataset()
        nodes[get_node(result, f).name] = xr.Dataset(
            {"flat": ds[variable] - ds[variable].mean(f),
             "flat_resamples": ds[f"{variable}_resamples"] - ds[f"{variable}_resamples"].mean(f)},
            attrs=get_node(result, f).attrs)
    if not nodes:
        return {}
    try:
        banded = band_tree(result, nodes, config, "flat", simultaneous=True)
    except ValueError:  # too few resamples for a simultaneous band at this level
        return {}
    out = {}
    for f in features:
        band = banded[get_node(result, f).name].to_dataset()["flat_band"]
        lower, upper = band.sel(ci_bound="lower"), band.sel(ci_bound="upper")
        inside = ((lower <= 0) & (upper >= 0)) | (lower.isnull() | upper.isnull())
        out[f] = inside.all(f)
    return out


def contrasts(result: xr.DataTree, features: list[str], config) -> dict[str, xr.Dataset]:
    """Differences of the PD between each level and the first level, with intervals.

    For categorical (and two-valued) features: ``contrast`` (``level``, ``output``) = PD(level) -
    PD(first level) for every other level (at most :data:`MAX_CONTRASTS`), from the estimate and
    from each refit, with ``contrast_band`` (``ci_bound``, ``level``, ``output``).

    Returns
    -------
    dict
        feature -> Dataset; the reference level is in ``attrs["reference"]``.
    """
    nodes, refs = {}, {}
    for f in features:
        node = get_node(result, f)
        ds = node.to_dataset()
        levels = ds[f].values
        if len(levels) < 2:
            continue
        first = ds.isel({f: 0}, drop=True)
        others = ds.isel({f: slice(1, 1 + MAX_CONTRASTS)}).drop_vars(f)
        labels = [str(v) for v in levels[1:1 + MAX_CONTRASTS]]
        est = (others["pd"] - first["pd"]).rename({f: "level"}).assign_coords(level=labels)
        res = (others["pd_resamples"] - first["pd_resamples"]).rename({f: "level"}).assign_coords(level=labels)
        nodes[get_node(result, f).name] = xr.Dataset({"contrast": est, "contrast_resamples": res},
                                                     attrs={"features": [f]})
        refs[f] = str(levels[0])
    if not nodes:
        return {}
    banded = band_tree(result, nodes, config, "contrast")
    out = {}
    for f in refs:
        ds = banded[get_node(result, f).name].to_dataset()
        ds.attrs["reference"] = refs[f]
        out[f] = ds
    return out


def response_scale(y) -> float:
    """A scale of the response (its standard deviation, 1 for class probabilities): round-off below
    1e-9 of it (or of its square, for squared statistics) is printed as 0."""
    values = np.asarray(y)
    if values.dtype.kind not in "fiu":
        return 1.0
    sd = float(np.nanstd(values.astype(float)))
    return sd if sd > 0 else 1.0
