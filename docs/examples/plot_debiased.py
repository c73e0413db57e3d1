"""
The data's PD: the debiased estimator
=====================================

A refit band covers the PD of the *learner*; a learner's bias is invisible to it.
:func:`pdpboot.debiased_partial_dependence` targets the PD of the process that made the data: the
model is cross-fitted, held-out residuals are reweighted by a model of how the feature depends on the
others, and a bias-corrected smoother gives the curve and its band. Grid points with too little
overlap get no band.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.ensemble import RandomForestRegressor

import pdpboot
from pdpboot.datasets import make_friedman1, true_function

X, y = make_friedman1(500, n_features=5, rng=0)
res = pdpboot.debiased_partial_dependence(
    RandomForestRegressor(n_estimators=50, min_samples_leaf=5), X, y, ["x4"],
    grid=pdpboot.Grid(12), rng=0, execution=pdpboot.Execution(progress=False))

ax = pdpboot.plot_pd(res, "x4")
grid = res["x4"].ds["x4"].values
# the true PD of x4: the noise-free function averaged over fresh draws of the other features
fresh, _ = make_friedman1(20_000, n_features=5, rng=1)
truth = [np.mean(true_function("friedman1", fresh.assign(x4=a))) for a in grid]
ax.plot(grid, truth, "k:", label="true PD")
ax.legend()
plt.show()

# %%
# Per grid point: the effective sample size of the kernel window and whether it has overlap.
res["x4"].ds[["effective_sample_size", "overlap"]].to_dataframe().round(2).head()
