"""Command line: ``python -m experiments [all | study ...] [--quick] [--paper-dir D] [--results-dir D]``."""

import os

# One BLAS/OpenMP thread per process: parallelism comes from joblib workers (set before numpy loads).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from .run import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
