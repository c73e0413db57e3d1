"""
Your own pipeline
=================

Any scikit-learn estimator works, pipelines included: each refit clones the whole pipeline, so the
preprocessing is refitted on every resample too. Here a ``ColumnTransformer`` one-hot encodes a text
column in front of a ridge regression.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.linear_model import RidgeCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, SplineTransformer

import pdpboot

rng = np.random.default_rng(0)
n = 300
X = pd.DataFrame({"age": rng.uniform(20, 70, n),
                  "region": rng.choice(["north", "south", "east"], n)})
y = np.sin(X["age"] / 10) + X["region"].map({"north": 0.0, "south": 0.5, "east": -0.3}) + rng.normal(0, 0.3, n)

model = make_pipeline(
    make_column_transformer((SplineTransformer(n_knots=6), ["age"]),
                            (OneHotEncoder(), ["region"])),
    RidgeCV())
res = pdpboot.bootstrap_partial_dependence(model, X, y, ["age", "region"], n_resamples=30, rng=0,
                                           execution=pdpboot.Execution(progress=False))
bands = pdpboot.confidence_bands(res)

fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained")
for ax, feature in zip(axes, ["age", "region"]):
    pdpboot.plot_pd(bands, feature, ax=ax, legend=feature == "age")
plt.show()
