"""
ICE curves and heterogeneity
============================

When a feature's effect differs between rows, the PD (their average) hides it. Keep the ICE curves
of some rows, draw them under the band, and measure their spread with
:func:`pdpboot.ice_heterogeneity` (with its own bootstrap interval).

Here ``y = x1 + x2 + x1 * x2 + noise``: the effect of ``x1`` depends on ``x2``.
"""

import matplotlib.pyplot as plt
from sklearn.ensemble import GradientBoostingRegressor

import pdpboot
from pdpboot.datasets import make_interaction

X, y = make_interaction(300, rng=1)
res = pdpboot.bootstrap_partial_dependence(
    GradientBoostingRegressor(n_estimators=50, max_depth=3), X, y, ["x1", "x2"], n_resamples=20, rng=0,
    statistics={"ice": 40, "heterogeneity": True}, execution=pdpboot.Execution(progress=False))
bands = pdpboot.confidence_bands(res)
het = pdpboot.ice_heterogeneity(res)

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained")
pdpboot.plot_pd(bands, "x1", ice=40, ax=left)
pdpboot.plot_heterogeneity(het, "x1", stat="ice_sd", ax=right)
right.set_title("SD of the ICE curves, with its band")
plt.show()

# %%
# The overall index per feature: the share of the ICE curves' variance not explained by the PD.
het["x1"].ds["heterogeneity_index"]
