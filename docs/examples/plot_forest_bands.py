"""
Bands on a random forest
========================

Refit a random forest on bootstrap resamples of simulated electricity prices and draw each feature's
partial dependence with its pointwise band (shaded) and its simultaneous band (dashed), which covers
the whole curve at once.
"""

import matplotlib.pyplot as plt
from sklearn.ensemble import RandomForestRegressor

import pdpboot
from pdpboot.datasets import make_electricity_prices

X, y = make_electricity_prices(400, rng=0)
forest = RandomForestRegressor(n_estimators=30, min_samples_leaf=5)
res = pdpboot.bootstrap_partial_dependence(
    forest, X, y, ["Temperature", "Hour", "Day"], n_resamples=30, rng=0,
    grid=pdpboot.Grid(categorical_features=["Day"]),
    execution=pdpboot.Execution(progress=False))
bands = pdpboot.confidence_bands(res, simultaneous=True)

# %%
# The result is an :class:`xarray.DataTree`, one node per feature; the band is a variable with a
# ``ci_bound`` dimension (lower, upper).
bands["Temperature"].ds["pd_band"]

# %%
# ``plot_pd`` draws the estimate, both bands and a rug of the data. ``Day`` was declared categorical,
# so its levels get intervals with caps.
fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), layout="constrained")
for ax, feature in zip(axes, ["Temperature", "Hour", "Day"]):
    pdpboot.plot_pd(bands, feature, ax=ax, legend=feature == "Temperature")
plt.show()
