"""
A 2-D surface and where it is uncertain
=======================================

A pair of features gives a PD surface. Beside it, the width of its 95 % pointwise band: the surface
is least certain where few rows are (the corners of the data's cloud).
"""

import matplotlib.pyplot as plt
from sklearn.ensemble import RandomForestRegressor

import pdpboot
from pdpboot.datasets import make_electricity_prices

X, y = make_electricity_prices(400, rng=1)
pair = ("Temperature", "Hour")
res = pdpboot.bootstrap_partial_dependence(
    RandomForestRegressor(n_estimators=30, min_samples_leaf=5), X, y, [pair], n_resamples=20, rng=0,
    grid=pdpboot.Grid(resolution=15), execution=pdpboot.Execution(progress=False))
bands = pdpboot.confidence_bands(res)

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
pdpboot.plot_pd_contour(bands, pair, ax=left)
pdpboot.plot_pd_contour(bands, pair, what="width", ax=right)
left.set_title("PD surface")
right.set_title("width of the 95 % band")
plt.show()
