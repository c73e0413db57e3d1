"""Size and power of the "beyond noise" verdict of summary.md (``workflow.report.flat_within_noise``).

Design (committed before its results).  n = 300 rows: ``b`` ~ Bernoulli(1/2) (a two-level feature), ``x`` and
``z`` ~ N(0, 1) independent, y = delta * b + gamma * tanh(1.5 x) + z + N(0, 1).
Effects: ``null`` (delta = gamma = 0) and ``weak`` (delta = 0.3, gamma = 0.2).
Learners (cheap, so that R is large; their PD is exact in closed form and checked against
:func:`pdpboot.bootstrap_partial_dependence` on one data set):
``linear`` (OLS on b, x, z) and ``cubic`` (OLS on b, x, x^2, x^3, z: a curved PD for x).
Refits: B = 30, 100, 200 ordinary bootstrap resamples (independent draws per B), the 95 % level, the run's
default band (``percentile``); ``x``'s grid: 20 points at its 5-95 % quantiles; ``b``'s: its two values.
Per data set and B, three verdicts ("beyond noise" = True):
``old`` (the sup-t band of the mean-centred PD excludes 0 somewhere, at every B >= 20),
``new`` (the shipped ``flat_within_noise``: none below 39 refits; two values: the contrast interval),
``contrast`` (the printed contrast interval of ``b`` excludes 0).
R = 500 data sets per (learner, effect); size = rejection rate under ``null``, power under ``weak``; MC SE
sqrt(p (1 - p) / R).  The old verdict's disagreements with the contrast interval are counted.

    nice -n 19 python -m experiments.beyond_noise [--R 500]

Cache: ``experiments/results/beyond_noise/<learner>_<effect>.npz`` (per chunk of 50 data sets, resumable);
summary: ``experiments/summaries/beyond_noise/summary.json`` and ``README.md``.
"""

from __future__ import annotations

import argparse
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import xarray as xr

from . import _common as C

STUDY = "beyond_noise"
RESULTS = C.RESULTS / STUDY
SUMMARIES = C.ROOT / "experiments" / "summaries" / STUDY
N = 300
BS = (30, 100, 200)
EFFECTS = {"null": (0.0, 0.0), "weak": (0.3, 0.2)}
LEARNERS = ("linear", "cubic")
LEVEL = 0.95
N_GRID = 20
CHUNK = 50
CONFIG = SimpleNamespace(confidence_level=LEVEL, band="percentile")


def simulate(n: int, effect: str, rng: np.random.Generator) -> pd.DataFrame:
    delta, gamma = EFFECTS[effect]
    X = pd.DataFrame({"b": rng.integers(0, 2, n).astype(float), "x": rng.normal(size=n), "z": rng.normal(size=n)})
    y = delta * X.b + gamma * np.tanh(1.5 * X.x) + X.z + rng.normal(size=n)
    return X.assign(y=y)


def design_matrix(learner: str, b, x, z) -> np.ndarray:
    cols = [np.ones_like(x), b, x, z] + ([x ** 2, x ** 3] if learner == "cubic" else [])
    return np.column_stack(cols)


