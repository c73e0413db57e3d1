"""pdpboot against its peers (issue 14): CPU-time ratios, interleaved runs, medians.

Friedman #1 (``pdpboot.datasets`` via scikit-learn's generator, 10 features, noise 1),
one thread (OpenMP/BLAS limited to 1; forests predict with ``n_jobs=1``); every
contender computes the same averaged PD on the same grid (50 points on the 5-95 %
quantiles of ``x0``; 2-D: ``x0`` x ``x1``, 50 x 50), runs are interleaved (one run of
each contender per repeat) and the table shows the median CPU time and the ratio
``peer / pdpboot auto`` (above 1: pdpboot is faster).  Agreement with scikit-learn
brute is printed as the maximum absolute difference.

Peers (``pip install pdpboot[bench]``): scikit-learn ``partial_dependence(method=
"brute")`` and, on forests and HGB, ``method="recursion"`` (a different quantity: it averages over
the training cover of each node, not over the rows; its max |diff| from brute force is printed),
dalex ``model_profile`` (all rows, same grid), effector ``PDP.eval``, scikit-explain
``ExplainToolkit.pd`` (1-D; it evaluates its own grid of as many points from the minimum to the
maximum and centres the curve, so it is compared with scikit-learn brute on that grid, centred),
woodelf (PyPI ``woodelf-explainer``, not ``woodelf``; ``woodelf_fast_pdp``, exact PD of tree
ensembles on any grid given as its "consumer" points; it has no one-feature call, so it computes the
curves of all 10 features at once and is timed against ``pdpboot all p``, pdpboot computing the same
10 curves; on fully grown forests only up to :data:`WOODELF_MAX_ROWS_FULL_DEPTH` rows), and PDPbox
``PDPIsolate`` (same grid) when installed: PDPbox 0.3 declares the full ``xgboost``
package (and sphinx, pytest) as run-time dependencies, which would replace ``xgboost-cpu``,
so it is not in the extra; ``pip install --no-deps pdpbox==0.3.0 pqdm bounded-pool-executor``
works with the extra's pandas / matplotlib; dalex 1.8 pins pandas < 3 (``pip install dalex``
would replace pandas 3 by 2.3): with pandas 3 install it with ``pip install --no-deps dalex==1.8.0``
(a missing peer is reported as "not installed"; :func:`peer_versions`).  A peer that is not
installed is left out of the run, never replaced.  The paper's table comes from
``experiments/peer_speed.py``, which calls :func:`models` and :func:`measure_case`.

Usage::

    python -m benchmarks.bench_peers                # n = 1k and 10k
    python -m benchmarks.bench_peers --quick        # n = 1k, small forests, 1 repeat
    python -m benchmarks.bench_peers --n 1000 10000 100000 --repeats 3
    python -m benchmarks.bench_peers --parallel     # bootstrap n_jobs=2 vs 1 (wall time)
    python -m benchmarks.bench_peers --skexplain-bootstrap 20 --n 1000   # vs scikit-explain's bootstrap
    python -m benchmarks.bench_peers --woodelf-scaling --n 500 1000 2000  # woodelf vs n, full-depth forest
    python -m benchmarks.bench_peers --auto-choice --n 1000      # auto vs tree vs brute, XGBoost / LightGBM
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import time
import warnings

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.inspection import partial_dependence
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from pdpboot import Execution, Grid
from pdpboot.engine import compute_pd, compute_pd_many

#: Peers measured against pdpboot (display name -> importable module); scikit-learn is always there.
PEERS = {"scikit-learn": "sklearn", "dalex": "dalex", "effector": "effector", "PDPbox": "pdpbox",
         "scikit-explain": "skexplain", "woodelf": "woodelf"}
#: Distribution name of a peer where it differs from its display name (PyPI ``woodelf`` is an ELF editor).
DISTRIBUTIONS = {"woodelf": "woodelf-explainer"}
#: A contender whose first timed run takes more CPU seconds than this is not repeated (one run is its median).
SLOW_CPU = 20.0
#: woodelf on a fully grown forest runs up to this many rows: one call took 25-40 s CPU at n = 1k on the
#: 100-tree forest and grows with n (``--woodelf-scaling`` measures it), so at 10k one call takes minutes, more
#: than the peers study's budget on a shared machine; above it the table shows "--".
WOODELF_MAX_ROWS_FULL_DEPTH = 2000
#: Models on which scikit-learn offers ``method="recursion"``.
RECURSION_TYPES = ("HistGradientBoosting", "GradientBoosting", "RandomForest", "ExtraTrees", "DecisionTree")


def cpu_time(fn):
    """(CPU seconds of this process, result) of one call of ``fn``."""
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def peer_versions() -> dict:
    """Installed version of every peer of :data:`PEERS` (None: not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name, module in PEERS.items():
        try:
            mod = importlib.import_module(module)
        except ImportError:
            out[name] = None
            continue
        try:
            out[name] = version(DISTRIBUTIONS.get(name, name))
        except PackageNotFoundError:
            out[name] = str(getattr(mod, "__version__", "unknown"))
    return out


def warm_up() -> None:
    """Run every contender once on a tiny case (imports, numba's compiled-code cache): one-time costs
    of the process that a timed run should not include."""
    X, y = data(200)
    for make in models(quick=True).values():
        est = make().fit(X, y)
        for features, grids in cases(X, two_d=True):
            for fn in contenders(est, X, y, list(features), [g[:5] for g in grids]).values():
                fn()


def models(quick: bool, catboost: bool = False) -> dict:
    """Model name -> factory of the benchmark's models (XGBoost / LightGBM when installed; with
    ``catboost``, CatBoost(100, depth 6) when installed - off by default, so that the paper's peers
    table (``experiments/peer_speed.py``) keeps its rows)."""
    trees = 20 if quick else 100
    out = {
        f"RF({trees}) fully grown": lambda: RandomForestRegressor(trees, random_state=0, n_jobs=1),
        "HGB(100)": lambda: HistGradientBoostingRegressor(max_iter=100, random_state=0),
        "MLP pipeline": lambda: make_pipeline(
            StandardScaler(), MLPRegressor(hidden_layer_sizes=(32, 32), max_iter=300, random_state=0)),
    }
    try:
        import xgboost

        out["XGBoost(100, depth 6)"] = lambda: xgboost.XGBRegressor(n_estimators=100, max_depth=6, n_jobs=1)
    except ImportError:
        pass
    try:
        import lightgbm

        out["LightGBM(100)"] = lambda: lightgbm.LGBMRegressor(n_estimators=100, verbose=-1, n_jobs=1)
    except ImportError:
        pass
    if catboost:
        try:
            import catboost as cb

            out["CatBoost(100, depth 6)"] = lambda: cb.CatBoostRegressor(
                iterations=100, depth=6, thread_count=1, verbose=0, allow_writing_files=False, random_seed=0)
        except ImportError:
            pass
    return out


def contenders(est, X, y, features, grids) -> dict:
    """Name -> zero-argument function returning the averaged PD (flat), for every installed contender.

    ``pdpboot auto`` / ``pdpboot brute`` / ``sklearn brute`` always; ``sklearn recursion`` on the
    models scikit-learn's recursion supports (:data:`RECURSION_TYPES`: it averages over the training
    cover of each node, not over the rows, so it computes a different quantity); for 1-D grids also
    ``dalex``, ``effector``, ``pdpbox`` (PDPbox ``PDPIsolate`` on the same grid, ``n_jobs=1``, the
    model's ``predict`` on the array) and ``skexplain`` (scikit-explain ``ExplainToolkit.pd``: its
    own grid of ``len(grid)`` points from the minimum to the maximum, centred; see
    :func:`references`) when installed; on tree models with woodelf installed ``woodelf``
    (``woodelf_fast_pdp`` on every feature's grid at once: it has no one-feature call, so it returns
    all p curves; ``pdpboot all p`` times pdpboot computing the same p curves).
    """
    custom = dict(zip(features, grids))
    out = {
        "pdpboot auto": lambda: compute_pd(est, X, features, grids, response_method="predict")[0].ravel(),
        "pdpboot brute": lambda: compute_pd(est, X, features, grids, response_method="predict",
                                            method="brute")[0].ravel(),
        "sklearn brute": lambda: partial_dependence(est, X, features, method="brute", kind="average",
                                                    custom_values=custom)["average"].ravel(),
    }
    if _supports_recursion(est):
        out["sklearn recursion"] = lambda: partial_dependence(
            est, X, features, method="recursion", kind="average", custom_values=custom)["average"].ravel()
    if len(features) == 1:
        with warnings.catch_warnings():  # third-party import-time deprecation warnings (matplotlib, pandas)
            warnings.simplefilter("ignore")
            out.update(_one_d_peers(est, X, y, features[0], grids[0]))
    return out


def _supports_recursion(est) -> bool:
    return any(type(est).__name__.startswith(name) for name in RECURSION_TYPES)


def _names(X) -> list[str]:
    return [f"x{j}" for j in range(X.shape[1])]


def _one_d_peers(est, X, y, feature: int, grid) -> dict:
    """The peers that compute one curve (dalex, effector, PDPbox, scikit-explain, woodelf), when installed."""
    out = {}
    names = _names(X)
    try:
        import dalex

        def run_dalex():
            import pandas as pd

            frame = pd.DataFrame(X, columns=names)
            model = _NamedModel(est)
            exp = dalex.Explainer(model, frame, y, verbose=False, predict_function=_NamedModel.predict_fn)
            prof = exp.model_profile(type="partial", N=None, variables=[names[feature]],
                                     variable_splits={names[feature]: grid}, center=False,
                                     verbose=False)
            return prof.result["_yhat_"].to_numpy()

        out["dalex"] = run_dalex
    except ImportError:
        pass
    try:
        import effector

        def run_effector():
            pdp = effector.PDP(data=X, model=est.predict, nof_instances="all")
            return np.asarray(pdp.eval(feature=feature, xs=grid, centering=False)).ravel()

        out["effector"] = run_effector
    except ImportError:
        pass
    try:
        from pdpbox import pdp as pdpbox_pdp

        def run_pdpbox():
            import contextlib
            import io

            import pandas as pd

            frame = pd.DataFrame(X, columns=names)
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                iso = pdpbox_pdp.PDPIsolate(
                    model=est, df=frame, model_features=names, feature=names[feature],
                    feature_name=names[feature], n_classes=0, cust_grid_points=grid, n_jobs=1,
                    pred_func=lambda model, frame: model.predict(np.asarray(frame)))
            return np.asarray(iso.results[0].pdp, dtype=float).ravel()

        out["pdpbox"] = run_pdpbox
    except ImportError:
        pass
    try:
        import skexplain

        def run_skexplain():
            import contextlib
            import io

            import pandas as pd

            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                    warnings.catch_warnings():
                warnings.simplefilter("ignore")
                toolkit = skexplain.ExplainToolkit(estimators=("model", est), X=pd.DataFrame(X, columns=names), y=y)
                ds = toolkit.pd(features=[names[feature]], n_bins=len(grid), n_jobs=1)
            return np.asarray(ds[f"{names[feature]}__model__pd"].values, dtype=float).ravel()

        out["skexplain"] = run_skexplain
    except ImportError:
        pass
    if _is_tree_model(est) and not (_fully_grown_forest(est) and len(X) > WOODELF_MAX_ROWS_FULL_DEPTH):
        try:
            from woodelf.pdp import woodelf_fast_pdp

            all_grids = [np.quantile(X[:, j], np.linspace(0.05, 0.95, len(grid))) for j in range(X.shape[1])]
            all_grids[feature] = np.asarray(grid, dtype=float)

            def run_woodelf():
                import pandas as pd

                frame = pd.DataFrame(X, columns=names)
                points = pd.DataFrame(dict(zip(names, all_grids)))
                with warnings.catch_warnings():  # it predicts the model on a DataFrame (feature-name warning)
                    warnings.simplefilter("ignore")
                    depth = _woodelf_depth(est, names)
                    curves = woodelf_fast_pdp(est, points, frame, centered=False, use_woodelfhd=depth <= 6,
                                              verbose=False)
                return np.asarray(curves[names[feature]], dtype=float).ravel()

            def run_all():
                sets = [[j] for j in range(X.shape[1])]
                res = compute_pd_many(est, X, sets, [[g] for g in all_grids], response_method="predict")
                return res[feature][0].ravel()

            out["woodelf"] = run_woodelf
            out["pdpboot all p"] = run_all
        except ImportError:
            pass
    return out


def _is_tree_model(est) -> bool:
    name = type(est).__name__
    return name.startswith(("RandomForest", "ExtraTrees", "HistGradientBoosting", "GradientBoosting", "XGB", "LGBM"))


def _fully_grown_forest(est) -> bool:
    return type(est).__name__.startswith(("RandomForest", "ExtraTrees")) and est.max_depth is None \
        and est.min_samples_leaf == 1 and est.max_leaf_nodes is None


def _woodelf_depth(est, names) -> int:
    """The maximum depth woodelf reads (its own rule: WoodelfHD for depth <= 6, as ``woodelf_pdp`` chooses)."""
    from woodelf.core.trees.parse_models import load_decision_tree_ensemble_model

    return int(load_decision_tree_ensemble_model(est, names).max_depth)


def references(est, X, features, grids, results: dict) -> dict:
    """Max |contender - scikit-learn brute| per contender, computed on the contender's own quantity.

    scikit-explain evaluates its own grid (minimum to maximum) and centres the curve: it is compared with
    scikit-learn brute on that grid, centred the same way (its grid is read back from the toolkit).
    Every other contender is compared with scikit-learn brute on the common grid.
    """
    custom = dict(zip(features, grids))
    ref = results.get("sklearn brute")
    if ref is None:
        ref = partial_dependence(est, X, features, method="brute", kind="average",
                                 custom_values=custom)["average"].ravel()
    out = {}
    for key, res in results.items():
        if key == "skexplain":
            j = features[0]
            own = np.linspace(X[:, j].min(), X[:, j].max(), len(grids[0]))
            brute = partial_dependence(est, X, [j], method="brute", kind="average",
                                       custom_values={j: own})["average"].ravel()
            out[key] = float(np.max(np.abs(res - (brute - brute.mean()))))
        else:
            out[key] = float(np.max(np.abs(np.asarray(res) - ref)))
    return out


class _NamedModel:
    """dalex passes DataFrames; the models were fitted on arrays."""

    def __init__(self, est):
        self.est = est

    @staticmethod
    def predict_fn(model, frame):
        return model.est.predict(np.asarray(frame))


def data(n: int):
    """Friedman #1 (10 features, noise sd 1), the benchmark's data set of size ``n``."""
    return make_friedman1(n_samples=n, n_features=10, noise=1.0, random_state=0)


def cases(X, two_d: bool) -> list:
    """(features, grids): the 50-point curve of x0 and, with ``two_d``, the 50 x 50 surface of (x0, x1)."""
    grid = [np.quantile(X[:, j], np.linspace(0.05, 0.95, 50)) for j in (0, 1)]
    return [((0,), grid[:1])] + ([((0, 1), grid)] if two_d else [])


def measure_case(est, X, y, features, grids, repeats: int, *, sklearn_2d: bool = False) -> dict:
    """Interleaved CPU timings of every installed contender on one fitted model and grid.

    Returns ``{"grid", "times" (name -> median CPU s), "all_times" (name -> list), "err"
    (max |pdpboot - scikit-learn brute| over pdpboot's engines; pdpboot brute is the
    reference when scikit-learn did not run), "errs" (name -> max |contender - scikit-learn
    brute|, see :func:`references`), "load" (load average before and after)}``.
    scikit-learn brute on a 2-D grid runs only with ``sklearn_2d`` (slow: 2,500 points). A
    contender whose first run takes more than :data:`SLOW_CPU` CPU seconds runs once.
    """
    run = contenders(est, X, y, list(features), grids)
    if len(features) == 2 and not sklearn_2d:
        run.pop("sklearn brute")
    load = [load_average()]
    times = {k: [] for k in run}
    results = {}
    for rep in range(repeats):
        for key, fn in run.items():
            if rep and times[key][0] > SLOW_CPU:
                continue
            t, res = cpu_time(fn)
            times[key].append(t)
            results[key] = res
    load.append(load_average())
    med = {k: statistics.median(v) for k, v in times.items()}
    ref = results.get("sklearn brute", results["pdpboot brute"])
    err = max(float(np.max(np.abs(r - ref))) for k, r in results.items() if k.startswith("pdpboot"))
    errs = references(est, X, list(features), grids, results)
    return {"grid": "x".join(str(len(g)) for g in grids), "times": med, "all_times": times, "err": err,
            "errs": errs, "load": load}


def _table(ns, repeats: int, quick: bool, two_d: bool) -> list[dict]:
    rows = []
    for n in ns:
        X, y = data(n)
        for name, make in models(quick, catboost=True).items():
            est = make().fit(X, y)
            # 2-D brute at 10k: minutes per run
            for features, grids in cases(X, two_d and name.startswith("RF") and n <= 2000):
                rows.append({"n": n, "model": name, **measure_case(est, X, y, features, grids, repeats)})
                _print_row(rows[-1])
    return rows


def _print_row(row: dict) -> None:
    base = row["times"]["pdpboot auto"]
    errs = row.get("errs", {})
    parts = [f"{k} {v:.3f}s ({v / base:.2f}x, |diff| {errs.get(k, float('nan')):.0e})"
             for k, v in row["times"].items()]
    if "woodelf" in row["times"]:
        parts.append(f"woodelf / pdpboot all p {row['times']['woodelf'] / row['times']['pdpboot all p']:.2f}x")
    print(f"n={row['n']:>6} {row['model']:<22} grid {row['grid']:<6} " + " | ".join(parts)
          + f" | max |pdpboot - ref| {row['err']:.1e}", flush=True)


def _parallel(n: int, resamples: int, repeats: int) -> None:
    """Bootstrap wall time with n_jobs=2 vs 1 (interleaved; needs an idle machine to mean much).

    The first ``n_jobs=2`` call of a process starts the worker processes (imports, numba cache
    load); it is timed apart ("cold") and the warm calls, which reuse joblib's workers, are
    interleaved with the ``n_jobs=1`` calls.
    """
    from pdpboot import bootstrap_partial_dependence

    X, y = data(n)
    for name, est in [("RF(50, leaf 5)", RandomForestRegressor(50, min_samples_leaf=5, n_jobs=1)),
                      ("HGB(100)", HistGradientBoostingRegressor(max_iter=100))]:
        def run(jobs: int, est=est) -> float:
            start = time.perf_counter()
            bootstrap_partial_dependence(est, X, y, [0, 1, 2], n_resamples=resamples, rng=0,
                                         execution=Execution(n_jobs=jobs, progress=False))
            return time.perf_counter() - start

        cold = run(2)
        times = {1: [], 2: []}
        for _ in range(repeats):
            for jobs in (1, 2):
                times[jobs].append(run(jobs))
        one, two = statistics.median(times[1]), statistics.median(times[2])
        print(f"bootstrap n={n} B={resamples} {name}: n_jobs=1 {one:.1f}s, n_jobs=2 {two:.1f}s warm "
              f"(first call {cold:.1f}s), speed-up {one / two:.2f}x warm, {one / cold:.2f}x first call "
              f"(load average {load_average():.1f})", flush=True)


def skexplain_bootstrap(n: int, resamples: int, repeats: int) -> list[dict]:
    """pdpboot's refit bootstrap against scikit-explain's bootstrapped PD at the same B (CPU time, interleaved).

    They compute different things: scikit-explain's ``pd(n_bootstrap=B)`` keeps the one fitted model and
    resamples only the background rows it averages over (so its band leaves out the model's refit-to-refit
    variation), pdpboot refits the model on every resample. Both on the 50-point curve of ``x0`` (scikit-explain
    on its own minimum-to-maximum grid); the mean width of the 95 % percentile band of each is printed too.
    """
    import contextlib
    import io

    import pandas as pd
    import skexplain

    from pdpboot import bootstrap_partial_dependence, confidence_bands

    X, y = data(n)
    names = _names(X)
    out = []
    for name, make in [("HGB(100)", lambda: HistGradientBoostingRegressor(max_iter=100, random_state=0)),
                       ("RF(100) fully grown", lambda: RandomForestRegressor(100, random_state=0, n_jobs=1))]:
        est = make().fit(X, y)

        def run_pdpboot(make=make):
            return bootstrap_partial_dependence(make(), X, y, [0], n_resamples=resamples, grid=Grid(50),
                                                rng=0, execution=Execution(n_jobs=1, progress=False))

        def run_skexplain(est=est):
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                toolkit = skexplain.ExplainToolkit(estimators=("model", est), X=pd.DataFrame(X, columns=names), y=y)
                return toolkit.pd(features=["x0"], n_bins=50, n_jobs=1, n_bootstrap=resamples)

        times = {"pdpboot": [], "skexplain": []}
        for _ in range(repeats):
            t, res = cpu_time(run_pdpboot)
            times["pdpboot"].append(t)
            t, ds = cpu_time(run_skexplain)
            times["skexplain"].append(t)
        band = confidence_bands(res)["x0"]["pd_band"].values
        width_pdpboot = float(np.mean(band[1] - band[0]))
        curves = np.asarray(ds["x0__model__pd"].values)
        width_skexplain = float(np.mean(np.diff(np.quantile(curves, [0.025, 0.975], axis=0), axis=0)))
        row = {"n": n, "model": name, "B": resamples, "pdpboot": statistics.median(times["pdpboot"]),
               "skexplain": statistics.median(times["skexplain"]), "width_pdpboot": width_pdpboot,
               "width_skexplain": width_skexplain, "load": load_average()}
        out.append(row)
        print(f"bootstrap n={n} B={resamples} {name}: pdpboot (refits) {row['pdpboot']:.2f}s CPU, scikit-explain "
              f"(background only) {row['skexplain']:.2f}s CPU, ratio {row['skexplain'] / row['pdpboot']:.2f}x; "
              f"mean 95 % band width pdpboot {width_pdpboot:.3f}, scikit-explain {width_skexplain:.3f} "
              f"(scikit-explain's {width_pdpboot / width_skexplain:.1f}x narrower); load {row['load']:.1f}", flush=True)
    return out


def woodelf_scaling(ns, trees: int = 10) -> list[dict]:
    """woodelf's CPU time on a fully grown forest against n (all 10 curves, one run each), with pdpboot's
    time for the same 10 curves and the growth exponent between consecutive n (why the peers table stops
    woodelf at :data:`WOODELF_MAX_ROWS_FULL_DEPTH` rows on the full-depth forest)."""
    global WOODELF_MAX_ROWS_FULL_DEPTH
    limit, WOODELF_MAX_ROWS_FULL_DEPTH = WOODELF_MAX_ROWS_FULL_DEPTH, max(ns)  # this measurement has no row limit
    try:
        return _woodelf_scaling(ns, trees)
    finally:
        WOODELF_MAX_ROWS_FULL_DEPTH = limit


def _woodelf_scaling(ns, trees: int) -> list[dict]:
    out = []
    for n in ns:
        X, y = data(n)
        est = RandomForestRegressor(trees, random_state=0, n_jobs=1).fit(X, y)
        grid = np.quantile(X[:, 0], np.linspace(0.05, 0.95, 50))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run = _one_d_peers(est, X, y, 0, grid)
        times = {key: cpu_time(run[key])[0] for key in ("woodelf", "pdpboot all p")}
        out.append({"n": n, **times})
        growth = ""
        if len(out) > 1:
            a, b = out[-2], out[-1]
            growth = f", exponent in n {np.log(b['woodelf'] / a['woodelf']) / np.log(b['n'] / a['n']):.2f}"
        print(f"woodelf RF({trees}) fully grown n={n}: {times['woodelf']:.2f}s CPU for 10 curves, pdpboot "
              f"{times['pdpboot all p']:.3f}s ({times['woodelf'] / times['pdpboot all p']:.0f}x){growth}; "
              f"load {load_average():.1f}", flush=True)
    return out


def auto_choice(n: int, repeats: int) -> None:
    """pdpboot ``auto`` against the forced exact tree engine and brute force on XGBoost / LightGBM, one curve
    and all 10 curves (``compute_pd_many``), a freshly fitted model per call (no cached reading): whether
    the cost model's rule "reading the dump costs more than brute force" holds at this n."""
    X, y = data(n)
    grids = [[np.quantile(X[:, j], np.linspace(0.05, 0.95, 50))] for j in range(X.shape[1])]
    sets = [[j] for j in range(X.shape[1])]
    for name, make in models(quick=False).items():
        if not name.startswith(("XGBoost", "LightGBM")):
            continue
        times: dict = {}
        for _ in range(repeats):
            for method in ("auto", "tree", "brute"):
                for p in (1, len(sets)):
                    est = make().fit(X, y)
                    t, _ = cpu_time(lambda est=est, method=method, p=p: compute_pd_many(
                        est, X, sets[:p], grids[:p], response_method="predict", method=method))
                    times.setdefault((method, p), []).append(t)
        print(f"n={n} {name}: " + ", ".join(f"{m} {p} curve{'s' if p > 1 else ''} {statistics.median(v):.3f}s"
                                            for (m, p), v in times.items())
              + f" (CPU medians of {repeats}; load {load_average():.1f})", flush=True)


def load_average() -> float:
    """One-minute load average (NaN where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return float("nan")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="n = 1k, 20 trees, one repeat")
    parser.add_argument("--no-2d", action="store_true", help="skip the 50 x 50 RF surface")
    parser.add_argument("--parallel", action="store_true", help="bootstrap n_jobs=2 vs 1 only")
    parser.add_argument("--skexplain-bootstrap", type=int, metavar="B",
                        help="only pdpboot's refit bootstrap vs scikit-explain's background bootstrap at B resamples")
    parser.add_argument("--auto-choice", action="store_true",
                        help="only pdpboot auto vs forced tree engine vs brute on XGBoost / LightGBM")
    parser.add_argument("--woodelf-scaling", action="store_true",
                        help="only woodelf's CPU time against n on a fully grown RF(10) (use --n)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    if args.auto_choice:
        with threadpool_limits(limits=1):
            warm_up()
            for n in args.n:
                auto_choice(n, args.repeats)
        return
    if args.woodelf_scaling:
        with threadpool_limits(limits=1):
            warm_up()
            woodelf_scaling(args.n)
        return
    if args.skexplain_bootstrap:
        with threadpool_limits(limits=1):
            for n in args.n:
                skexplain_bootstrap(n, args.skexplain_bootstrap, 1 if args.quick else args.repeats)
        return
    if args.parallel:
        _parallel(2000, 8 if args.quick else 40, 1 if args.quick else 3)
        return
    ns = [1000] if args.quick else args.n
    repeats = 1 if args.quick else args.repeats
    print(f"load average at start: {load_average():.1f}")
    with threadpool_limits(limits=1):
        warm_up()
        _table(ns, repeats, args.quick, two_d=not args.no_2d)


if __name__ == "__main__":
    main()
