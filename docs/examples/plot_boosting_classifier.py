"""
A boosting classifier under ``resampling="auto"``
=================================================

For a classifier's probabilities the default is not the bootstrap: ``auto`` refits on 0.632 of the
rows drawn without replacement and forms the bands on the logit scale, because the bootstrap's
standard error of a boosting classifier's PD is too small (see :doc:`/validation`). The result says
which scheme it used, and why.
"""

import matplotlib.pyplot as plt
from sklearn.ensemble import HistGradientBoostingClassifier

import pdpboot
from pdpboot.datasets import make_friedman1

X, y = make_friedman1(400, n_features=5, rng=0)
label = (y > y.median()).map({True: "high", False: "low"})
res = pdpboot.bootstrap_partial_dependence(
    HistGradientBoostingClassifier(max_iter=50), X, label, ["x1", "x4"], n_resamples=20, rng=0,
    execution=pdpboot.Execution(progress=False))
print(res.attrs["resampling"], "|", res.attrs["band_scale"], "|", res.attrs["resampling_reason"])

# %%
# The bands of the probability of ``"high"``; they stay within [0, 1].
bands = pdpboot.confidence_bands(res, simultaneous=True)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained")
for ax, feature in zip(axes, ["x1", "x4"]):
    pdpboot.plot_pd(bands, feature, output="high", ax=ax, legend=feature == "x1")
plt.show()
