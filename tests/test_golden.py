"""Results of the refactored house equal the results of the code before it (commit 5a4e794).

``tests/data/golden_pre_refactor.npz`` was written by ``tests/data/make_golden.py`` with the
pre-refactor code: a random forest through the exact tree engine with heterogeneity, H statistics
and ICE; histogram gradient boosting (tree engine, a 2-D surface); and a Pipeline (brute engine,
fixed background).  Pipeline and HGB results are bit-identical; the forest's PD now comes from the
same engine pass as its ICE (for the heterogeneity statistics), which sums in another order, so the
comparison allows 1e-12.
"""

import importlib.util
from pathlib import Path

import numpy as np

DATA = Path(__file__).parent / "data"


def _golden_arrays() -> dict:
    spec = importlib.util.spec_from_file_location("make_golden", DATA / "make_golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.golden_arrays()


def test_results_equal_the_pre_refactor_code():
    before, now = np.load(DATA / "golden_pre_refactor.npz"), _golden_arrays()
    assert sorted(before) == sorted(now)
    for key in before:
        exact = not key.startswith("electricity_rf|") or not key.split("|")[2].startswith("pd")
        if exact:
            np.testing.assert_array_equal(now[key], before[key], err_msg=key)
        else:
            np.testing.assert_allclose(now[key], before[key], rtol=1e-12, atol=1e-12, err_msg=key)
