"""The paper's experiments: quick mode produces every file main.tex needs; small helpers are right."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from pdpboot import Grid

ROOT = Path(__file__).resolve().parents[2]
MAIN_TEX = ROOT / "paper" / "main.tex"


def _paper_source(path: Path = MAIN_TEX, depth: int = 0) -> str:
    """main.tex, comments stripped, with the fragments it inputs from paper/ (``sections/...``) inlined."""
    tex = re.sub(r"(?<!\\)%.*", "", path.read_text())
    if depth > 3:
        return tex

    def inline(match):
        part = MAIN_TEX.parent / f"{match.group(1).removesuffix('.tex')}.tex"
        return _paper_source(part, depth + 1) if part.is_file() else match.group(0)

    return re.sub(r"\\input\{(sections/[^}]+)\}", inline, tex)


def _referenced_files(tex: str) -> list[str]:
    """Targets of \\includegraphics and \\input in a LaTeX source (comments stripped)."""
    tex = re.sub(r"(?<!\\)%.*", "", tex)
    graphics = re.findall(r"\\includegraphics(?:\[[^\]]*\])?\{([^}]+)\}", tex)
    inputs = re.findall(r"\\input\{([^}]+)\}", tex)
    return graphics + inputs


def _resolve(folder: Path, target: str) -> Path | None:
    for candidate in (target, f"{target}.tex", f"{target}.pdf", f"{target}.png"):
        path = folder / candidate
        if path.is_file():
            return path
    return None


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory) -> Path:
    """Run ``python -m experiments all --quick`` once into a temporary folder (not paper/)."""
    base = tmp_path_factory.mktemp("experiments")
    paper = base / "paper"
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, "-m", "experiments", "all", "--quick", "--results-dir", str(base / "results"),
         "--paper-dir", str(paper)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return paper


@pytest.mark.paper
def test_quick_mode_produces_everything_main_tex_uses(quick_run):
    targets = _referenced_files(_paper_source())
    assert any(t.startswith("figures/") for t in targets) and any(t.startswith("tables/") for t in targets)
    missing = [t for t in targets if _resolve(quick_run, t) is None]
    assert not missing, f"main.tex references files quick mode did not produce: {missing}"


@pytest.mark.paper
def test_every_generated_macro_used_in_main_tex_is_defined(quick_run):
    defined = set()
    for path in (quick_run / "generated").glob("*.tex"):
        defined |= set(re.findall(r"\\newcommand\{\\([A-Za-z]+)\}", path.read_text()))
    tex = re.sub(r"(?<!\\)%.*", "", _paper_source())
    prefixes = ("Cov", "Diag", "Elec", "Het", "Cost", "Bike", "Anes", "Run", "Molnar", "Ale", "Debiased", "Compute",
                "Speed")
    used = {m for m in re.findall(r"\\([A-Za-z]+)", tex) if m.startswith(prefixes)}
    assert used, "main.tex quotes no generated number"
    assert not used - defined, f"undefined generated macros: {sorted(used - defined)}"


@pytest.mark.paper
def test_figures_are_small_pdfs(quick_run):
    figures = sorted((quick_run / "figures").glob("*.pdf"))
    assert figures
    for path in figures:
        assert path.read_bytes()[:5] == b"%PDF-"
        assert path.stat().st_size < 2_000_000, path.name


def test_least_squares_matches_sklearn():
    from experiments.learners import LeastSquares

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.3 * X[:, 0] * X[:, 1] + rng.normal(size=200)
    design = np.column_stack([X, X[:, 0] * X[:, 1]])
    expected = LinearRegression().fit(design, y).predict(design)
    np.testing.assert_allclose(LeastSquares(interaction=True).fit(X, y).predict(X), expected, rtol=1e-10)


def test_molnar_interval_uses_the_corrected_variance():
    from scipy import stats

    from experiments.learners import LeastSquares
    from experiments.molnar import corrected_t_interval

    rng = np.random.default_rng(1)
    X = rng.uniform(size=(300, 2))
    y = X[:, 0] - X[:, 1] + rng.normal(size=300)
    grid = np.linspace(0.1, 0.9, 5)
    out = corrected_t_interval(LeastSquares(), X, y, [0], [grid], n_refits=10, train_fraction=0.7, rng=3)
    # Recompute from the definition with the same subsamples and hold-out sets.
    gen = np.random.default_rng(3)
    curves = []
    for _ in range(10):
        order = gen.permutation(300)
        train, test = order[:210], order[210:]
        model = LeastSquares().fit(X[train], y[train])
        curves.append([model.predict(np.column_stack([np.full(90, g), X[test, 1]])).mean() for g in grid])
    curves = np.array(curves)
    se = np.sqrt(curves.var(axis=0, ddof=1) * (1 / 10 + 90 / 210))
    half = stats.t.ppf(0.975, 9) * se
    np.testing.assert_allclose(out["estimate"], [curves.mean(axis=0)], rtol=1e-10)
    np.testing.assert_allclose(out["upper"] - out["lower"], [2 * half], rtol=1e-10)


def test_macro_names_must_be_letters(tmp_path):
    from experiments._common import write_macros

    write_macros(tmp_path / "ok.tex", {"CovA": "0.95"})
    assert r"\newcommand{\CovA}{0.95}" in (tmp_path / "ok.tex").read_text()
    with pytest.raises(ValueError, match="letters only"):
        write_macros(tmp_path / "bad.tex", {"Cov2": "0.95"})


@pytest.mark.paper
def test_walkthrough_listings_of_the_paper_run(tmp_path):
    """The code printed in the paper's walkthrough runs (smaller B and forests) and computes sane bands."""
    from experiments import walkthrough

    ns = walkthrough.run(fast=True, folder=tmp_path)
    assert ns["res"].attrs["n_resamples"] == 20
    lower, upper = ns["lower"].values, ns["upper"].values
    pointwise = ns["pdpboot"].get_node(ns["bands"], "Temperature").ds["pd_band_pointwise"]
    assert np.all(lower < upper)
    # The simultaneous (calibrated percentile) band contains the pointwise one at every grid point.
    assert np.all(lower <= pointwise.sel(ci_bound="lower").values + 1e-12)
    assert np.all(pointwise.sel(ci_bound="upper").values <= upper + 1e-12)
    assert 0 < ns["test"].attrs["pvalue"] <= 1
    assert (tmp_path / "hour.pdf").read_bytes()[:5] == b"%PDF-"
    import xarray as xr

    xr.testing.assert_identical(ns["again"], ns["bands"])


