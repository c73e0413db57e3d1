"""
Friedman's H² and a test of "no interaction"
============================================

:func:`pdpboot.h_statistic` gives Friedman and Popescu's H² of each pair with a bootstrap interval.
H² is biased upwards under refitting, so an interval that reaches down to 0 is not a test.
:func:`pdpboot.h_statistic_test` calibrates against refits on data whose interaction was removed.
"""

import matplotlib.pyplot as plt
from sklearn.ensemble import GradientBoostingRegressor

import pdpboot
from pdpboot.datasets import make_interaction

X, y = make_interaction(300, rng=1)
est = GradientBoostingRegressor(n_estimators=50, max_depth=3)
res = pdpboot.bootstrap_partial_dependence(
    est, X, y, ["x1", "x2", "x3", ("x1", "x2"), ("x1", "x3")], n_resamples=15, rng=0,
    statistics={"interactions": 100}, execution=pdpboot.Execution(progress=False))
h2 = pdpboot.h_statistic(res)
pdpboot.plot_h_statistic(h2)
plt.show()

# %%
# The test refits the model on 19 null data sets (so its p-value is at least 1/20).
test = pdpboot.h_statistic_test(est, X, y, ("x1", "x2"), n_resamples=19, n_max=100, rng=0,
                                execution=pdpboot.Execution(progress=False))
print(f"H² = {float(test.ds['statistic']):.3f}, p = {test.attrs['pvalue']:.3f}")
