"""
ALE on correlated features
==========================

With strongly correlated features, a PD evaluates the model at combinations that never occur in the
data. Accumulated local effects (Apley and Zhu, 2020) use only local differences within the data, and
get the same bootstrap bands.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestRegressor

import pdpboot

rng = np.random.default_rng(0)
x1 = rng.uniform(0, 1, 400)
x2 = x1 + rng.normal(0, 0.05, 400)            # x2 is almost x1
X = pd.DataFrame({"x1": x1, "x2": x2, "x3": rng.uniform(0, 1, 400)})
y = X["x1"] + X["x2"] ** 2 + rng.normal(0, 0.1, 400)

res = pdpboot.bootstrap_ale(RandomForestRegressor(n_estimators=30, min_samples_leaf=5), X, y, ["x1", "x2"],
                            n_resamples=20, with_pd=True, rng=0, execution=pdpboot.Execution(progress=False))
bands = pdpboot.confidence_bands(res)

fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained")
titles = {"pd": "PD of x2: evaluates x2 far from x1", "ale": "ALE of x2: local differences only"}
for ax, variable in zip(axes, ["pd", "ale"]):
    pdpboot.plot_pd(bands, "x2", variable=variable, ax=ax)
    ax.set_title(titles[variable])
plt.show()