def test_walkthrough_listings_are_found_and_shrunk():
    from experiments import walkthrough

    code = "\n".join(walkthrough.listings())
    assert "bootstrap_partial_dependence" in code and "confidence_bands" in code
    small = walkthrough.shrink(code)
    assert "n_resamples=200" in code and "n_resamples=200" not in small


def test_closed_form_least_squares_refits_match_the_package():
    """The diagnosis study's closed-form refits equal pdpboot's PD of a refit over the resample's rows."""
    import pdpboot
    from experiments.coverage_diagnosis import _resample_counts, ols_bootstrap_pd
    from experiments.learners import LeastSquares

    gen = np.random.default_rng(3)
    X = gen.normal(size=(60, 2))
    y = X[:, 0] + X[:, 1] + X[:, 0] * X[:, 1] + gen.normal(size=60)
    grid = np.linspace(-1.5, 1.5, 5)
    counts = _resample_counts(gen, 60, 2)
    assert (counts.sum(axis=1) == 60).all()
    for interaction in (True, False):
        closed = ols_bootstrap_pd(X, y, counts, grid, interaction)
        for b in range(2):
            rows = np.repeat(np.arange(60), counts[b])
            model = LeastSquares(interaction=interaction).fit(X[rows], y[rows])
            ref = pdpboot.partial_dependence(model, X[rows], [0, 1], grid=Grid(custom_values={0: grid, 1: grid}))
            for j in (0, 1):
                np.testing.assert_allclose(closed[b, j], pdpboot.get_node(ref, f"x{j}").ds["pd"].isel(output=0),
                                           atol=1e-10)


