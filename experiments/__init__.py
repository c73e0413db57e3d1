"""The paper's experiments: one module per study, each with ``compute`` (cached) and ``render``.

Run everything with ``python -m experiments all`` (full mode, the paper's numbers; writes
``paper/figures``, ``paper/tables`` and ``paper/generated``) or ``python -m experiments all --quick``
(the CI smoke run; writes under ``experiments/results/quick/`` unless ``--paper-dir`` /
``--results-dir`` say otherwise).  See ``paper/README.md``.
"""

STUDIES = {
    "electricity": "s1_electricity",
    "coverage": "s2_coverage",
    "heterogeneity": "s3_heterogeneity",
    "cost": "s4_cost",
    "real_data": "s5_real_data",
}
