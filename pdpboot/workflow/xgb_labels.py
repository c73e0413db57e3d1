"""XGBoost's classifier for any class labels (the command line's ``--model xgboost``)."""

from __future__ import annotations

import numpy as np

try:  # an optional extra: imported only once --model xgboost or an XGBoost model is in use
    import xgboost
except ImportError:  # pragma: no cover - the callers check first
    raise ImportError('XGBoost models need xgboost: pip install "pdpboot[xgboost]".') from None


class LabelledXGBClassifier(xgboost.XGBClassifier):
    """``xgboost.XGBClassifier`` that takes any class labels (coded 0..K-1 for XGBoost, reported as given)."""

    def fit(self, X, y, **kwargs):
        """Fit on ``y`` coded 0..K-1 by its sorted labels; the other arguments as for XGBClassifier."""
        labels, codes = np.unique(np.asarray(y), return_inverse=True)
        self._labels = None  # XGBoost's own fit checks the codes against classes_
        super().fit(X, codes, **kwargs)
        self._labels = labels
        return self

    @property
    def classes_(self) -> np.ndarray:
        """The class labels as given to ``fit``."""
        labels = self.__dict__.get("_labels")
        return labels if labels is not None else np.arange(self.n_classes_)

    def predict(self, X, output_margin: bool = False, **kwargs):
        """The most probable class label of each row (the raw margins with ``output_margin=True``)."""
        out = super().predict(X, output_margin=output_margin, **kwargs)
        return out if output_margin else self.classes_[np.asarray(out).astype(np.intp)]