def test_predicted_percentile_coverage_matches_simulation():
    """(B + 1 - 2h)/(B + 1): a new draw falls between NumPy's 2.5 and 97.5 % quantiles of B draws."""
    from experiments.coverage_diagnosis import predicted_percentile_coverage

    gen = np.random.default_rng(0)
    for b, trials in ((200, 40_000), (40, 40_000)):
        draws = gen.standard_normal((trials, b + 1))
        lo, hi = np.quantile(draws[:, :b], [0.025, 0.975], axis=1)
        covered = float(np.mean((lo <= draws[:, b]) & (draws[:, b] <= hi)))
        expected = predicted_percentile_coverage(b)
        assert abs(covered - expected) < 4 * np.sqrt(expected * (1 - expected) / trials), (b, covered, expected)
    assert predicted_percentile_coverage(200) < 0.945 < predicted_percentile_coverage(2000)


def _fake_coverage(monkeypatch, calls: list):
    """Replace the coverage study's model fits by a cheap function of each repetition's seed."""
    from experiments import coverage as S

    def one_repetition(sc, quick, seed, cfg):
        value = float(seed.generate_state(1)[0] % 1000)
        calls.append(sc["label"] + str(sc["n"]) + sc["learner"])
        shape = (len(sc["features"]), len(sc["grid"]))
        return {"estimate": np.full(shape, value), "resamples": [np.full((sc["B"], *shape), value, np.float32)
                                                                 for _ in sc["backgrounds"]],
                **{f"molnar_{k}": np.full((len(cfg["molnar_fractions"]), *shape), value)
                   for k in ("estimate", "lower", "upper")}}

    def truth_fit(sc, quick, n, seed, n_background):
        return np.full((len(sc["features"]), len(sc["grid"])), float(seed.generate_state(1)[0] % 1000))

    monkeypatch.setattr(S, "_one_repetition", one_repetition)
    monkeypatch.setattr(S, "_truth_fit", truth_fit)
    monkeypatch.setattr(S, "_molnar_repetition", lambda seed, sc, fractions, refits, grid: np.zeros(
        (len(fractions), 2, len(grid))))
    return S


def test_coverage_compute_is_round_robin_and_resumes_to_the_same_study(tmp_path, monkeypatch):
    """Every scenario gets a chunk before any gets a second; a stopped run resumes to the same repetitions."""
    from experiments import _common as C
    from experiments.config import config

    calls: list = []
    S = _fake_coverage(monkeypatch, calls)
    cfg = config("coverage", True)
    names = S._ordered(cfg)
    full = C.Context(quick=True, results_dir=tmp_path / "full", paper_dir=tmp_path / "p", n_jobs=1)
    S.compute(full)
    first_round = [calls[sum(cfg["scenarios"][m].get("chunk", cfg["chunk"]) for m in names[:i])]
                   for i in range(len(names))]
    expected = [(sc := cfg["scenarios"][m])["label"] + str(sc["n"]) + sc["learner"] for m in names]
    assert first_round == expected
    assert len(calls) == sum(cfg["scenarios"][m]["R"] for m in names)

    # Stop a run after a few chunks (as by a kill between chunks), then resume it.
    stopped = C.Context(quick=True, results_dir=tmp_path / "stopped", paper_dir=tmp_path / "p", n_jobs=1)
    work = [S._scenario_work(stopped, cfg, m) for m in names]
    for w in work[:3]:
        next(w)
    S.compute(stopped)
    for name in names:
        a, truth_a = S.load_scenario(full, name)
        b, truth_b = S.load_scenario(stopped, name)
        assert list(a["rep"].values) == list(range(cfg["scenarios"][name]["R"]))
        np.testing.assert_array_equal(a["estimate"].values, b["estimate"].values)
        np.testing.assert_array_equal(truth_a["learner_pd"].values, truth_b["learner_pd"].values)
        if cfg["scenarios"][name]["truth"] == "simulated":
            assert truth_a.attrs["truth_fits"] == cfg["scenarios"][name]["truth_fits"]


