"""The paper's experiments: one module per study, each with ``compute`` (cached) and ``render``.

Run everything with ``python -m experiments all`` (full mode, the paper's numbers; writes
``paper/figures``, ``paper/tables`` and ``paper/generated``) or ``python -m experiments all --quick``
(the CI smoke run; writes under ``experiments/results/quick/`` unless ``--paper-dir`` /
``--results-dir`` say otherwise).     Settings of every study are in :mod:`experiments.config`.
See ``paper/README.md``.

Where each output of the paper comes from (one render function per figure or table):

====================================  =============================================
``figures/electricity_bands``         ``s1_electricity._figure_bands``
``figures/electricity_contours``      ``s1_electricity._figure_contours``
``tables/coverage``                   ``s2_coverage._table_coverage``
``tables/coverage_width``             ``s2_coverage._table_width``
``figures/coverage_by_grid``          ``s2_coverage._figure_by_grid``
``figures/coverage_example``          ``s2_coverage._figure_example``
``generated/diagnosis.tex``           ``coverage_diagnosis.render`` (why OLS and the network miss 0.95)
``figures/heterogeneity_ice``         ``s3_heterogeneity._figure_ice``
``figures/heterogeneity_h2``          ``s3_heterogeneity._figure_h2``
``tables/h_test``                     ``s3_heterogeneity._table_tests``
``tables/cost``                       ``s4_cost._table``
``figures/cost_scaling``              ``s4_cost._figure_scaling``
``generated/speed.tex``               ``s4_cost.render_speed`` (from ``benchmarks/results/*.jsonl``)
``figures/bike``                      ``s5_real_data._figure_bike``
``figures/anes``                      ``s5_real_data._figure_anes``
``tables/simultaneous_bands``         ``stats_bands.render``
``tables/h_test_size_power``          ``stats_htest.render``
``tables/bounded_statistics``         ``stats_bounded.render``
``tables/coverage_classification``   ``stats_classification.render``
``tables/ale_coverage``               ``s7_ale._table``
``figures/ale_pd_vs_ale``             ``s7_ale._figure``
``tables/forest_ij``                  ``s8_forest_ij.render`` (archived run: ``experiments/archive/forest_ij``)
``tables/peers``                      ``peers.render`` (speed next to scikit-learn, dalex, effector, PDPbox)
``tables/debiased_coverage``          ``debiased_coverage.render`` (bands for the DGP's PD: coverage)
``figures/debiased_bands``            ``debiased_coverage._figure`` (learner band vs the data's band)
``generated/<study>.tex``             each study's ``render`` (numbers quoted in the text)
``generated/run.tex``                 ``run.write_run_macros`` (mode and compute times)
====================================  =============================================
"""

STUDIES = {
    "electricity": "s1_electricity",
    "coverage": "s2_coverage",
    "diagnosis": "coverage_diagnosis",
    "heterogeneity": "s3_heterogeneity",
    "cost": "s4_cost",
    "real_data": "s5_real_data",
    "bands": "stats_bands",
    "htest": "stats_htest",
    "bounded": "stats_bounded",
    "classification": "stats_classification",
    "ale": "s7_ale",
    "forest_ij": "s8_forest_ij",
    "peers": "peers",
    "debiased": "debiased_coverage",
}

#: What each study's ``render`` writes under the paper folder (extension-less, as main.tex names them);
#: "run" is :func:`experiments.run.write_run_macros`.  ``tests/test_archive.py`` checks that every file the
#: paper inputs is listed here and is rendered from the committed archive (``experiments/archive``).
OUTPUTS = {
    "run": ("generated/run", "generated/pending"),
    "electricity": ("figures/electricity_bands", "figures/electricity_contours", "generated/electricity"),
    "coverage": ("tables/coverage", "tables/coverage_width", "tables/coverage_molnar", "figures/coverage_by_grid",
                 "figures/coverage_example", "generated/coverage"),
    "diagnosis": ("generated/diagnosis",),
    "heterogeneity": ("figures/heterogeneity_ice", "figures/heterogeneity_h2", "tables/h_test",
                      "generated/heterogeneity"),
    "cost": ("tables/cost", "figures/cost_scaling", "generated/cost", "generated/speed"),
    "real_data": ("figures/bike", "figures/anes", "generated/real_data"),
    "bands": ("tables/simultaneous_bands", "generated/bands"),
    "htest": ("tables/h_test_size_power", "generated/htest"),
    "bounded": ("tables/bounded_statistics", "generated/bounded"),
    "classification": ("tables/coverage_classification", "generated/classification"),
    "ale": ("tables/ale_coverage", "figures/ale_pd_vs_ale", "generated/ale"),
    "forest_ij": ("tables/forest_ij", "generated/forest_ij"),
    "peers": ("tables/peers", "generated/peers"),
    "debiased": ("tables/debiased_coverage", "figures/debiased_bands", "generated/debiased"),
}

