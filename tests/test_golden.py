"""Results of the refactored house equal the results of the code before it (commit 5a4e794).

``tests/data/golden_pre_refactor.npz`` was written by ``tests/data/make_golden.py`` with the
pre-refactor code: a random forest through the exact tree engine with heterogeneity, H statistics
and ICE; histogram gradient boosting (tree engine, a 2-D surface); and a Pipeline (brute engine,
fixed background).  The refactor alone kept Pipeline and HGB results bit-identical and the forest's
within 5e-14 (its PD now comes from the same engine pass as its ICE, summed in another order); the
faster tree engine (issue 14) sums in yet another order.  So the brute-engine case must be
bit-identical and the tree-engine cases equal to 1e-12.
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
        exact = key.startswith("electricity_pipeline|")
        if exact:
            np.testing.assert_array_equal(now[key], before[key], err_msg=key)
        else:
            np.testing.assert_allclose(now[key], before[key], rtol=1e-12, atol=1e-12, err_msg=key)