def pds(learner: str, data: pd.DataFrame, rows: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """PD of b (at 0, 1) and of x (at ``grid``), over all rows, of the OLS fitted on ``rows``."""
    b, x, z, y = (data[c].to_numpy() for c in ("b", "x", "z", "y"))
    m_b, m_x = pd_maps(learner, data, grid)
    coef = np.linalg.lstsq(design_matrix(learner, b[rows], x[rows], z[rows]), y[rows], rcond=None)[0]
    return m_b @ coef, m_x @ coef


def pd_maps(learner: str, data: pd.DataFrame, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The OLS PD is linear in the coefficients: PD = M @ coef, M's rows = the design averaged over all rows."""
    b, x, z = (data[c].to_numpy() for c in ("b", "x", "z"))
    m_b = np.array([design_matrix(learner, np.full_like(x, v), x, z).mean(0) for v in (0.0, 1.0)])
    m_x = np.array([design_matrix(learner, b, np.full_like(x, v), z).mean(0) for v in grid])
    return m_b, m_x


def refits(learner: str, data: pd.DataFrame, grid: np.ndarray, rng: np.random.Generator, B: int):
    """PDs of b and x from ``B`` bootstrap refits, ``(B, 2)`` and ``(B, G)``."""
    b, x, z, y = (data[c].to_numpy() for c in ("b", "x", "z", "y"))
    m_b, m_x = pd_maps(learner, data, grid)
    D = design_matrix(learner, b, x, z)
    coefs = np.array([np.linalg.lstsq(D[rows], y[rows], rcond=None)[0]
                      for rows in (rng.integers(0, N, N) for _ in range(B))])
    return coefs @ m_b.T, coefs @ m_x.T


def tree(pd_b, res_b, grid, pd_x, res_x) -> xr.DataTree:
    def node(f, coords, est, res):
        return xr.DataTree(xr.Dataset(
            {"pd": (("output", f), est[None]), "pd_resamples": (("resample", "output", f), res[:, None])},
            coords={"output": ["y"], f: coords, "resample": np.arange(len(res))}, attrs={"features": [f]}))
    t = xr.DataTree(children={"b": node("b", [0.0, 1.0], pd_b, res_b), "x": node("x", grid, pd_x, res_x)})
    t.attrs = {"n_rows": N, "response": "predict", "task": "regression", "resampling": "bootstrap",
               "band_scale": "identity", "subsample_size": N}
    return t


def old_verdict(result: xr.DataTree, f: str) -> bool:
    """The verdict before: the simultaneous sup-t band of the centred PD excludes 0 somewhere (B >= 20)."""
    from pdpboot.engine.intervals import band_arrays

    ds = result[f].to_dataset()
    est = (ds.pd - ds.pd.mean(f)).values
    res = (ds.pd_resamples - ds.pd_resamples.mean(f)).transpose("resample", "output", f).values
    lower, upper, *_ = band_arrays(est, res, level=LEVEL, method="percentile", simultaneous=True)
    return bool(((lower > 0) | (upper < 0)).any())


def replicate(learner: str, effect: str, rep: int) -> np.ndarray:
    """(B, feature, verdict) 0/1/NaN: verdicts old, new, contrast for b and x (contrast only for b)."""
    from pdpboot.workflow import report

    rng = np.random.default_rng([40, LEARNERS.index(learner), list(EFFECTS).index(effect), rep])
    data = simulate(N, effect, rng)
    grid = np.quantile(data.x, np.linspace(0.05, 0.95, N_GRID))
    full = np.arange(N)
    pd_b, pd_x = pds(learner, data, full, grid)
    out = np.full((len(BS), 2, 3), np.nan)
    for i, B in enumerate(BS):
        res_b, res_x = refits(learner, data, grid, rng, B)
        result = tree(pd_b, res_b, grid, pd_x, res_x)
        new = report.flat_within_noise(result, ["b", "x"], CONFIG)
        contrast = report.contrasts(result, ["b"], CONFIG)["b"]["contrast_band"]
        out[i, 0, 2] = float(bool(((contrast.sel(ci_bound="lower") > 0) | (contrast.sel(ci_bound="upper") < 0)).any()))
        for j, f in enumerate(("b", "x")):
            out[i, j, 0] = float(old_verdict(result, f))
            out[i, j, 1] = float(not bool(new[f].squeeze())) if f in new else np.nan
    return out


def check_exact() -> float:
    """Largest |PD difference| between the closed form and the package's PD, on one data set, both learners."""
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    import pdpboot

    data = simulate(N, "weak", np.random.default_rng(0))
    grid = np.quantile(data.x, np.linspace(0.05, 0.95, N_GRID))
    worst = 0.0
    for learner in LEARNERS:
        basis = FunctionTransformer(lambda X, lr=learner: design_matrix(lr, X[:, 0], X[:, 1], X[:, 2])[:, 1:])
        model = make_pipeline(basis, LinearRegression())
        X = data[["b", "x", "z"]].to_numpy()
        pd_b, pd_x = pds(learner, data, np.arange(N), grid)
        model.fit(X, data.y)
        got_b = pdpboot.partial_dependence(model, X, [0], grid=pdpboot.Grid(custom_values={0: [0.0, 1.0]}))
        got_x = pdpboot.partial_dependence(model, X, [1], grid=pdpboot.Grid(custom_values={1: list(grid)}))
        worst = max(worst, float(np.abs(pdpboot.get_node(got_b, "x0")["pd"].values.ravel() - pd_b).max()),
                    float(np.abs(pdpboot.get_node(got_x, "x1")["pd"].values.ravel() - pd_x).max()))
    return worst


def run(learner: str, effect: str, R: int) -> np.ndarray:
    """The cached chunks of the first ``R`` data sets (computing the missing ones)."""
    folder = RESULTS / f"{learner}_{effect}"
    folder.mkdir(parents=True, exist_ok=True)
    chunks = []
    for first in range(0, R, CHUNK):
        path = folder / f"{first:05d}.npy"
        if not path.exists():
            np.save(path, np.array([replicate(learner, effect, r) for r in range(first, min(first + CHUNK, R))]))
        chunks.append(np.load(path))
    return np.concatenate(chunks)[:R]


def rate(v: np.ndarray) -> dict:
    v = v[~np.isnan(v)]
    if not len(v):
        return {"rate": None, "mc_se": None, "R": 0}
    p = float(v.mean())
    return {"rate": round(p, 4), "mc_se": round(float(np.sqrt(p * (1 - p) / len(v))), 4), "R": int(len(v))}


def fmt(d: dict) -> str:
    return "–" if d["rate"] is None else f"{d['rate']:.3f} ({d['mc_se']:.3f})"


def summarize(results: dict, exact: float) -> None:
    SUMMARIES.mkdir(parents=True, exist_ok=True)
    rows, cells = [], {}
    for (learner, effect), arr in results.items():
        for i, B in enumerate(BS):
            cell = {}
            for j, f in enumerate(("b", "x")):
                for k, verdict in enumerate(("old", "new", "contrast")):
                    if f == "x" and verdict == "contrast":
                        continue
                    cell[f"{f}_{verdict}"] = rate(arr[:, i, j, k])
            disagree = arr[:, i, 0, 0] != arr[:, i, 0, 2]
            cell["b_old_vs_contrast_disagree"] = rate(disagree.astype(float))
            cell["b_new_vs_contrast_disagree"] = rate(
                np.where(np.isnan(arr[:, i, 0, 1]), np.nan, (arr[:, i, 0, 1] != arr[:, i, 0, 2]).astype(float)))
            cells[f"{learner}/{effect}/B={B}"] = cell
            rows.append(f"| {learner} | {effect} | {B} | {len(arr)} | {fmt(cell['b_old'])} | {fmt(cell['b_new'])} | "
                        f"{fmt(cell['b_contrast'])} | {fmt(cell['b_old_vs_contrast_disagree'])} | "
                        f"{fmt(cell['x_old'])} | {fmt(cell['x_new'])} |")
    (SUMMARIES / "summary.json").write_text(json.dumps(
        {"design": __doc__.split("\n\n")[1], "closed_form_vs_package_max_abs_diff": exact, "cells": cells},
        indent=1))
    (SUMMARIES / "README.md").write_text(
        "# Beyond noise: size (null) and power (weak) of the verdict\n\n" + __doc__.split("\n\n")[1] + "\n\n"
        "Rate of \"beyond noise: yes\" (MC SE); R data sets per cell; – = no verdict offered at this B.  "
        f"Closed-form PD vs the package's: max |diff| {exact:.1e}.\n\n"
        "| learner | effect | B | R | b old | b new | b contrast excludes 0 | b: old disagrees with contrast | "
        "x old | x new |\n|---|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--R", type=int, default=500)
    args = parser.parse_args(argv)
    exact = check_exact()
    for R in range(CHUNK, args.R + 1, CHUNK):  # every cell one chunk further, then the summary
        summarize({(lr, e): run(lr, e, R) for e in EFFECTS for lr in LEARNERS}, exact)


if __name__ == "__main__":
    main()
