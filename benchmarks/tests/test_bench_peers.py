"""The peers benchmark (issue 30.5): every contender computes what the table says, checked against
scikit-learn brute force, and the study's table/macros divide by the right pdpboot time."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.inspection import partial_dependence
from sklearn.linear_model import LinearRegression

from benchmarks import bench_peers as bp
from experiments import peer_speed


def _data(n=200):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(n, 4))
    y = np.sin(4 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


def _brute(est, X, j, grid):
    return partial_dependence(est, X, [j], method="brute", kind="average", custom_values={j: grid})["average"].ravel()


def test_recursion_only_where_scikit_learn_offers_it_and_differs_from_brute():
    """scikit-learn's recursion runs on forests and HGB (not on a linear model), and on a forest it averages
    over node covers: its curve is not the brute-force PD (the table reports that difference)."""
    X, y = _data()
    grid = np.linspace(0.1, 0.9, 7)
    forest = RandomForestRegressor(10, random_state=0).fit(X, y)
    run = bp.contenders(forest, X, y, [0], [grid])
    assert "sklearn recursion" in run
    assert "sklearn recursion" not in bp.contenders(LinearRegression().fit(X, y), X, y, [0], [grid])
    errs = bp.references(forest, X, [0], [grid], {k: run[k]() for k in ("sklearn recursion", "pdpboot auto")})
    assert errs["pdpboot auto"] < 1e-12
    recursion = partial_dependence(forest, X, [0], method="recursion", custom_values={0: grid})["average"].ravel()
    assert errs["sklearn recursion"] == pytest.approx(np.max(np.abs(recursion - _brute(forest, X, 0, grid))))
    assert errs["sklearn recursion"] > 1e-3


def test_skexplain_is_compared_on_its_own_centred_grid():
    """scikit-explain evaluates ``len(grid)`` points from the minimum to the maximum and centres them; the
    reference is scikit-learn brute on that grid, centred (a hand-made curve checks the arithmetic)."""
    X, y = _data()
    est = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    grid = np.linspace(0.2, 0.8, 5)
    own = np.linspace(X[:, 0].min(), X[:, 0].max(), 5)
    brute = _brute(est, X, 0, own)
    exact = brute - brute.mean()
    errs = bp.references(est, X, [0], [grid], {"skexplain": exact + np.array([0, 0, 0.25, 0, 0])})
    assert errs["skexplain"] == pytest.approx(0.25, abs=1e-12)


def test_skexplain_contender_agrees_with_brute_force():
    pytest.importorskip("skexplain")
    X, y = _data()
    est = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    grid = np.linspace(0.2, 0.8, 6)
    run = bp.contenders(est, X, y, [0], [grid])
    errs = bp.references(est, X, [0], [grid], {"skexplain": run["skexplain"]()})
    assert errs["skexplain"] < 1e-12


@pytest.mark.parametrize("make", [lambda: RandomForestRegressor(5, max_depth=4, random_state=0),
                                  lambda: HistGradientBoostingRegressor(max_iter=10, random_state=0)])
def test_woodelf_contender_is_exact_pd_on_the_common_grid(make):
    """woodelf's exact PD on our grid (passed as its consumer points), and pdpboot's all-p pass returns the
    same curve as one-feature brute force."""
    pytest.importorskip("woodelf")
    X, y = _data()
    est = make().fit(X, y)
    grid = np.linspace(0.15, 0.85, 6)
    run = bp.contenders(est, X, y, [0], [grid])
    assert {"woodelf", "pdpboot all p"} <= set(run)
    ref = _brute(est, X, 0, grid)
    np.testing.assert_allclose(run["woodelf"](), ref, atol=1e-5)  # woodelf sums leaf values in float32
    np.testing.assert_allclose(run["pdpboot all p"](), ref, atol=1e-12)


def test_woodelf_not_offered_on_a_model_that_is_not_trees():
    X, y = _data()
    run = bp.contenders(LinearRegression().fit(X, y), X, y, [0], [np.linspace(0.2, 0.8, 4)])
    assert "woodelf" not in run and "pdpboot all p" not in run


@pytest.mark.filterwarnings("ignore")  # the peers' own warnings (dalex's variable_splits note): not under test
def test_slow_contender_runs_once(monkeypatch):
    """A contender above SLOW_CPU on its first run is not repeated; the others keep every repeat."""
    X, y = _data(50)
    est = LinearRegression().fit(X, y)
    monkeypatch.setattr(bp, "SLOW_CPU", -1.0)
    row = bp.measure_case(est, X, y, (0,), [np.linspace(0.2, 0.8, 3)], repeats=3)
    assert all(len(v) == 1 for v in row["all_times"].values())
    monkeypatch.setattr(bp, "SLOW_CPU", float("inf"))
    row = bp.measure_case(est, X, y, (0,), [np.linspace(0.2, 0.8, 3)], repeats=3)
    assert all(len(v) == 3 for v in row["all_times"].values())


def _record(times: dict, errs: dict, peers: dict | None = None) -> dict:
    row = {"n": 1000, "model": "XGBoost(100, depth 6)", "grid": "50", "times": times, "err": 1e-6, "errs": errs,
           "load": [1.0, 2.0]}
    versions = {"scikit-learn": "1", "dalex": "1", "effector": "1", "PDPbox": "1", "scikit-explain": "1",
                "woodelf": "1"}
    versions.update(peers or {})
    return {"rows": [row], "repeats": 3, "cpu_count": 2, "date": "d", "load_start": 1.0, "load_end": 3.0,
            "peers": versions, "libraries": {"pdpboot": "0.1"}}


def test_woodelf_ratio_is_against_pdpboot_on_the_same_p_curves():
    """woodelf's column divides by pdpboot's time for all p curves (2.0 / 0.5 = 4), its per-curve macro by
    pdpboot's one curve (2.0 / 0.1 = 20); recursion's difference from brute is reported as measured."""
    rec = _record({"pdpboot auto": 0.1, "pdpboot brute": 0.2, "sklearn brute": 0.3, "sklearn recursion": 0.05,
                   "skexplain": 0.6, "woodelf": 2.0, "pdpboot all p": 0.5},
                  {"woodelf": 3e-6, "skexplain": 0.0, "sklearn recursion": 0.25})
    out = peer_speed.macros(rec)
    assert out["PeersWoodelfMin"] == out["PeersWoodelfMax"] == "4.0"
    assert out["PeersWoodelfPerCurveMin"] == "20.0"
    assert out["PeersSkexplainMax"] == "6.0"
    assert out["PeersRecursionMax"] == "0.5"
    assert out["PeersRecursionErrMax"] == "0.25"
    assert out["PeersWoodelfErr"] == r"$3\times 10^{-6}$"
    assert out["PeersSkexplainErr"] == "0"


def test_a_peer_not_installed_is_marked_not_dropped(tmp_path):
    rec = _record({"pdpboot auto": 0.1, "pdpboot brute": 0.2, "sklearn brute": 0.3}, {}, {"woodelf": None})
    row = rec["rows"][0]
    assert peer_speed._cell(row, "woodelf", "woodelf", rec["peers"]) == "n.i."
    assert peer_speed._cell(row, "skexplain", "scikit-explain", rec["peers"]) == "--"  # installed, not run
    assert peer_speed.macros(rec)["PeersWoodelfVersion"] == "not installed"


def test_woodelf_skipped_on_a_fully_grown_forest_above_its_row_limit(monkeypatch):
    """Minutes per call at 10k on the full-depth forest: above the limit a fully grown forest gets "--", a depth-limited
    forest and HGB keep woodelf."""
    pytest.importorskip("woodelf")
    X, y = _data()
    grid = [np.linspace(0.2, 0.8, 4)]
    monkeypatch.setattr(bp, "WOODELF_MAX_ROWS_FULL_DEPTH", len(X) - 1)
    full = RandomForestRegressor(3, random_state=0).fit(X, y)
    shallow = RandomForestRegressor(3, max_depth=4, random_state=0).fit(X, y)
    assert "woodelf" not in bp.contenders(full, X, y, [0], grid)
    assert "woodelf" in bp.contenders(shallow, X, y, [0], grid)
    monkeypatch.setattr(bp, "WOODELF_MAX_ROWS_FULL_DEPTH", len(X))
    assert "woodelf" in bp.contenders(full, X, y, [0], grid)
