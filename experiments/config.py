"""Settings of every study: seeds, numbers of resamples B, repetitions R, sample sizes, learners.

``config(study, quick)`` returns the dict a study's ``compute`` reads.  Quick mode keeps every
figure and table of the paper but shrinks B, R and the models (its run time is measured and quoted,
``RunQuickMinutes``); full mode gives the paper's numbers.
"""

from __future__ import annotations

import copy

import numpy as np
from scipy.stats import norm

SEED = 20240611

_GRID15_UNIFORM = np.linspace(0.05, 0.95, 15)
_GRID15_NORMAL = norm.ppf(np.linspace(0.05, 0.95, 15))

# --------------------------------------------------------------------------- study 1


ELECTRICITY = {
    "full": {"n": 1000, "n_trees": 100, "B": 200, "grid_resolution": 25, "seed": SEED + 1},
    "quick": {"n": 1000, "n_trees": 20, "B": 20, "grid_resolution": 12, "seed": SEED + 1},
}

# --------------------------------------------------------------------------- study 2


def _coverage_scenarios(quick: bool) -> dict[str, dict]:
    """Scenarios of the coverage study.

    ``truth``: "exact" when the learner's expected PD has a closed form (least squares is unbiased,
    so it equals the DGP's PD), else "simulated" (mean over ``truth_fits`` fits on fresh data, with
    its Monte Carlo SE).  ``B`` is at least 200 for every learner in full mode.
    """
    reps_cheap, reps_flex, reps_logit = (6, 2, 4) if quick else (1000, 200, 400)
    # Repetitions per chunk (the run goes round-robin, one chunk of every scenario in turn): a flexible
    # learner's repetition costs ~230 refits (B + 2 x 15 Molnar refits), an OLS one a few seconds.
    # Measured at load ~6 (nice 10, one thread): an OLS repetition (2 x 200 refits) takes ~13 s wall, a flexible
    # one 4-6 min, so chunks of 10 OLS repetitions and of one flexible repetition each take a few minutes and
    # every scenario gets repetitions within the first round (about an hour on the shared machine).
    chunk_ols, chunk_flex, chunk_logit = (3, 1, 2) if quick else (10, 1, 5)
    b_cheap, b_flex = (40, 20) if quick else (200, 200)
    truth_flex, truth_logit = (2, 4) if quick else (100, 400)
    both = ["resample", "original"]
    common_a = {"dgp": "interaction", "learner": "ols_interaction", "features": [0, 1], "grid": _GRID15_NORMAL,
                "backgrounds": both, "B": b_cheap, "R": reps_cheap, "truth": "exact", "label": "A",
                "chunk": chunk_ols}
    common_c = {"dgp": "additive_uniform", "learner": "ols", "features": [0, 1], "grid": _GRID15_UNIFORM,
                "backgrounds": both, "B": b_cheap, "R": reps_cheap, "truth": "exact", "n": 1000, "label": "C",
                "chunk": chunk_ols}
    scenarios = {
        "A_n200": dict(common_a, n=200),
        "A_n1000": dict(common_a, n=1000),
        "C_n1000": dict(common_c, noise=1.0),
        # The additive case in which fixed rows under-cover: the other feature's effect (variance 1/12)
        # is large against the noise (variance 0.01).
        "C_n1000_lownoise": dict(common_c, noise=0.1),
    }
    for learner in ("rf", "gbm", "mlp"):
        for n in (500, 2000):
            # Boosting's sup-t coverage of the DGP PD is near 0.7; 400 repetitions keep its Monte Carlo SE <= 0.015.
            reps = 2 * reps_flex if (learner == "gbm" and not quick) else reps_flex
            scenarios[f"B_{learner}_n{n}"] = {
                "dgp": "friedman1", "learner": learner, "features": [0, 2, 3], "grid": _GRID15_UNIFORM,
                "backgrounds": ["resample"], "B": b_flex, "R": reps, "truth": "simulated",
                "truth_fits": truth_flex, "n": n, "label": "B", "chunk": chunk_flex,
            }
    # D: the interaction model with correlated Gaussian features (rho = 0.5).
    common_d = {"dgp": "interaction_correlated", "rho": 0.5, "features": [0, 1], "grid": _GRID15_NORMAL,
                "n": 1000, "label": "D"}
    scenarios["D_ols_n1000"] = dict(common_d, learner="ols_interaction", backgrounds=both, B=b_cheap, R=reps_cheap,
                                    truth="exact", chunk=chunk_ols)
    scenarios["D_gbm_n1000"] = dict(common_d, learner="gbm", backgrounds=["resample"], B=b_flex, R=reps_flex,
                                    truth="simulated", truth_fits=truth_flex, chunk=chunk_flex)
    # E: binary classification, logit P(y = 1) = 0.5 + 1.5 x1 - x2, PD of the probability of y = 1.
    common_e = {"dgp": "logistic", "features": [0, 1], "grid": _GRID15_NORMAL, "n": 1000, "label": "E",
                "backgrounds": ["resample"], "truth": "simulated"}
    scenarios["E_logit_n1000"] = dict(common_e, learner="logit", B=b_cheap, R=reps_logit, truth_fits=truth_logit,
                                      chunk=chunk_logit)
    scenarios["E_gbc_n1000"] = dict(common_e, learner="gbc", B=b_flex, R=reps_flex, truth_fits=truth_flex,
                                    chunk=chunk_flex)
    return scenarios


