"""Simulated known-truth datasets and the bundled real data.

The simulated data-generating processes (DGPs) draw independent features; :func:`true_function` is
their noise-free response ``f``:

- ``electricity``: :func:`make_electricity_prices` (3 features);
- ``friedman1``: ``10 sin(pi x1 x2) + 20 (x3 - 1/2)^2 + 10 x4 + 5 x5`` (>= 5 features);
- ``interaction``: ``x1 + x2 + x1 x2`` (Gaussian features);
- ``goldstein``: ``0.2 x1 - 5 x2 + 10 x2 1[x3 >= 0]``;
- ``additive_uniform``: ``x1 - x2`` (uniform features).

Real data are read from CSV files shipped inside the package (``pdpboot/data/``;
provenance and licences in the repository's ``data/README.md``); nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import io
import math
import numbers
from collections.abc import Callable, Mapping
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
]

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
# ``f`` of each DGP on a dict of feature columns (the noise-free response, ``E[y | X]``)


def _hour_effect(hour: np.ndarray) -> np.ndarray:
    morning = np.where((hour >= 7) & (hour <= 10), 5.0 * np.sin((hour - 7.0) * np.pi / 6.0), 0.0)
    evening = np.where((hour >= 18) & (hour <= 22), 5.0 * np.sin((hour - 18.0) * np.pi / 4.0), 0.0)
    midday = np.where((hour >= 10) & (hour <= 17), -5.0 * np.sin((hour - 10.0) * np.pi / 7.0), 0.0)
    return morning + evening + midday + 7.0 * np.sin(hour * np.pi / 24.0)


def _electricity(c: Mapping[str, np.ndarray]) -> np.ndarray:
    return 0.1 * (c["Temperature"] - 20.0) ** 2 + _hour_effect(c["Hour"]) + 5.0 * (c["Day"] == 0)


def _friedman1(c: Mapping[str, np.ndarray]) -> np.ndarray:
    return 10.0 * np.sin(np.pi * c["x1"] * c["x2"]) + 20.0 * (c["x3"] - 0.5) ** 2 + 10.0 * c["x4"] + 5.0 * c["x5"]


def _goldstein(c: Mapping[str, np.ndarray]) -> np.ndarray:
    return 0.2 * c["x1"] - 5.0 * c["x2"] + 10.0 * c["x2"] * (c["x3"] >= 0).astype(float)


#: DGP name -> (the features ``f`` depends on, ``f``)
_DGPS: dict[str, tuple[tuple[str, ...], Callable[[Mapping[str, np.ndarray]], np.ndarray]]] = {
    "electricity": (("Temperature", "Hour", "Day"), _electricity),
    "friedman1": (("x1", "x2", "x3", "x4", "x5"), _friedman1),
    "interaction": (("x1", "x2"), lambda c: c["x1"] + c["x2"] + c["x1"] * c["x2"]),
    "goldstein": (("x1", "x2", "x3"), _goldstein),
    "additive_uniform": (("x1", "x2"), lambda c: c["x1"] - c["x2"]),
}


def true_function(name: str, X: pd.DataFrame) -> np.ndarray:
    """Noise-free regression function ``f`` of a simulated DGP, evaluated on rows.

    Parameters
    ----------
    name : {"electricity", "friedman1", "interaction", "goldstein", "additive_uniform"}
        The DGP (the ``make_<name>`` generator; ``"electricity"`` is :func:`make_electricity_prices`).
    X : pandas.DataFrame
        Must hold the DGP's active feature columns (other columns are ignored).

    Returns
    -------
    numpy.ndarray
        Shape ``(len(X),)``, dim ``sample``: ``f`` at each row (the Bayes-optimal
        prediction, ``E[y | X]``).
    """
    if not isinstance(name, str) or name not in _DGPS:
        raise ValueError(f"Unknown DGP {name!r}; expected one of {sorted(_DGPS)}.")
    active, f = _DGPS[name]
    if not isinstance(X, pd.DataFrame):
        raise TypeError(f"X must be a pandas DataFrame, got {type(X).__name__}.")
    missing = [c for c in active if c not in X.columns]
    if missing:
        raise ValueError(f"X lacks the columns {missing} needed by DGP {name!r}.")
    return np.asarray(f({c: X[c].to_numpy(dtype=float) for c in active}), dtype=float)


# --------------------------------------------------------------------------- generators


def _simulate(dgp: str, n_samples, noise, rng, draw) -> tuple[pd.DataFrame, pd.Series]:
    """Features from ``draw(gen, n)``, then ``y = f(X) + noise * e`` with ``e ~ N(0, 1)``."""
    n = _check_n_samples(n_samples)
    sd = _check_noise(noise)
    gen = np.random.default_rng(rng)
    columns = draw(gen, n)
    return _frame(columns, _DGPS[dgp][1](columns) + sd * gen.standard_normal(n), "y")


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
    signal = _electricity(columns)
    return _frame(columns, signal + 2.0 * gen.normal(0.0, 2.0, n), "Price")


def make_friedman1(
    n_samples: int = 1000, *, n_features: int = 10, noise: float = 1.0, rng: RngLike = None
) -> tuple[pd.DataFrame, pd.Series]:
    """Friedman #1 regression problem (Friedman 1991).

    ``x1, ..., x<n_features>`` i.i.d. ``U(0, 1)``; only ``x1..x5`` matter::

        y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + noise * e,  e ~ N(0, 1)


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
