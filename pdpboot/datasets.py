"""Simulated known-truth datasets and the bundled real data.

The simulated data-generating processes (DGPs) draw independent features, so the
population PD of a feature set ``S`` is ``E[f(v, X_{-S})]``, given in closed form by
:func:`true_pd`.

- ``electricity``: :func:`make_electricity_prices` (3 features);
- ``friedman1``: ``10 sin(pi x1 x2) + 20 (x3 - 1/2)^2 + 10 x4 + 5 x5`` (>= 5 features);
- ``interaction``: ``x1 + x2 + x1 x2`` (Gaussian features);
- ``goldstein``: ``0.2 x1 - 5 x2 + 10 x2 1[x3 >= 0]``;
- ``additive_uniform``: ``x1 - x2`` (uniform features).

Real data are read from CSV files shipped inside the package (``pdpboot/data/``;
provenance and licences in the repository's ``data/README.md``); nothing is downloaded.
"""

from __future__ import annotations

import functools
import hashlib
import io
import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "load_anes96",
    "load_bike_sharing",
    "make_additive_uniform",
    "make_electricity_prices",
    "make_friedman1",
    "make_goldstein",
    "make_interaction",
    "true_function",
    "true_pd",
]

ArrayLike = Any
RngLike = Any  # whatever numpy.random.default_rng accepts

# --------------------------------------------------------------------------- helpers


def _check_n_samples(n_samples: object) -> int:
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral):
        raise TypeError(f"n_samples must be an integer, got {type(n_samples).__name__}.")
    if n_samples < 1:
        raise ValueError(f"n_samples must be at least 1, got {n_samples}.")
    return int(n_samples)


def _check_noise(noise: object) -> float:
    if isinstance(noise, bool) or not isinstance(noise, numbers.Real):
        raise TypeError(f"noise must be a real number (the noise standard deviation), got {noise!r}.")
    if not math.isfinite(noise) or noise < 0:
        raise ValueError(f"noise is the noise standard deviation and must be finite and >= 0, got {noise}.")
    return float(noise)


def _frame(columns: Mapping[str, np.ndarray], y: np.ndarray, y_name: str) -> tuple[pd.DataFrame, pd.Series]:
    X = pd.DataFrame(dict(columns))
    return X, pd.Series(y, index=X.index, name=y_name)


# --------------------------------------------------------------------------- regression functions
#
# Each ``_<dgp>_expectation(given)`` returns E[f(X) | X_S = given] for the features
# named in ``given`` (independent features, so this is the population PD of S);
# with every active feature given, it is f itself.


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


# --------------------------------------------------------------------------- true PD


