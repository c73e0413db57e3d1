"""
The HTML report and the notebook card
=====================================

:func:`pdpboot.report.write_report` writes one self-contained HTML file (inline SVG figures with
hover, the numbers, the provenance; nothing loaded from the network) to open in any browser or send by
e-mail. In a notebook, :func:`pdpboot.report.display` shows a card per feature; it is shown below, as
Jupyter would.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
from sklearn.ensemble import RandomForestRegressor

import pdpboot
from pdpboot.datasets import make_electricity_prices
from pdpboot.report import display, write_report

X, y = make_electricity_prices(300, rng=0)
res = pdpboot.bootstrap_partial_dependence(
    RandomForestRegressor(n_estimators=20, min_samples_leaf=5), X, y,
    ["Temperature", "Hour", ("Temperature", "Hour")], n_resamples=10, rng=0,
    grid=pdpboot.Grid(resolution=12), execution=pdpboot.Execution(progress=False))
bands = pdpboot.confidence_bands(res)
path = write_report(bands, Path(tempfile.mkdtemp()) / "report.html")
print(f"{path.name}: {path.stat().st_size / 1024:.0f} KiB, one file")

# %%
# The overview of panels, as the command line draws it:
pdpboot.plot_pd_panels(bands)
plt.show()

# %%
# The card (``display(bands)``, or ``bands.pdpboot`` once :mod:`pdpboot.report` is imported):
display(bands)
