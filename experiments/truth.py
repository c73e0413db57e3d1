"""Exact population partial dependence of the simulated DGPs of :mod:`pdpboot.datasets` (the studies' truth).

The DGPs draw independent features, so the PD of a feature set ``S`` is ``E[f(v, X_{-S})]``: each
``_<dgp>_expectation(given)`` returns ``E[f(X) | X_S = given]`` for the features named in ``given``, in
closed form; :func:`true_pd` evaluates it on a grid.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

ArrayLike = Any


def _hour_effect(hour: np.ndarray) -> np.ndarray:
    morning = np.where((hour >= 7) & (hour <= 10), 5.0 * np.sin((hour - 7.0) * np.pi / 6.0), 0.0)
    evening = np.where((hour >= 18) & (hour <= 22), 5.0 * np.sin((hour - 18.0) * np.pi / 4.0), 0.0)
    midday = np.where((hour >= 10) & (hour <= 17), -5.0 * np.sin((hour - 10.0) * np.pi / 7.0), 0.0)
    return morning + evening + midday + 7.0 * np.sin(hour * np.pi / 24.0)


# E over Temperature ~ U(0, 40) of 0.1 (T - 20)^2 = 0.1 * 40^2 / 12.
_TEMPERATURE_MEAN = 40.0 / 3.0
# (1/24) * integral over [0, 24] of the hour effect = (30 + 40 - 70 + 336) / (24 pi).
_HOUR_MEAN = 14.0 / np.pi
# 5 * P(Day = 0) for Day uniform on {0, ..., 6}.
_DAY_MEAN = 5.0 / 7.0


def _electricity_expectation(given: Mapping[str, np.ndarray]) -> np.ndarray:
    temp = 0.1 * (given["Temperature"] - 20.0) ** 2 if "Temperature" in given else _TEMPERATURE_MEAN
    hour = _hour_effect(given["Hour"]) if "Hour" in given else _HOUR_MEAN
    day = 5.0 * (given["Day"] == 0) if "Day" in given else _DAY_MEAN
    return temp + hour + day


@functools.cache
def _friedman_sin_mean() -> float:
    """E[10 sin(pi x1 x2)] for x1, x2 ~ U(0, 1): (10 / pi) Cin(pi)."""
    from scipy.special import sici

    cin = np.euler_gamma + math.log(math.pi) - float(sici(math.pi)[1])
    return 10.0 / math.pi * cin


def _friedman_sin_given_one(v: np.ndarray) -> np.ndarray:
    """E over u ~ U(0, 1) of 10 sin(pi v u) = 10 (1 - cos(pi v)) / (pi v), 0 at v = 0."""
    arg = np.pi * np.asarray(v, dtype=float)
    numerator = 20.0 * np.sin(arg / 2.0) ** 2  # 10 (1 - cos), without cancellation near 0
    return np.divide(numerator, arg, out=np.zeros_like(arg), where=arg != 0)


def _friedman1_expectation(given: Mapping[str, np.ndarray]) -> np.ndarray:
    if "x1" in given and "x2" in given:
        sin_term = 10.0 * np.sin(np.pi * given["x1"] * given["x2"])
    elif "x1" in given or "x2" in given:
        sin_term = _friedman_sin_given_one(given["x1"] if "x1" in given else given["x2"])
    else:
        sin_term = _friedman_sin_mean()
    quad = 20.0 * (given["x3"] - 0.5) ** 2 if "x3" in given else 20.0 / 12.0
    lin4 = 10.0 * given["x4"] if "x4" in given else 5.0
    lin5 = 5.0 * given["x5"] if "x5" in given else 2.5
    return sin_term + quad + lin4 + lin5


def _interaction_expectation(given: Mapping[str, np.ndarray]) -> np.ndarray:
    # x1, x2 independent with mean 0, so E[x1 x2 | given] = E[x1 | given] E[x2 | given].
    x1 = given.get("x1", 0.0)
    x2 = given.get("x2", 0.0)
    return x1 + x2 + x1 * x2


def _goldstein_expectation(given: Mapping[str, np.ndarray]) -> np.ndarray:
    x1 = given.get("x1", 0.0)
    x2 = given.get("x2", 0.0)
    upper = (given["x3"] >= 0).astype(float) if "x3" in given else 0.5  # P(x3 >= 0) = 1/2
    return 0.2 * x1 - 5.0 * x2 + 10.0 * x2 * upper


def _additive_uniform_expectation(given: Mapping[str, np.ndarray]) -> np.ndarray:
    return given.get("x1", 0.5) - given.get("x2", 0.5)


@dataclass(frozen=True)
class _Dgp:
    active: tuple[str, ...]  # features f depends on
    expectation: Callable[[Mapping[str, np.ndarray]], np.ndarray]
    extra: re.Pattern[str] | None = None  # pattern of extra, inert feature names

    def check_feature(self, name: object, dgp: str) -> str:
        if isinstance(name, str) and (name in self.active or (self.extra and self.extra.fullmatch(name))):
            return name
        extra = " (or any further x<k>, k >= 6, which has no effect)" if self.extra else ""
        raise ValueError(
            f"Unknown feature {name!r} for DGP {dgp!r}; expected one of {list(self.active)}{extra}."
        )


_DGPS: dict[str, _Dgp] = {
    "electricity": _Dgp(("Temperature", "Hour", "Day"), _electricity_expectation),
    "friedman1": _Dgp(
        ("x1", "x2", "x3", "x4", "x5"), _friedman1_expectation, re.compile(r"x([6-9]|[1-9]\d+)")
    ),
    "interaction": _Dgp(("x1", "x2"), _interaction_expectation),
    "goldstein": _Dgp(("x1", "x2", "x3"), _goldstein_expectation),
    "additive_uniform": _Dgp(("x1", "x2"), _additive_uniform_expectation),
}


def _get_dgp(name: object) -> _Dgp:
    if not isinstance(name, str) or name not in _DGPS:
        raise ValueError(f"Unknown DGP {name!r}; expected one of {sorted(_DGPS)}.")
    return _DGPS[name]


def _as_grid(values: ArrayLike, feature: str) -> np.ndarray:
    try:
        grid = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"Grid values for {feature!r} must be numeric: {err}") from None
    if grid.ndim != 1:
        raise ValueError(f"Grid values for {feature!r} must be 1-D, got shape {grid.shape}.")
    if not np.all(np.isfinite(grid)):
        raise ValueError(f"Grid values for {feature!r} must be finite (no NaN or inf).")
    return grid


def true_pd(name: str, features: str | Sequence[str], values: ArrayLike) -> np.ndarray:
    """Exact population partial dependence of a simulated DGP.

    Parameters
    ----------
    name : {"electricity", "friedman1", "interaction", "goldstein", "additive_uniform"}
        The DGP (the generator ``pdpboot.datasets.make_<name>``; ``"electricity"`` is
        ``make_electricity_prices``).
    features : str or pair of str
        One feature name (1-D PD) or two distinct names (2-D PD).
    values : array-like
        For one feature, its 1-D grid.  For a pair, a pair ``(values_a,
        values_b)`` of 1-D grids.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(values),)``, or for a pair ``(len(values_a), len(values_b))`` with
        ``out[i, j] = PD(values_a[i], values_b[j])``.
    """
    dgp = _get_dgp(name)
    if isinstance(features, str):
        feature = dgp.check_feature(features, name)
        grid = _as_grid(values, feature)
        given = {feature: grid}
        shape: tuple[int, ...] = grid.shape
    else:
        pair = tuple(features) if isinstance(features, Sequence) else ()
        if len(pair) != 2:
            raise ValueError(f"features must be one name or a pair of names, got {features!r}.")
        a, b = (dgp.check_feature(f, name) for f in pair)
        if a == b:
            raise ValueError(f"A 2-D PD needs two different features, got {a!r} twice.")
        if (isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or len(values) != 2
                or any(np.ndim(v) != 1 for v in values)):
            raise ValueError("For a feature pair, values must be a pair (values_a, values_b) of 1-D grids.")
        grid_a, grid_b = _as_grid(values[0], a), _as_grid(values[1], b)
        mesh_a, mesh_b = np.meshgrid(grid_a, grid_b, indexing="ij")
        given = {a: mesh_a, b: mesh_b}
        shape = mesh_a.shape
    out = np.asarray(dgp.expectation(given), dtype=float)
    return np.array(np.broadcast_to(out, shape), dtype=float)
