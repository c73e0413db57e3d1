"""experiments.h_test_size_power: a reduced size check of the H-statistic test (slow, outside CI)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest


def _not_above(rate: float, replications: int, target: float) -> bool:
    """True unless the rejection rate is significantly (one-sided 95 %) above the target."""
    k = round(rate * replications)
    return binomtest(k, replications, target, alternative="greater").pvalue > 0.05


@pytest.mark.slow
@pytest.mark.parametrize("learner", ["gbm", "rf"])
def test_h_statistic_test_size_flexible_learners(learner):
    """Reduced size check of the default (smooth) null (R = 60 null data sets, K = 39, n = 300) on the audit's
    null DGP, where the plug-in null was liberal for tree learners; the full study is ``python -m experiments
    htest``."""
    from experiments import _common as C
    from experiments import h_test_size_power as S

    cfg = dict(S.SETTINGS["full"], n=300)
    pvalues = [S._one(learner, "audit", cfg, False, s)[1] for s in C.seed_sequence(3, learner).spawn(60)]
    rate = float(np.mean(np.asarray(pvalues) <= 0.05))
    print(f"{learner}: rejection rate {rate:.3f} (R = 60)")
    assert _not_above(rate, 60, 0.07)
