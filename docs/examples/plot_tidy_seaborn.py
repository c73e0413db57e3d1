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
# One seaborn figure from the frame: every feature's centred PD (``effect == "pd_centered"``, the change
# from its first grid value) on one axis, with its band.
centred = frame[frame["effect"] == "pd_centered"]
ax = sns.lineplot(centred, x="value", y="estimate", hue="feature")
for (_, part), color in zip(centred.groupby("feature"), sns.color_palette()):
    ax.fill_between(part["value"], part["lower"], part["upper"], color=color, alpha=0.15, linewidth=0)
ax.set(xlabel="feature value", ylabel="change in predicted y")
plt.show()

# %%
# The same frame, a panel per feature with its band.
pdpboot.plot_facets(bands)
plt.show()
