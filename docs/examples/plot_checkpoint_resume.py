"""
Checkpoint and resume
=====================

With ``Execution(checkpoint=...)`` every finished resample is saved as it completes. Running the same
call again resumes: finished resamples are loaded, the rest computed, and the result equals an
uninterrupted run. A larger ``n_resamples`` extends a run with the same first resamples.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
from sklearn.ensemble import RandomForestRegressor

import pdpboot
from pdpboot.datasets import make_electricity_prices

X, y = make_electricity_prices(300, rng=0)
forest = RandomForestRegressor(n_estimators=20, min_samples_leaf=5)
folder = Path(tempfile.mkdtemp())
execution = pdpboot.Execution(checkpoint=folder / "run.ckpt", progress=False)

first = pdpboot.bootstrap_partial_dependence(forest, X, y, ["Temperature"], n_resamples=10, rng=0,
                                             execution=execution)
# %%
# Later (after a crash, or to get more resamples): the same call with ``n_resamples=20`` computes only
# the 10 new resamples.
more = pdpboot.bootstrap_partial_dependence(forest, X, y, ["Temperature"], n_resamples=20, rng=0,
                                            execution=execution)
same = (more["Temperature"].ds["pd_resamples"].isel(resample=slice(10))
        == first["Temperature"].ds["pd_resamples"]).all()
print("first 10 resamples unchanged:", bool(same))

fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), sharey=True, layout="constrained")
for ax, result, title in zip(axes, [first, more], ["B = 10", "B = 20 (resumed)"]):
    pdpboot.plot_pd(pdpboot.confidence_bands(result), "Temperature", ax=ax, legend=False)
    ax.set_title(title)
plt.show()