COVERAGE = {
    "full": {"seed": SEED + 2, "scenarios": _coverage_scenarios(False), "chunk": 50, "molnar_refits": 15,
             "molnar_fractions": [0.5, 0.7], "truth_background": 2000, "small_B": 40, "level": 0.95,
             "molnar_sensitivity": {"R": 1000, "fractions": [0.5, 0.632, 0.7, 0.8], "chunk": 100},
             "diagnosis": {"ols": {"scenarios": ["A_n1000", "C_n1000"], "R": 1000, "B": [200, 500, 2000]},
                           "mlp": {"scenario": "B_mlp_n500", "R": 20, "B": 40, "sd_fits": 100, "fraction": 0.632,
                                   "chunk": 5}}},
    "quick": {"seed": SEED + 2, "scenarios": _coverage_scenarios(True), "chunk": 3, "molnar_refits": 5,
              "molnar_fractions": [0.5, 0.7], "truth_background": 500, "small_B": 20, "level": 0.95,
              "molnar_sensitivity": {"R": 6, "fractions": [0.5, 0.632, 0.7, 0.8], "chunk": 3},
              "diagnosis": {"ols": {"scenarios": ["A_n1000", "C_n1000"], "R": 20, "B": [40, 100, 200]},
                            "mlp": {"scenario": "B_mlp_n500", "R": 2, "B": 10, "sd_fits": 4, "fraction": 0.632,
                                    "chunk": 2}}},
}

# --------------------------------------------------------------------------- study 3

HETEROGENEITY = {
    # B = 50 (was 100): reduced to fit session 5 (one shared core); the paper quotes HetB.
    "full": {"seed": SEED + 3, "n": 1000, "B": 50, "n_ice": 60, "h_rows": 300, "max_iter": 100,
             # Refit tests: planned R; run round-robin in chunks (null: 5 reps, power: 1) and archived at the R
             # reached. One test (smooth null, 19 refits) ~14 s CPU; with 39 refits 23-31 s (measured 30 Nov).
             "test": {"n": 500, "null_refits": 19, "h_rows": 100, "max_iter": 50,
                      "reps_null": 100, "reps_power": 30, "chunk": {"null": 5, "power": 1}}},
    "quick": {"seed": SEED + 3, "n": 300, "B": 10, "n_ice": 30, "h_rows": 80, "max_iter": 20,
              "test": {"n": 200, "null_refits": 19, "h_rows": 50, "max_iter": 15,
                       "reps_null": 2, "reps_power": 1, "chunk": {"null": 1, "power": 1}}},
}

# --------------------------------------------------------------------------- study 4

COST = {
    # Timings are CPU seconds of one single-threaded process (robust to the machine's load); per-model PD:
    # median of `repeats` interleaved rounds. Forest (n_trees, fully grown) and boosting (max_iter rounds).
    # Session 5 sizes (one shared core at ~25 %, CPU budget ~6 min): B = 5 (was 10), a 20 x 20 surface (was 25 x 25),
    # 20-tree forests in the scaling runs (was 50) and B up to 20 (was 40).
    "full": {"seed": SEED + 4, "n": 1000, "n_trees": 100, "max_iter": 100, "B": 5, "repeats": 3,
             "grid_1d": 25, "grid_2d": 20,
             "scaling": {"n_trees": 20, "B": [5, 10, 20], "n": [500, 1000, 2000, 4000],
                         "grid": [10, 20, 40, 80], "base": {"B": 10, "n": 1000, "grid": 20}}},
    "quick": {"seed": SEED + 4, "n": 300, "n_trees": 10, "max_iter": 10, "B": 2, "repeats": 1, "grid_1d": 8,
              "grid_2d": 6,
              "scaling": {"n_trees": 10, "B": [2, 4], "n": [200, 400], "grid": [5, 10],
                          "base": {"B": 2, "n": 200, "grid": 5}}},
}

# --------------------------------------------------------------------------- study 5

REAL_DATA = {
    "full": {"seed": SEED + 5, "bike": {"B": 100, "max_iter": 200, "grid_resolution": 25, "n_ice": 80,
                                        "max_background": None},
             "anes": {"B": 200, "max_iter": 100, "grid_resolution": 20}},
    "quick": {"seed": SEED + 5, "bike": {"B": 20, "max_iter": 20, "grid_resolution": 8, "n_ice": 20,
                                         "max_background": 1500},
              "anes": {"B": 20, "max_iter": 20, "grid_resolution": 6}},
}

_ALL = {"electricity": ELECTRICITY, "coverage": COVERAGE, "heterogeneity": HETEROGENEITY, "cost": COST,
        "real_data": REAL_DATA}


def config(study: str, quick: bool) -> dict:
    """A deep copy of a study's settings for the chosen mode."""
    if study not in _ALL:
        raise ValueError(f"Unknown study {study!r}; expected one of {sorted(_ALL)}.")
    return copy.deepcopy(_ALL[study]["quick" if quick else "full"])
