"""
Regional effects: where the ICE curves disagree
===============================================

The effect of ``x1`` switches on only where ``x3 > 0``. :func:`pdpboot.regional_partial_dependence`
searches a shallow partition of the other features that makes the mean-centred ICE curves of ``x1``
agree within each region, draws one PD per region, and reruns the search on every refit, so the
result says how often each feature was chosen. The regional bands are for the full-data partition's
regions, evaluated on every refit.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingRegressor

import pdpboot

rng = np.random.default_rng(0)
X = pd.DataFrame(rng.uniform(-1, 1, size=(400, 4)), columns=["x1", "x2", "x3", "x4"])
y = 2 * X["x1"] * (X["x3"] > 0) + X["x2"] + rng.normal(0, 0.3, len(X))

res = pdpboot.regional_partial_dependence(
    GradientBoostingRegressor(n_estimators=50, max_depth=3), X, y, ["x1"], max_depth=1,
    grid=pdpboot.Grid(12), resampling=pdpboot.Resampling("bootstrap", n_resamples=20), rng=0,
    execution=pdpboot.Execution(progress=False))
bands = pdpboot.confidence_bands(res, simultaneous=True)

ax = pdpboot.plot_regional_pd(bands)
plt.show()

# %%
# The regions found on the full data, and how often each candidate feature was chosen for the
# first split across the refits.
print(res["x1"].attrs["regions"])
res["x1"].ds["split_frequency"].to_pandas().round(2)
