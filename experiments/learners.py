"""The learners of the studies, built by name with quick (tiny) or full settings.

``LeastSquares`` is ordinary least squares with an optional ``x0 * x1`` column, written
directly on NumPy: it is the same estimator as ``LinearRegression`` on those columns, without
scikit-learn's input validation, which dominates the cost of the 10^6 OLS fits of the
coverage study.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler


class LeastSquares(RegressorMixin, BaseEstimator):
    """OLS with intercept on all columns, plus the product of the first two if ``interaction``.

    Parameters
    ----------
    interaction : bool
        Add the column ``X[:, 0] * X[:, 1]``.
    """

    def __init__(self, interaction: bool = False):
        self.interaction = interaction

    def _design(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        columns = [np.ones(X.shape[0]), *X.T]
        if self.interaction:
            columns.append(X[:, 0] * X[:, 1])
        return np.column_stack(columns)

    def fit(self, X, y):
        self.coef_, *_ = np.linalg.lstsq(self._design(X), np.asarray(y, dtype=float), rcond=None)
        self.n_features_in_ = np.shape(X)[1]
        return self

    def predict(self, X) -> np.ndarray:
        return self._design(X) @ self.coef_


class QuietMLP(MLPRegressor):
    """MLPRegressor that does not warn when L-BFGS stops at ``max_iter`` (a fixed budget is the design)."""

    def fit(self, X, y):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return super().fit(X, y)


def reseed(estimator, rng: np.random.Generator):
    """Set every ``random_state`` parameter (pipelines included) from ``rng``; returns the estimator."""
    keys = sorted(k for k in estimator.get_params(deep=True) if k == "random_state" or k.endswith("__random_state"))
    if keys:
        estimator.set_params(**{k: int(rng.integers(0, 2**31 - 1)) for k in keys})
    return estimator


def make_learner(name: str, quick: bool = False):
    """An unfitted learner.

    Parameters
    ----------
    name : {"ols", "ols_interaction", "rf", "gbm", "mlp", "logit", "gbc"}
    quick : bool
        Tiny versions for the smoke run (same model families).

    Returns
    -------
    estimator
        ``rf``: random forest (30 trees, a third of the features per split, leaves >= 5 rows);
        ``gbm``: histogram gradient boosting (100 rounds, learning rate 0.1); ``mlp``:
        standardisation + one hidden layer of 20 tanh units, L-BFGS, 300 iterations, L2 1e-2;
        ``logit``: unpenalised logistic regression (maximum likelihood); ``gbc``: histogram gradient
        boosting classifier (100 rounds, learning rate 0.1).
    """
    if name == "ols":
        return LeastSquares(interaction=False)
    if name == "ols_interaction":
        return LeastSquares(interaction=True)
    if name == "rf":
        return RandomForestRegressor(n_estimators=10 if quick else 30, max_features=0.33, min_samples_leaf=5)
    if name == "gbm":
        return HistGradientBoostingRegressor(max_iter=20 if quick else 100, learning_rate=0.1,
                                             early_stopping=False)
    if name == "mlp":
        return make_pipeline(StandardScaler(), QuietMLP(hidden_layer_sizes=(8,) if quick else (20,),
                                                        activation="tanh", solver="lbfgs",
                                                        max_iter=50 if quick else 300, alpha=1e-2))
    if name == "logit":
        return LogisticRegression(C=np.inf)
    if name == "gbc":
        return HistGradientBoostingClassifier(max_iter=20 if quick else 100, learning_rate=0.1, early_stopping=False)
    raise ValueError(f"Unknown learner {name!r}; expected ols, ols_interaction, rf, gbm, mlp, logit or gbc.")


#: The one spelling of each learner in every table and figure of the paper (issue 31: "gradient boosting /
#: gbm / GBM / HGB; ols / OLS" appeared side by side). ``label`` for a table cell.
LEARNER_LABELS = {
    "ols": "OLS",
    "ols_interaction": "OLS + interaction",
    "rf": "Random forest",
    "gbm": "Gradient boosting",
    "mlp": "Neural network",
    "logit": "Logistic regression",
    "logistic": "Logistic regression",
    "gbc": "Gradient-boosting classifier",
}

#: The one spelling of each interval method (``bc``/``bca`` were printed in lower case in one table; the
#: simultaneous-bands table printed "sup-t" where the others print "sup-$t$").
METHOD_LABELS = {"percentile": "percentile", "basic": "basic", "normal": "normal", "bc": "BC", "bca": "BCa",
                 "studentized": "studentized", "sup-t": "sup-$t$"}


def learner_label(key: str, classifier: bool = False) -> str:
    """The paper's name of a learner key; ``classifier`` names the classification variant of ``"gbm"``."""
    return LEARNER_LABELS["gbc" if classifier and key == "gbm" else key]
