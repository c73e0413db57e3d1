r"""One-fit variance of a bagged forest's partial dependence: the estimator of the forest_ij study.

Experimental, outside the package: it under-covered in ``experiments/forest_ij.py``.

The infinitesimal jackknife (IJ) and the jackknife-after-bootstrap of Wager,
Hastie & Efron (2014, JMLR 15, "Confidence intervals for random forests: the
jackknife and the infinitesimal jackknife"), extended from a prediction to the
partial dependence (PD), which also averages over the data rows.

Notation.  ``n`` training rows, which are also the background rows of the PD;
``B`` trees; ``N_bi`` the number of times row ``i`` is in tree ``b``'s bootstrap
sample (``m = sum_i N_bi`` draws per tree, ``m = n`` unless ``max_samples`` is
set); ``T_b(x)`` tree ``b``'s response; at a grid point ``z`` of the features
``S`` (complement ``C``)::

    ICE_bi(z) = T_b(z, x_iC)                  tree b's ICE of row i
    PD_b(z)   = (1/n) sum_i ICE_bi(z)         tree b's PD (= t_b of the paper)
    ICE_i(z)  = (1/B) sum_b ICE_bi(z)         the forest's ICE of row i
    PD(z)     = (1/B) sum_b PD_b(z) = (1/n) sum_i ICE_i(z)

Derivation of the influence.  Write the PD as a functional of a probability
vector ``P`` on the rows (``P0 = (1/n, ..., 1/n)`` is the data)::

    theta(P) = sum_j P_j f_P(z, x_jC),     f_P(x) = E_{N ~ Mult(m, P)} T_N(x),

where ``f_P`` is the ideal (B -> infinity) bagged predictor fitted to bootstrap
samples drawn from ``P``: the first ``P`` is the averaging over the rows, the
second the fit.  Efron's IJ takes the derivative along ``P0 + eps (e_i - P0)``.
Because ``d/dP_j log Mult(N; m, P) = N_j / P_j``, the derivative of
``f_P(x)`` in that direction is ``sum_j (delta_ij - 1/n) N_j / P0_j`` inside
the expectation, i.e. ``n E[(N_i - m/n) T_N(x)] = n Cov(N_i, T_N(x))``.  The
product rule gives::

    d theta / d eps = n Cov_*(N_i, PD_*(z)) + (ICE_i(z) - PD(z))

(fit part: the tree-level PD over the fixed rows; averaging part: the row's
centred ICE value).  The IJ variance is ``sum_i (d theta/d eps)^2 / n^2``, so
with the influence vector::

    U_i(z) = Cov_b(N_bi, PD_b(z)) + (ICE_i(z) - PD(z)) / n
    V_IJ(z) = sum_i U_i(z)^2

where ``Cov_b`` is the covariance over the B trees,
``(1/B) sum_b (N_bi - m/n)(PD_b(z) - PD(z))`` (the centring of ``N`` does not
matter because the ``PD_b - PD`` sum to zero).  Without the second term this is
the IJ of Wager et al. for the prediction ``PD``; without the first it is the
plug-in variance of a mean of the (fixed) ICE values.  The covariance of
``V_IJ`` across grid points is ``sum_i U_i(z) U_i(z')``, which a Gaussian
multiplier ``sum_i xi_i U_i(z)`` reproduces (sup-t bands).

Finite-B bias correction (Wager et al., the ``V_IJ-U`` estimator).  Each
``Cov_b`` is estimated from B trees, with Monte Carlo variance about
``Var(N_bi) Var_b(PD_b) / B``; summed over rows this adds
``sum_i Var(N_bi) * v / B`` to ``V_IJ``, ``v = (1/B) sum_b (PD_b - PD)^2``.  With
``Var(N_bi) = (m/n)(1 - 1/n) ~ m/n`` this is the paper's correction::

    V_IJ-U(z) = V_IJ(z) - (m / B^2) sum_b (PD_b(z) - PD(z))^2      (m = n: n/B^2)

The averaging term ``(ICE_i - PD)/n`` is itself an average over B trees; its
Monte Carlo noise is smaller by a factor ``n`` and is not corrected.

Jackknife-after-bootstrap (comparator).  Deleting row ``i`` keeps the trees
with ``N_bi = 0`` (set ``O_i``) and drops row ``i`` from the average::

    theta_(-i)(z) = (n mean_{b in O_i} PD_b(z) - mean_{b in O_i} ICE_bi(z)) / (n - 1)
    V_J(z)   = (n - 1)/n sum_i (theta_(-i)(z) - PD(z))^2
    V_J-U(z) = V_J(z) - (e^{m/n} - 1) (n / B^2) sum_b (PD_b(z) - PD(z))^2

(``e - 1`` for ``m = n`` as in the paper: ``O_i`` holds about ``B e^{-m/n}``
trees).  It needs every tree's ICE of every row (the OOB sums below).

Everything here works on flat arrays: tree values ``(B, P)`` and ICE ``(n, P)``
with ``P`` the flattened outputs x grid points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier, RandomForestRegressor

from pdpboot.engine import compute_pd

#: the forests whose in-bag counts can be recovered
FOREST_TYPES = (RandomForestRegressor, RandomForestClassifier, ExtraTreesRegressor, ExtraTreesClassifier)
#: the fewest trees the study's estimator was run with by default (fewer: more Monte Carlo noise than signal)
MIN_TREES = 1000

__all__ = [
    "FOREST_TYPES",
    "MIN_TREES",
    "TreeEvaluation",
    "bootstrap_draws",
    "check_forest",
    "check_training_rows",
    "evaluate_trees",
    "ij_influence",
    "ij_variance",
    "inbag_counts",
    "jackknife_variance",
    "mc_noise",
    "supt_critical_value",
]



def check_forest(forest) -> None:
    """Raise unless ``forest`` is a bagged scikit-learn forest whose in-bag counts can be recovered."""
    name = type(forest).__name__
    if not isinstance(forest, FOREST_TYPES):
        raise TypeError(
            f"forest must be a scikit-learn {', '.join(f.__name__ for f in FOREST_TYPES)}; got {name}. "
            "The infinitesimal jackknife "
            "needs a bagged forest whose bootstrap samples can be recovered; for other models use "
            "pdpboot.bootstrap_partial_dependence."
        )
    if not getattr(forest, "bootstrap", False):
        raise ValueError(
            f"{name} was built with bootstrap=False: its trees share the same rows, so there are no in-bag "
            "counts to take a jackknife over. Use bootstrap=True (the default of RandomForest*) or the refit "
            "bootstrap (pdpboot.bootstrap_partial_dependence)."
        )
    if getattr(forest, "class_weight", None) is not None:
        raise ValueError(
            f"{name} has class_weight={forest.class_weight!r}: scikit-learn then draws weighted bootstrap "
            "samples, which the infinitesimal jackknife here does not model. Use class_weight=None."
        )


def bootstrap_draws(forest, n_rows: int) -> int:
    """Number of rows ``m`` each tree of ``forest`` draws (with replacement) from ``n_rows``.

    Parameters
    ----------
    forest : RandomForest* or ExtraTrees* with ``bootstrap=True``
    n_rows : int
        Rows of the training data.

    Returns
    -------
    int
        ``n_rows`` for ``max_samples=None``, ``max_samples`` for an int,
        ``max(int(max_samples * n_rows), 1)`` for a float (as scikit-learn).
    """
    check_forest(forest)
    ms = forest.max_samples
    if ms is None:
        return int(n_rows)
    if isinstance(ms, (int, np.integer)):
        return int(ms)
    return max(int(ms * n_rows), 1)


def inbag_counts(forest, n_rows: int) -> np.ndarray:
    """In-bag counts ``N_bi`` of a fitted forest, recovered from each tree's seed.

    scikit-learn draws tree ``b``'s bootstrap sample as
    ``RandomState(tree.random_state).randint(0, n_rows, m)`` (unweighted fit)
    and fits the tree with the counts of that sample as sample weights; this
    repeats the draw.

    Parameters
    ----------
    forest : fitted RandomForest* or ExtraTrees* with ``bootstrap=True``
        Fitted without ``sample_weight`` and with ``class_weight=None``.
    n_rows : int
        Rows of the data it was fitted on.

    Returns
    -------
    ndarray of int64, shape (n_trees, n_rows)
        ``counts[b, i]`` = times row ``i`` is in tree ``b``'s sample.
    """
    m = bootstrap_draws(forest, n_rows)
    if not hasattr(forest, "estimators_"):
        raise ValueError(f"{type(forest).__name__} is not fitted; fit it first.")
    counts = np.empty((len(forest.estimators_), int(n_rows)), dtype=np.int64)
    for b, tree in enumerate(forest.estimators_):
        draw = np.random.RandomState(tree.random_state).randint(0, n_rows, m)
        counts[b] = np.bincount(draw, minlength=n_rows)
    return counts


def check_training_rows(forest, X, counts: np.ndarray, n_trees: int = 3) -> None:
    """Check that ``X`` (in this row order) is the data ``forest`` was fitted on.

    The in-bag weight of every leaf of the first ``n_trees`` trees
    (``tree_.weighted_n_node_samples``) must equal the sum of the recovered
    counts of the rows of ``X`` that reach it.

    Raises
    ------
    ValueError
        When they differ (other data, shuffled rows, or a fit with sample weights).
    """
    for b, tree in enumerate(forest.estimators_[:n_trees]):
        leaves = tree.apply(X)
        got = np.bincount(leaves, weights=counts[b], minlength=tree.tree_.node_count)
        is_leaf = tree.tree_.children_left == -1
        if not np.allclose(got[is_leaf], tree.tree_.weighted_n_node_samples[is_leaf]):
            raise ValueError(
                "X is not the data this forest was fitted on (in the same row order), or the forest was "
                "fitted with sample_weight: the recovered in-bag counts do not reproduce tree "
                f"{b}'s leaf weights. Pass the training rows, or an unfitted forest (it is then fitted on X, y)."
            )


@dataclass
class TreeEvaluation:
    """Per-tree PD and ICE sums of one feature set (flat over outputs x grid points).

    Attributes
    ----------
    tree_pd : ndarray, shape (n_trees, n_outputs, *grid_shape)
        ``PD_b(z)``.
    ice : ndarray, shape (n_rows, n_outputs, *grid_shape)
        The forest's ICE, ``(1/B) sum_b ICE_bi(z)``.
    oob_ice : ndarray or None, shape (n_rows, n_outputs, *grid_shape)
        ``sum_{b: N_bi = 0} ICE_bi(z)`` (for the jackknife-after-bootstrap).
    """

    tree_pd: np.ndarray
    ice: np.ndarray
    oob_ice: np.ndarray | None


_TREE_CHUNK = 64  # trees per job; fixed, so sums (and results) do not depend on n_jobs
_BLOCK_ROWS = 2**18  # stacked rows (background rows x grid points) per block of the leaf-lookup path


def _grid_points(grid_values: Sequence[np.ndarray]) -> tuple[np.ndarray, tuple[int, ...]]:
    """Cartesian product of the grids (first feature slowest), shape (n_points, n_features)."""
    grids = [np.asarray(g, dtype=float).ravel() for g in grid_values]
    shape = tuple(len(g) for g in grids)
    mesh = np.meshgrid(*grids, indexing="ij")
    return np.column_stack([m.ravel() for m in mesh]), shape


def _leaf_values(tree, response_method: str, n_outputs: int) -> np.ndarray:
    """Response of every node of a fitted tree, shape (n_nodes, n_outputs) (what predict returns at a leaf)."""
    value = np.asarray(tree.tree_.value, dtype=float)  # (nodes, n_targets, n_classes or 1)
    if response_method == "predict_proba":
        v = value[:, 0, :]
        total = v.sum(axis=1, keepdims=True)
        return v / np.where(total > 0, total, 1.0)
    return value[:, :n_outputs, 0]


def _lookup_chunk(trees, counts, blocks, n_rows, response_method, n_outputs):
    """Per-tree PD, ICE sum and OOB ICE sum of a chunk of trees by leaf lookup on the stacked rows.

    ``blocks`` is a list of (first grid point, stacked float32 rows of shape (k * n_rows, p)); each
    tree walks each block once (``tree_.apply``, one C call) and reads its leaf values.
    """
    n_points = sum(len(rows) // n_rows for _, rows in blocks)
    tree_pd = np.empty((len(trees), n_points, n_outputs))
    ice_sum = np.zeros((n_points, n_rows, n_outputs))
    oob = None if counts is None else np.zeros((n_points, n_rows, n_outputs))
    for b, tree in enumerate(trees):
        values = _leaf_values(tree, response_method, n_outputs)
        out = None if counts is None else counts[b] == 0
        for start, rows in blocks:
            k = len(rows) // n_rows
            ice = values[tree.tree_.apply(rows)].reshape(k, n_rows, n_outputs)
            tree_pd[b, start:start + k] = ice.mean(axis=1)
            ice_sum[start:start + k] += ice
            if out is not None:
                oob[start:start + k, out] += ice[:, out]
    return tree_pd, ice_sum, oob


def _stacked_blocks(X, feature_idx, points: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Rows of X with the features set to each grid point, grid-point-major, in blocks of whole points."""
    xa = np.ascontiguousarray(X, dtype=np.float32)
    n_rows = xa.shape[0]
    per_block = max(1, _BLOCK_ROWS // max(n_rows, 1))
    blocks = []
    for start in range(0, len(points), per_block):
        chunk = points[start:start + per_block]
        rows = np.repeat(xa[None], len(chunk), axis=0)
        for j, f in enumerate(feature_idx):
            rows[:, :, f] = chunk[:, j, None].astype(np.float32)
        blocks.append((start, rows.reshape(-1, xa.shape[1])))
    return blocks


def _stacked_input_blocks(X, feature_idx, grid_values, transform) -> list[tuple[int, np.ndarray]]:
    """As :func:`_stacked_blocks` in the input space of a preprocessing ``transform``, then mapped by it.

    ``X`` may be a DataFrame with non-numeric columns and the grids may hold category levels; each block of
    stacked rows (grid-point-major) is built in the input space and passed through ``transform`` (the
    fitted preprocessing of a Pipeline), whose output is what the forest's trees see.
    """
    import pandas as pd
    import scipy.sparse as sp

    grids = [np.asarray(g).ravel() for g in grid_values]
    shape = tuple(len(g) for g in grids)
    index = np.indices(shape).reshape(len(grids), -1)  # (features, points), first feature slowest
    n_rows = np.shape(X)[0]
    per_block = max(1, _BLOCK_ROWS // max(n_rows, 1))
    frame = isinstance(X, pd.DataFrame)
    blocks = []
    for start in range(0, index.shape[1], per_block):
        k = min(per_block, index.shape[1] - start)
        take = np.tile(np.arange(n_rows), k)
        rows = X.iloc[take].reset_index(drop=True) if frame else np.asarray(X)[take].copy()
        for j, f in enumerate(feature_idx):
            values = np.repeat(grids[j][index[j, start:start + k]], n_rows)
            if frame:
                col = X.columns[f]
                dtype = X[col].dtype
                rows[col] = pd.array(values, dtype=dtype) if isinstance(
                    dtype, pd.api.extensions.ExtensionDtype) else values
            else:
                if rows.dtype.kind in "iub" and values.dtype.kind == "f":
                    rows = rows.astype(float)
                rows[:, f] = values
        out = transform(rows)
        out = out.toarray() if sp.issparse(out) else np.asarray(out)
        blocks.append((start, np.ascontiguousarray(out, dtype=np.float32)))
    return blocks


def _evaluate_chunk(trees, counts, X, feature_idx, grid_values, response_method, method, n_outputs):
    tree_pd, ice_sum, oob = [], None, None
    for b, tree in enumerate(trees):
        avg, ice = compute_pd(tree, X, feature_idx, grid_values, response_method=response_method,
                              method=method, individual=True, n_outputs=n_outputs)
        tree_pd.append(avg)
        ice_sum = ice.copy() if ice_sum is None else ice_sum + ice
        if counts is not None:
            oob = np.zeros(ice.shape) if oob is None else oob
            out = counts[b] == 0
            oob[out] += ice[out]
    return np.stack(tree_pd), ice_sum, oob


def evaluate_trees(
    forest,
    X,
    feature_idx: Sequence[int],
    grid_values: Sequence[np.ndarray],
    *,
    response_method: str,
    counts: np.ndarray | None = None,
    method: str = "auto",
    n_outputs: int = 1,
    n_jobs: int | None = None,
    transform=None,
) -> TreeEvaluation:
    """PD of every tree of ``forest`` over the rows of ``X``, and the forest's ICE.

    Parameters
    ----------
    forest : fitted forest
    X : array-like of shape (n_rows, n_features)
        The background rows (for the IJ: the training rows), numeric.
    feature_idx, grid_values
        As in :func:`pdpboot.engine.compute_pd`.
    response_method : {"predict", "predict_proba"}
        Resolved; each tree's response (the forest's is their mean).
    counts : ndarray of shape (n_trees, n_rows), optional
        In-bag counts; given, the out-of-bag ICE sums are accumulated too.
    method : {"auto", "lookup", "brute", "tree"}
        ``auto``: ``lookup``.
        ``lookup``: leaf lookup — the background rows with the features set to
        each grid point are stacked once (float32, blocks of whole grid points)
        and every tree walks them with one ``tree_.apply`` call and reads its
        leaf values, so a tree's PD and ICE cost one C traversal and no
        scikit-learn input checking (about 0.3 ms per tree for 500 rows and 15
        points, 3-4x faster than ``brute``).  ``brute`` / ``tree``:
        :func:`pdpboot.engine.compute_pd` on each tree (reference paths).
    n_jobs : int, optional
        joblib workers (threads for ``auto``: the traversal releases the GIL)
        over chunks of 64 trees; the result does not depend on it.
    transform : callable, optional
        The fitted preprocessing in front of the forest (``pipeline[:-1].transform``):
        ``X``, ``feature_idx`` and the grids are then in its input space (``X`` may be
        a DataFrame with category columns, a grid may hold levels), the stacked rows
        are mapped through it block by block and the trees read its output
        (``method`` must be ``auto`` or ``lookup``).  The preprocessing is held fixed,
        as in the forest's own fit.

    Returns
    -------
    TreeEvaluation
    """
    from joblib import Parallel, delayed

    if transform is not None:
        if method not in ("auto", "lookup"):
            raise ValueError(f"method={method!r} cannot evaluate trees behind a preprocessing transform; use "
                             "'auto' or 'lookup'.")
        method = "lookup"
    elif method == "auto":
        method = "lookup"
    trees = forest.estimators_
    starts = range(0, len(trees), _TREE_CHUNK)
    chunks = [(trees[s:s + _TREE_CHUNK], None if counts is None else counts[s:s + _TREE_CHUNK]) for s in starts]
    if method == "lookup":
        if transform is None:
            points, shape = _grid_points(grid_values)
            blocks = _stacked_blocks(X, feature_idx, points)
        else:
            shape = tuple(len(np.asarray(g).ravel()) for g in grid_values)
            blocks = _stacked_input_blocks(X, feature_idx, grid_values, transform)
        n_rows = np.shape(X)[0]
        n_outputs = _leaf_values(trees[0], response_method, n_outputs).shape[1]  # all classes of a classifier
        parts = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(_lookup_chunk)(t, c, blocks, n_rows, response_method, n_outputs) for t, c in chunks)
        # (B, P, O) -> (B, O, *grid); (P, n, O) -> (n, O, *grid)
        parts = [(p[0].transpose(0, 2, 1).reshape((len(p[0]), n_outputs, *shape)),
                  p[1].transpose(1, 2, 0).reshape((n_rows, n_outputs, *shape)),
                  None if p[2] is None else p[2].transpose(1, 2, 0).reshape((n_rows, n_outputs, *shape)))
                 for p in parts]
    else:
        parts = Parallel(n_jobs=n_jobs)(
            delayed(_evaluate_chunk)(t, c, X, feature_idx, grid_values, response_method, method, n_outputs)
            for t, c in chunks)
    tree_pd = np.concatenate([p[0] for p in parts])
    ice_sum = parts[0][1]
    for p in parts[1:]:
        ice_sum = ice_sum + p[1]
    oob = None
    if counts is not None:
        oob = parts[0][2]
        for p in parts[1:]:
            oob = oob + p[2]
    return TreeEvaluation(tree_pd, ice_sum / len(trees), oob)


def _flat(a: np.ndarray, lead: int) -> np.ndarray:
    return np.asarray(a, dtype=float).reshape(a.shape[:lead] + (-1,))


def ij_influence(counts: np.ndarray, tree_values: np.ndarray, ice: np.ndarray | None = None) -> np.ndarray:
    """Influence vectors ``U_i = Cov_b(N_bi, t_b) + (ICE_i - PD) / n`` (see module notes).

    Parameters
    ----------
    counts : ndarray of shape (n_trees, n_rows)
        In-bag counts ``N_bi``.
    tree_values : ndarray of shape (n_trees, ...)
        Per-tree statistic ``t_b`` (e.g. ``PD_b`` over outputs x grid).
    ice : ndarray of shape (n_rows, ...), optional
        The forest's ICE values at the same points; None gives the IJ of a
        prediction (no averaging over rows).

    Returns
    -------
    ndarray of shape (n_rows, ...)
        ``U``; the IJ variance is ``(U ** 2).sum(axis=0)``.
    """
    counts = np.asarray(counts, dtype=float)
    n_trees, n_rows = counts.shape
    t = _flat(tree_values, 1)
    if t.shape[0] != n_trees:
        raise ValueError(f"tree_values has {t.shape[0]} trees, counts {n_trees}.")
    centred = t - t.mean(axis=0)
    u = counts.T @ centred / n_trees
    if ice is not None:
        e = _flat(ice, 1)
        if e.shape != (n_rows, t.shape[1]):
            raise ValueError(f"ice must have shape ({n_rows}, ...) matching tree_values; got {np.shape(ice)}.")
        u += (e - e.mean(axis=0)) / n_rows
    return u.reshape((n_rows,) + np.shape(tree_values)[1:])


def mc_noise(tree_values: np.ndarray, n_draws: int) -> np.ndarray:
    """Monte Carlo bias of ``V_IJ``: ``(m / B^2) sum_b (t_b - mean t)^2`` (shape of one ``t_b``)."""
    t = np.asarray(tree_values, dtype=float)
    n_trees = t.shape[0]
    return n_draws * ((t - t.mean(axis=0)) ** 2).sum(axis=0) / n_trees**2


def ij_variance(
    counts: np.ndarray,
    tree_values: np.ndarray,
    ice: np.ndarray | None = None,
    *,
    n_draws: int | None = None,
    bias_correction: bool = True,
) -> np.ndarray:
    """Infinitesimal-jackknife variance ``V_IJ`` (or ``V_IJ-U``) at every point.

    Parameters
    ----------
    counts, tree_values, ice
        As in :func:`ij_influence`.
    n_draws : int, optional
        Bootstrap draws per tree ``m`` (default: ``counts.sum(axis=1)`` of the first tree).
    bias_correction : bool
        Subtract the Monte Carlo bias (:func:`mc_noise`): Wager et al.'s ``V_IJ-U``.

    Returns
    -------
    ndarray of the shape of one ``t_b``
        May be negative with bias correction when B is too small.
    """
    u = ij_influence(counts, tree_values, ice)
    v = (u**2).sum(axis=0)
    if bias_correction:
        m = int(np.asarray(counts)[0].sum()) if n_draws is None else int(n_draws)
        v = v - mc_noise(tree_values, m)
    return v


def jackknife_variance(
    counts: np.ndarray,
    tree_values: np.ndarray,
    oob_ice: np.ndarray | None = None,
    *,
    n_draws: int | None = None,
    bias_correction: bool = True,
) -> np.ndarray:
    """Jackknife-after-bootstrap variance ``V_J`` (or ``V_J-U``) at every point.

    Parameters
    ----------
    counts : ndarray of shape (n_trees, n_rows)
    tree_values : ndarray of shape (n_trees, ...)
        ``PD_b`` (or a prediction ``t_b``).
    oob_ice : ndarray of shape (n_rows, ...), optional
        ``sum_{b: N_bi = 0} ICE_bi``: row ``i`` is then also dropped from the
        average (the PD); None gives the jackknife of a prediction.
    n_draws : int, optional
        Bootstrap draws per tree ``m`` (default from ``counts``).
    bias_correction : bool
        Subtract ``(e^{m/n} - 1) (n / B^2) sum_b (t_b - mean t)^2`` (``V_J-U``).

    Returns
    -------
    ndarray of the shape of one ``t_b``
        NaN where some row is in every tree's sample (no tree leaves it out).
    """
    counts = np.asarray(counts)
    n_trees, n_rows = counts.shape
    t = _flat(tree_values, 1)
    out = (counts == 0).astype(float)  # (B, n)
    n_out = out.sum(axis=0)  # (n,)
    with np.errstate(invalid="ignore", divide="ignore"):
        loo = (out.T @ t) / n_out[:, None]  # mean over trees without row i
        if oob_ice is not None:
            mean_ice = _flat(oob_ice, 1) / n_out[:, None]
            loo = (n_rows * loo - mean_ice) / (n_rows - 1)
    v = (n_rows - 1) / n_rows * ((loo - t.mean(axis=0)) ** 2).sum(axis=0)
    if bias_correction:
        m = int(counts[0].sum()) if n_draws is None else int(n_draws)
        v = v - (np.expm1(m / n_rows)) * n_rows * ((t - t.mean(axis=0)) ** 2).sum(axis=0) / n_trees**2
    return v.reshape(np.shape(tree_values)[1:])


def supt_critical_value(
    influence: np.ndarray,
    *,
    level: float,
    n_multipliers: int = 1000,
    rng: np.random.Generator | None = None,
    chunk: int = 250,
) -> np.ndarray:
    """Sup-t critical value from a Gaussian multiplier on the influence vectors.

    ``delta^(r)(z) = sum_i xi_ri U_i(z)`` with ``xi_ri ~ N(0, 1)`` has the IJ
    covariance ``sum_i U_i(z) U_i(z')``; the critical value is the ``level``
    quantile of ``max_z |delta^(r)(z)| / sd(z)`` (``sd^2 = sum_i U_i^2``), never
    below the pointwise normal quantile.

    Parameters
    ----------
    influence : ndarray of shape (n_rows, n_outputs, n_points)
    level : float
        In (0, 1).
    n_multipliers : int
        Multiplier draws.

    Returns
    -------
    ndarray of shape (n_outputs,)
    """
    from scipy.special import ndtri

    rng = np.random.default_rng(rng)
    u = np.asarray(influence, dtype=float)
    n_rows, n_out, n_pts = u.shape
    sd = np.sqrt((u**2).sum(axis=0))  # (O, P)
    scale = np.where(sd > 0, 1 / np.where(sd > 0, sd, 1), 0.0)
    flat = (u * scale).reshape(n_rows, -1)
    t_max = np.empty((n_multipliers, n_out))
    for start in range(0, n_multipliers, chunk):
        stop = min(start + chunk, n_multipliers)
        xi = rng.standard_normal((stop - start, n_rows))
        t_max[start:stop] = np.abs(xi @ flat).reshape(stop - start, n_out, n_pts).max(axis=2)
    return np.maximum(np.quantile(t_max, level, axis=0), ndtri(0.5 + level / 2))
