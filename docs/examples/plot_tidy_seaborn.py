"""
Tidy frames and seaborn
=======================

:func:`pdpboot.tidy` turns any result into one long table: a row per effect, feature, grid value and
output, with ``estimate``, ``lower``, ``upper``, ``se`` and the band's ``method``. It is what pandas,
seaborn or R expect; :func:`pdpboot.plot_facets` draws a seaborn panel per feature from it.
"""

import matplotlib.pyplot as plt
import seaborn as sns
from sklearn.ensemble import RandomForestRegressor

import pdpboot
from pdpboot.datasets import make_friedman1

X, y = make_friedman1(300, n_features=5, rng=0)
res = pdpboot.bootstrap_partial_dependence(RandomForestRegressor(n_estimators=30, min_samples_leaf=5), X, y,
                                           ["x1", "x2", "x3", "x4", "x5"], n_resamples=15, rng=0,
                                           execution=pdpboot.Execution(progress=False))
bands = pdpboot.confidence_bands(res)
frame = pdpboot.tidy(bands)
frame.head()

# %%
# One seaborn figure from the frame: every curve on one axis, centred at its mean.
frame["centred"] = frame["estimate"] - frame.groupby("feature")["estimate"].transform("mean")
sns.relplot(frame, x="value", y="centred", hue="feature", kind="line", height=3.4, aspect=1.6)
plt.show()

# %%
# The same frame, a panel per feature with its band.
pdpboot.plot_facets(bands)
plt.show()
