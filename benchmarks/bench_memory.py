"""Peak resident memory of the generic (brute) path on a large 2-D job.

Issue 8 setting: a 50 x 50 grid, 20,000 background rows, 10 features, generic
engine (``method="brute"``), bootstrap with B = 2.  Stacking every (grid point,
row) pair at once would need 2,500 x 20,000 x 10 x 8 B = 4 GB for the design
matrix alone; the engine works in blocks bounded by ``memory_limit``.
Peak memory is the operating system's accounting (``ru_maxrss``) of a fresh
child process, so nothing else of this script counts.

    python -m benchmarks.bench_memory
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import json, resource, time
import numpy as np
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
import pdpboot
from pdpboot.datasets import make_friedman1
after_import = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
X, y = make_friedman1(20_000, n_features=10, rng=0)
start = time.perf_counter()
res = pdpboot.bootstrap_partial_dependence(
    make_pipeline(StandardScaler(), Ridge()), X, y, [("x1", "x2")], n_resamples=2,
    grid_resolution=50, method="brute", n_jobs=1, rng=0, progress=False)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"after_import_mib": after_import / 1024, "peak_mib": peak / 1024, "seconds": seconds,
                  "grid": list(res["x1__x2"].ds["pd"].shape)}))
"""


def main() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"2-D 50x50 grid, 20,000 rows, 10 features, brute engine, B = 2 ({result['seconds']:.1f} s)")
    print(f"peak resident memory: {result['peak_mib']:.0f} MiB "
          f"(after imports: {result['after_import_mib']:.0f} MiB); target < 1024 MiB")


if __name__ == "__main__":
    main()
