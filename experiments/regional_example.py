"""Example figure: regional PD of x1 with simultaneous bands per region on the ``numeric_split`` design.

    nice -n 19 python -m experiments.regional_example
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
from sklearn.ensemble import GradientBoostingRegressor  # noqa: E402

import pdpboot  # noqa: E402
from experiments.regional_designs import make_design  # noqa: E402

OUT = Path(__file__).parent / "summaries" / "regional"


def main(max_depth: int = 2, n_resamples: int = 50) -> None:
    X, y = make_design("numeric_split", 500, np.random.default_rng(7))
    res = pdpboot.regional_partial_dependence(
        GradientBoostingRegressor(n_estimators=50, max_depth=3), X, y, ["x1"], grid=pdpboot.Grid(15),
        resampling=pdpboot.Resampling("bootstrap", n_resamples=n_resamples), max_depth=max_depth, rng=0,
        execution=pdpboot.Execution(progress=False))
    bands = pdpboot.confidence_bands(res, simultaneous=True)
    OUT.mkdir(parents=True, exist_ok=True)
    for centred in (False, True):
        ax = pdpboot.plot_regional_pd(bands, centred=centred)
        ax.figure.set_size_inches(6, 4)
        ax.figure.savefig(OUT / f"regional_pd_depth{max_depth}{'_centred' if centred else ''}.png", dpi=120)
    node = res["x1"]
    print(node.attrs["regions"], node.attrs["splits"])
    print(node["split_frequency"].to_pandas().round(2))


if __name__ == "__main__":
    main(1)
    main(2)