def test_coverage_chunks_of_any_size_give_the_same_repetitions(tmp_path, monkeypatch):
    """Repetition i uses the i-th seed whatever the chunking (existing caches stay valid)."""
    from experiments import _common as C
    from experiments.config import config

    S = _fake_coverage(monkeypatch, [])
    cfg = config("coverage", True)
    name = "A_n200"
    runs = {}
    for size in (1, 4):
        cfg["scenarios"][name]["chunk"] = size
        monkeypatch.setattr(S, "config", lambda study, quick, cfg=cfg: cfg)
        ctx = C.Context(quick=True, results_dir=tmp_path / str(size), paper_dir=tmp_path / "p", n_jobs=1)
        for _ in S._scenario_work(ctx, cfg, name):
            pass
        runs[size] = S.load_scenario(ctx, name)[0]
        assert len(list((tmp_path / str(size) / "coverage" / name).glob("chunk_*.nc"))) == -(-6 // size)
    np.testing.assert_array_equal(runs[1]["estimate"].values, runs[4]["estimate"].values)
    seeds = C.seed_sequence(cfg["seed"], name).spawn(cfg["scenarios"][name]["R"])
    assert runs[1]["estimate"].values[:, 0, 0].tolist() == [float(s.generate_state(1)[0] % 1000) for s in seeds]


def test_next_chunk_fills_gaps_without_overlap():
    from experiments.coverage import _next_chunk

    assert _next_chunk({}, 10, 4) == (0, 4)
    assert _next_chunk(dict.fromkeys(range(0, 3)), 10, 4) == (3, 7)
    assert _next_chunk(dict.fromkeys([0, 1, 5]), 10, 50) == (2, 5)  # stops before an existing chunk
    assert _next_chunk(dict.fromkeys(range(10)), 10, 4) is None


def _fake_heterogeneity(monkeypatch, calls: list):
    """experiments.heterogeneity with the refit test replaced by a function of its seed (no fits), no bootstraps."""
    from experiments import heterogeneity as S

    def one_test(dgp, pair, cfg, seed):
        calls.append(dgp + "".join(pair))
        value = float(seed.generate_state(1)[0] % 1000)
        return value, value / 1000

    monkeypatch.setattr(S, "_one_test", one_test)
    monkeypatch.setattr(S, "_bootstrap", lambda ctx, cfg, dgp: False)
    return S


def test_heterogeneity_tests_run_round_robin_and_resume_to_the_same_repetitions(tmp_path, monkeypatch):
    """Every refit-test setting gets a chunk before any gets a second; a stopped run resumes to the same reps."""
    from experiments import _common as C
    from experiments.config import config

    calls: list = []
    S = _fake_heterogeneity(monkeypatch, calls)
    cfg = config("heterogeneity", True)
    cfg["test"].update(reps_null=5, reps_power=3, chunk={"null": 2, "power": 1})
    monkeypatch.setattr(S, "config", lambda study, quick: cfg)
    full = C.Context(quick=True, results_dir=tmp_path / "full", paper_dir=tmp_path / "p", n_jobs=1)
    S.compute(full)
    first = [dgp + "".join(pair) for dgp, pair, _ in S.TESTS.values()]
    # round 1: 2 reps of each null setting, 1 of each power setting, in TESTS order
    assert calls[:7] == [first[0]] * 2 + [first[1]] * 2 + first[2:]
    assert len(calls) == 2 * 5 + 3 * 3

    stopped = C.Context(quick=True, results_dir=tmp_path / "stopped", paper_dir=tmp_path / "p", n_jobs=1)
    S._test_chunk(stopped, cfg, "goldstein_x1x2", [0, 1, 2])  # an earlier run's larger chunk
    S.compute(stopped)
    for name in S.TESTS:
        a, b = S._assemble_tests(full, cfg, name), S._assemble_tests(stopped, cfg, name)
        planned = S._planned_reps(cfg, name)
        assert a["rep"].values.tolist() == list(range(planned)) and a.attrs["reps_reached"] == planned
        np.testing.assert_array_equal(a["statistic"].values, b["statistic"].values)
        seeds = C.seed_sequence(cfg["seed"], name, "test").spawn(planned)
        assert a["statistic"].values.tolist() == [float(s.generate_state(1)[0] % 1000) for s in seeds]


def test_speed_macros_take_the_latest_matching_benchmark_record(tmp_path):
    """The engine paragraph's numbers come from JSON lines; the newest record of a setting wins, gaps read --."""
    import json

    from experiments.cost import benchmark_records, speed_macros

    old = {"times": {"kernel": 1.0, "brute": 4.0}, "speedup_vs_brute": 4.0, "n": 1000, "trees": 100,
           "fixed_model_rows": None, "grid": "50", "date": "2026-11-30 10:00"}
    new = dict(old, times={"kernel": 1.0, "brute": 6.0, "numpy": 3.0}, speedup_vs_brute=6.0,
               date="2026-11-30 12:00")
    fixed = [{"times": {"kernel": t, "brute": 10 * n / 1000}, "n": n, "trees": 100, "fixed_model_rows": 10000,
              "grid": "50", "date": "2026-11-30 11:00"} for n, t in ((1000, 1.0), (10000, 2.0), (100000, 8.0))]
    share = {"model": "hgb", "n": 20000, "resamples": 20, "ratio": 1.3143, "fit_cpu": 14.0, "fits": 21}
    ab = [dict(share, ratio=1.2, shared_walk=True, repeats=3, date="2026-11-30 22:00"),
          dict(share, ratio=1.4, shared_walk=False, repeats=3, date="2026-11-30 22:00"),  # an A/B run: off arm last
          dict(share, ratio=1.1, shared_walk=True, date="2026-11-30 23:00")]  # a later plain run: not of the pair
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(r) for r in [new, share, *fixed]) + "\nnot json\n")
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps(r) for r in ab) + "\n")
    (tmp_path / "b.jsonl").write_text(json.dumps(old) + "\n")
    macros, missing = speed_macros(benchmark_records(tmp_path))
    assert macros["SpeedKernelOneK"] == "6.0" and macros["SpeedNumpyOneK"] == "3.0"
    assert macros["SpeedFixedExpKernel"] == f"{np.log(8) / np.log(100):.2f}"  # 1000 -> 100000
    assert macros["SpeedFixedExpKernelUpper"] == f"{np.log(4) / np.log(10):.2f}"
    assert macros["SpeedFixedExpBrute"] == "1.00" and macros["SpeedFixedHundredK"] == "125"
    assert macros["SpeedFitShareHGBLarge"] == "1.10" and macros["SpeedFitShareHGBLargeSeparate"] == "1.40"
    assert macros["SpeedFitShareHGBLargeB"] == "20"
    assert "from 1.40 (one walk per feature set) to 1.20, medians of 3" in macros["SpeedSharedWalkText"]
    assert "would avoid" in speed_macros([])[0]["SpeedSharedWalkText"]  # no A/B record: the plan, not a result
    assert macros["SpeedFitShareHGBLargeFit"] == "0.67"
    assert macros["SpeedKernelTenK"] == "--" and any("n=10000" in m for m in missing)
    assert macros["SpeedFitShareRFLarge"] == "--"
