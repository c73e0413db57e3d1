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
from pdpboot.datasets import make_friedman1

# Friedman 1: y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)² + 10 x4 + 5 x5 + noise
# (x1 and x2 interact, x4 and x5 do not)
X, y = make_friedman1(300, n_features=5, rng=0)
est = GradientBoostingRegressor(n_estimators=50, max_depth=3)
res = pdpboot.bootstrap_partial_dependence(
    est, X, y, ["x1", "x2", "x4", "x5", ("x1", "x2"), ("x4", "x5")], n_resamples=15, rng=0,
    statistics={"interactions": 100}, execution=pdpboot.Execution(progress=False))
h2 = pdpboot.h_statistic(res)
fig, ax = plt.subplots(figsize=(6, 2.6), layout="constrained")
pdpboot.plot_h_statistic(h2, ax=ax)
plt.show()

# %%
# The test refits the model on 19 null data sets (so its p-value is at least 1/20).
test = pdpboot.h_statistic_test(est, X, y, ("x1", "x2"), n_resamples=19, n_max=100, rng=0,
                                execution=pdpboot.Execution(progress=False))
print(f"H² = {test.attrs['statistic']:.3f}, p = {test.attrs['pvalue']:.3f}")
