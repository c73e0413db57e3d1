"""experiments.classification_coverage: a reduced coverage run of the plain bootstrap's probability bands
(slow, outside CI)."""

import numpy as np
import pytest

from pdpboot.engine.intervals import band_arrays


@pytest.mark.slow
def test_classification_probability_pd_coverage():
    """Logistic model with an interaction, plain bootstrap: pointwise and sup-t coverage near 0.95."""
    from experiments import _common as C
    from experiments import classification_coverage as S

    cfg = dict(S.SETTINGS["full"], n=300)
    run = {"R": 100, "B": 100, "T": 200}
    truth = np.mean([S._truth_fit("logistic", cfg, False, s) for s in C.seed_sequence(5, "t").spawn(run["T"])], axis=0)
    pointwise, simultaneous = [], []
    for seed in C.seed_sequence(5, "r").spawn(run["R"]):
        est, res = S._repetition("logistic", cfg, run, False, seed)
        lo, hi, *_ = band_arrays(est[None], res[:, None], level=0.95, method="percentile", simultaneous=False)
        pointwise.append(np.mean((lo[0] <= truth) & (truth <= hi[0])))
        lo, hi, *_ = band_arrays(est[None], res[:, None], level=0.95, method="percentile", simultaneous=True,
                                 simultaneous_method="sup-t")
        simultaneous.append(np.all((lo[0] <= truth) & (truth <= hi[0])))
    print(f"pointwise {np.mean(pointwise):.3f}, simultaneous {np.mean(simultaneous):.3f} (R = 100, MC SE ~0.02)")
    assert np.mean(pointwise) >= 0.90 and np.mean(simultaneous) >= 0.88