def true_pd(name: str, features: str | Sequence[str], values: ArrayLike) -> np.ndarray:
    """Exact population partial dependence of a simulated DGP.

    Parameters
    ----------
    name : {"electricity", "friedman1", "interaction", "goldstein", "additive_uniform"}
        The DGP (the ``make_<name>`` generator; ``"electricity"`` is
        :func:`make_electricity_prices`).
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


def true_function(name: str, X: pd.DataFrame) -> np.ndarray:
    """Noise-free regression function ``f`` of a simulated DGP, evaluated on rows.

    Parameters
    ----------
    name : str
        The DGP, as in :func:`true_pd`.
    X : pandas.DataFrame
        Must hold the DGP's active feature columns (other columns are ignored).

    Returns
    -------
    numpy.ndarray
        Shape ``(len(X),)``, dim ``sample``: ``f`` at each row (the Bayes-optimal
        prediction, ``E[y | X]``).
    """
    dgp = _get_dgp(name)
    if not isinstance(X, pd.DataFrame):
        raise TypeError(f"X must be a pandas DataFrame, got {type(X).__name__}.")
    missing = [c for c in dgp.active if c not in X.columns]
    if missing:
        raise ValueError(f"X lacks the columns {missing} needed by DGP {name!r}.")
    given = {c: X[c].to_numpy(dtype=float) for c in dgp.active}
    return np.array(np.broadcast_to(dgp.expectation(given), (len(X),)), dtype=float)


# --------------------------------------------------------------------------- generators


def _simulate(dgp: str, n_samples, noise, rng, draw) -> tuple[pd.DataFrame, pd.Series]:
    """Features from ``draw(gen, n)``, then ``y = f(X) + noise * e`` with ``e ~ N(0, 1)``."""
    n = _check_n_samples(n_samples)
    sd = _check_noise(noise)
    gen = np.random.default_rng(rng)
    columns = draw(gen, n)
    return _frame(columns, _DGPS[dgp].expectation(columns) + sd * gen.standard_normal(n), "y")


def make_electricity_prices(n_samples: int = 1000, *, rng: RngLike = None) -> tuple[pd.DataFrame, pd.Series]:
    """Simulated electricity prices with known partial dependence (additive, noise sd 4).

    Features (independent): ``Temperature ~ U(0, 40)``, ``Hour ~ U(0, 24)``, ``Day`` uniform on
    ``{0, ..., 6}`` (``int64``).  Response::

        Price = 0.1 (T - 20)^2
                + 5 sin((H - 7) pi / 6)  1[7 <= H <= 10]
                + 5 sin((H - 18) pi / 4) 1[18 <= H <= 22]
                - 5 sin((H - 10) pi / 7) 1[10 <= H <= 17]
                + 7 sin(H pi / 24)
                + 5 1[Day = 0]
                + 2 e,   e ~ N(0, 2^2)

    Each PD is its feature's term plus the means of the others (``40/3``, ``14/pi``, ``5/7``).

    Parameters
    ----------
    n_samples : int, default 1000
    rng : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    X : pandas.DataFrame of shape (n_samples, 3)
    y : pandas.Series of shape (n_samples,), name ``"Price"``
    """
    n = _check_n_samples(n_samples)
    gen = np.random.default_rng(rng)
    columns = {
        "Temperature": gen.uniform(0.0, 40.0, n),
        "Hour": gen.uniform(0.0, 24.0, n),
        "Day": gen.integers(0, 7, n, dtype=np.int64),
    }
    signal = _electricity_expectation(columns)
    return _frame(columns, signal + 2.0 * gen.normal(0.0, 2.0, n), "Price")


def make_friedman1(
    n_samples: int = 1000, *, n_features: int = 10, noise: float = 1.0, rng: RngLike = None
) -> tuple[pd.DataFrame, pd.Series]:
    """Friedman #1 regression problem (Friedman 1991).

    ``x1, ..., x<n_features>`` i.i.d. ``U(0, 1)``; only ``x1..x5`` matter::

        y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + noise * e,  e ~ N(0, 1)

    The mean of the sine term is ``(10/pi) Cin(pi)``, its mean over one factor
    ``10 (1 - cos(pi v)) / (pi v)``; :func:`true_pd` gives every PD.

    Parameters
    ----------
    n_samples : int, default 1000
    n_features : int, default 10
        Number of features, at least 5.
    noise : float, default 1.0
        Standard deviation of the Gaussian noise.
    rng : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    X : pandas.DataFrame of shape (n_samples, n_features)
    y : pandas.Series of shape (n_samples,), name ``"y"``
    """
    _check_n_samples(n_samples)
    if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral) or n_features < 5:
        raise ValueError(f"n_features must be an integer >= 5, got {n_features!r}.")
    k = int(n_features)
    return _simulate("friedman1", n_samples, noise, rng,
                     lambda gen, n: dict(zip([f"x{j + 1}" for j in range(k)], gen.uniform(0.0, 1.0, (n, k)).T)))


def make_interaction(
    n_samples: int = 1000, *, noise: float = 1.0, rng: RngLike = None
) -> tuple[pd.DataFrame, pd.Series]:
    """Two Gaussian features with a multiplicative interaction.

    ``x1, x2 ~ N(0, 1)`` independent; ``y = x1 + x2 + x1 x2 + noise * e``.  True PDs:
    ``PD_x1(a) = a``, ``PD_{x1,x2}(a, b) = a + b + a b`` (ICE slopes ``1 + x2`` vary).

    Parameters
    ----------
    n_samples : int, default 1000
    noise : float, default 1.0
        Standard deviation of the Gaussian noise.
    rng : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    X : pandas.DataFrame of shape (n_samples, 2)
    y : pandas.Series of shape (n_samples,), name ``"y"``
    """
    return _simulate("interaction", n_samples, noise, rng,
                     lambda gen, n: dict(zip(("x1", "x2"), gen.standard_normal((n, 2)).T)))


def make_goldstein(
    n_samples: int = 1000, *, noise: float = 1.0, rng: RngLike = None
) -> tuple[pd.DataFrame, pd.Series]:
    """The ICE example of Goldstein et al. (2015): a flat PD that hides an effect.

    ``x1, x2, x3 ~ U(-1, 1)`` independent; ``y = 0.2 x1 - 5 x2 + 10 x2 1[x3 >= 0] + noise * e``.
    True PDs: ``PD_x1(a) = 0.2 a``, ``PD_x2 = PD_x3 = 0`` (ICE slopes of ``x2`` are -5 or +5),
    ``PD_{x2,x3}(b, c) = -5 b + 10 b 1[c >= 0]``.

    Parameters
    ----------
    n_samples : int, default 1000
    noise : float, default 1.0
        Standard deviation of the Gaussian noise.
    rng : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    X : pandas.DataFrame of shape (n_samples, 3)
    y : pandas.Series of shape (n_samples,), name ``"y"``
    """
    return _simulate("goldstein", n_samples, noise, rng,
                     lambda gen, n: dict(zip(("x1", "x2", "x3"), gen.uniform(-1.0, 1.0, (n, 3)).T)))


def make_additive_uniform(
    n_samples: int = 1000, *, noise: float = 1.0, rng: RngLike = None
) -> tuple[pd.DataFrame, pd.Series]:
    """Additive linear model on uniform features (the setting of Molnar et al. 2023).

    ``x1, x2 ~ U(0, 1)`` independent; ``y = x1 - x2 + noise * e``.  True PDs:
    ``PD_x1(a) = a - 1/2``, ``PD_x2(b) = 1/2 - b``, ``PD_{x1,x2}(a, b) = a - b``.

    Parameters
    ----------
    n_samples : int, default 1000
    noise : float, default 1.0
        Standard deviation of the Gaussian noise.
    rng : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    X : pandas.DataFrame of shape (n_samples, 2)
    y : pandas.Series of shape (n_samples,), name ``"y"``
    """
    return _simulate("additive_uniform", n_samples, noise, rng,
                     lambda gen, n: dict(zip(("x1", "x2"), gen.uniform(0.0, 1.0, (n, 2)).T)))


# --------------------------------------------------------------------------- bundled real data

#: The bundled files ship inside the package (``pdpboot/data/``, package data: in the wheel too), found
#: through :mod:`importlib.resources`; their provenance is the repository's ``data/README.md``.
_DATA_DIR = resources.files(__package__) / "data"

#: SHA-256 of each bundled file (also listed in data/README.md).
_SHA256 = {
    "bike_sharing.csv": "ac6950ae6f11efcc69c29d6bb13e8881c001e27d36434660d59444a1414f712c",
    "anes96.csv": "add0df3db34e5070233a7724cb3122b7d8b358c67be0982476fa7f3e9b4ff706",
}


def _read_checked(filename: str, data_dir: str | Path | None) -> bytes:
    folder = _DATA_DIR if data_dir is None else Path(data_dir)  # a Traversable or a Path
    path = folder / filename
    if not path.is_file():
        raise FileNotFoundError(
            f"Data file {filename!r} not found at {path}; reinstall pdpboot, restore it with "
            f"`git checkout -- pdpboot/data/{filename}`, or pass data_dir= the folder that holds it."
        )
    content = path.read_bytes()
    digest = hashlib.sha256(content).hexdigest()
    if digest != _SHA256[filename]:
        raise ValueError(
            f"Data file {path} is corrupt or modified: SHA-256 {digest} differs from the expected "
            f"{_SHA256[filename]}. Restore it with `git checkout -- pdpboot/data/{filename}` or rebuild it with "
            "the command in data/README.md."
        )
    return content


_SEASONS = {1: "winter", 2: "spring", 3: "summer", 4: "fall"}
_MONTHS = ["Jan", "Feb", "March", "April", "May", "June", "July", "Aug", "Sept", "Oct", "Nov", "Dec"]
_WEATHER = ["clear", "cloudy/misty", "light rain/snow", "heavy rain/snow"]


def load_bike_sharing(*, data_dir: str | Path | None = None) -> tuple[pd.DataFrame, pd.Series]:
    """Hourly bike-sharing demand, Washington D.C., 2011 (UCI; Fanaee-T & Gama 2013).

    The ``Bikeshare`` table of the ISLP package (8,645 hours; licence CC BY 4.0, see ``data/README.md``),
    without the casual and registered counts that sum to the response.

    Parameters
    ----------
    data_dir : str or Path, optional
        Folder holding ``bike_sharing.csv``; default: the copy bundled in ``pdpboot/data/``.

    Returns
    -------
    X : pandas.DataFrame
        Shape ``(8645, 12)``: ``category`` columns ``season``, ``mnth``, ``weathersit``; int64 ``day``
        (of the year), ``hr``, ``holiday``, ``weekday`` (0 = Sunday), ``workingday``; float64 in [0, 1]
        ``temp`` ((t + 8) / 47, t in Celsius), ``atemp`` ((t + 16) / 66), ``hum`` (/100), ``windspeed`` (/67).
    y : pandas.Series
        Shape ``(8645,)``, int64, name ``"bikers"``: rentals in the hour.

    Raises
    ------
    FileNotFoundError, ValueError
        If the CSV file is missing, or its checksum does not match.
    """
    raw = pd.read_csv(io.BytesIO(_read_checked("bike_sharing.csv", data_dir)))
    X = raw[["season", "mnth", "day", "hr", "holiday", "weekday", "workingday", "weathersit",
             "temp", "atemp", "hum", "windspeed"]].copy()
    X["season"] = pd.Categorical(raw["season"].map(_SEASONS), categories=list(_SEASONS.values()))
    X["mnth"] = pd.Categorical(raw["mnth"], categories=_MONTHS)
    X["weathersit"] = pd.Categorical(raw["weathersit"], categories=_WEATHER)
    for col in ("day", "hr", "holiday", "weekday", "workingday"):
        X[col] = X[col].astype(np.int64)
    return X, raw["bikers"].astype(np.int64).rename("bikers")


_PARTY_ID = [
    "strong Democrat", "weak Democrat", "independent-Democrat", "independent",
    "independent-Republican", "weak Republican", "strong Republican",
]


def load_anes96(*, data_dir: str | Path | None = None) -> tuple[pd.DataFrame, pd.Series]:
    """Expected vote in the 1996 US presidential election (ANES 1996 subset).

    The ``anes96`` table of statsmodels (944 respondents; public domain, see ``data/README.md``): a binary
    classification (Clinton vs Dole) with mixed features.

    Parameters
    ----------
    data_dir : str or Path, optional
        Folder holding ``anes96.csv``; default: the copy bundled in ``pdpboot/data/``.

    Returns
    -------
    X : pandas.DataFrame
        Shape ``(944, 9)``: ``PID`` (party identification, ``category``, ``"strong Democrat"`` to
        ``"strong Republican"``); int64 ``popul``, ``TVnews``, ``selfLR``, ``ClinLR``, ``DoleLR`` (1-7
        liberal-conservative placements), ``age``, ``educ``, ``income``.
    y : pandas.Series
        Shape ``(944,)``, name ``"vote"``, values ``"Clinton"`` / ``"Dole"``.

    Raises
    ------
    FileNotFoundError, ValueError
        If the CSV file is missing, or its checksum does not match.
    """
    raw = pd.read_csv(io.BytesIO(_read_checked("anes96.csv", data_dir)))
    columns = ["popul", "TVnews", "selfLR", "ClinLR", "DoleLR", "PID", "age", "educ", "income"]
    X = raw[columns].astype(np.int64)
    X["PID"] = pd.Categorical.from_codes(raw["PID"].to_numpy(), categories=_PARTY_ID)
    y = pd.Series(np.where(raw["vote"].to_numpy() == 1, "Dole", "Clinton"), index=X.index, name="vote")
    return X, y
