"""
Resamples on a Dask cluster
===========================

Resamples run on Dask workers through joblib's Dask backend. Every resample's seed is drawn before
dispatch, so the result equals a local run. Here a tiny in-process cluster; on a real one use
``Client("tcp://scheduler:8786")`` or a ``dask-jobqueue`` cluster instead.
"""

import joblib
import matplotlib.pyplot as plt
import numpy as np
from dask.distributed import Client, LocalCluster
from sklearn.ensemble import ExtraTreesRegressor

import pdpboot
from pdpboot.datasets import make_electricity_prices

X, y = make_electricity_prices(300, rng=0)
forest = ExtraTreesRegressor(n_estimators=20, min_samples_leaf=5)
local = pdpboot.bootstrap_partial_dependence(forest, X, y, ["Hour"], n_resamples=8, rng=0,
                                             execution=pdpboot.Execution(progress=False))

with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
        Client(cluster), joblib.parallel_config(backend="dask"):
    remote = pdpboot.bootstrap_partial_dependence(forest, X, y, ["Hour"], n_resamples=8, rng=0,
                                                  execution=pdpboot.Execution(n_jobs=2, progress=False))

difference = np.abs(remote["Hour"].ds["pd_resamples"] - local["Hour"].ds["pd_resamples"]).max()
print(f"largest difference from the local run: {float(difference):.1e}")
pdpboot.plot_pd(pdpboot.confidence_bands(remote), "Hour")
plt.show()
