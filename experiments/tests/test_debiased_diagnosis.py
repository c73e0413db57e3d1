"""experiments.debiased_diagnosis: the kernel window's share outside the data."""

import numpy as np


def test_window_share_outside_the_data_by_hand():
    from experiments.debiased_diagnosis import window_outside_share

    a = np.array([0.0, 0.3, 1.0])
    # g = 0: half the symmetric kernel's mass lies below 0; g = 0.5 with h = 0.5: all inside; g = 1.25, h = 0.5:
    # the part above 1 is u in (-0.5, 1], mass 1 - F(-0.5) with F(u) = (2 + 3u - u^3) / 4, F(-0.5) = 0.15625
    share = window_outside_share(a, np.array([0.0, 0.5, 1.25]), 0.5)
    np.testing.assert_allclose(share, [0.5, 0.0, 1 - 0.15625], atol=2e-3)
