"""The paper's experiments: one module per study, each with ``compute`` (cached) and ``render``.

Run everything with ``python -m experiments all`` (full mode, the paper's numbers; writes
``paper/figures``, ``paper/tables`` and ``paper/generated``) or ``python -m experiments all --quick``
(the CI smoke run; writes under ``experiments/results/quick/`` unless ``--paper-dir`` /
``--results-dir`` say otherwise).     Settings of every study are in :mod:`experiments.config`.
See ``paper/README.md``.

Where each output of the paper comes from (one render function per figure or table):

====================================  =============================================
``figures/electricity_bands``         ``electricity._figure_bands``
``figures/electricity_contours``      ``electricity._figure_contours``
``tables/coverage``                   ``coverage._table_coverage`` (settings with R >= 20)
``tables/coverage_small_r``           ``coverage._table_coverage`` (the others; appendix)
``tables/coverage_width``             ``coverage._table_width``
``figures/coverage_by_grid``          ``coverage._figure_by_grid``
``figures/coverage_example``          ``coverage._figure_example``
``generated/diagnosis.tex``           ``coverage_diagnosis.render`` (why OLS and the network miss 0.95)
``figures/heterogeneity_ice``         ``heterogeneity._figure_ice``
``figures/heterogeneity_h2``          ``heterogeneity._figure_h2``
``tables/h_test``                     ``heterogeneity._table_tests``
``tables/cost``                       ``cost._table``
``figures/cost_scaling``              ``cost._figure_scaling``
``generated/speed.tex``               ``cost.render_speed`` (from ``benchmarks/results/*.jsonl``)
``figures/bike``                      ``real_data._figure_bike``
``figures/anes``                      ``real_data._figure_anes``
``tables/simultaneous_bands``         ``simultaneous_bands.render``
``tables/h_test_size_power``          ``h_test_size_power.render``
``tables/bounded_statistics``         ``bounded_statistics.render``
``tables/coverage_classification``   ``classification_coverage.render``
``tables/ale_coverage``               ``ale_coverage._table``
``figures/ale_pd_vs_ale``             ``ale_coverage._figure``
``tables/forest_ij``                  ``forest_ij.render`` (archived run: ``experiments/archive/forest_ij``)
``tables/peers``                      ``peers.render`` (speed next to scikit-learn, dalex, effector, PDPbox)
``tables/debiased_coverage``          ``debiased_coverage.render`` (bands for the DGP's PD: coverage)
``figures/debiased_bands``            ``debiased_coverage._figure`` (learner band vs the data's band)
``generated/<study>.tex``             each study's ``render`` (numbers quoted in the text)
``generated/run.tex``                 ``run.write_run_macros`` (mode and compute times)
``tables/compute``, ``generated/compute``  ``provenance.render`` (every study's time and code version)
``generated/summaries.tex``           ``summary_macros.render`` (numbers from ``experiments/summaries/``)
====================================  =============================================
"""

#: Study key (``python -m experiments KEY``) -> module of ``experiments`` that computes and renders it.
#: Modules are named by what they study; the keys are stable names: each is the study's folder under
#: ``experiments/results/<mode>/`` and ``experiments/archive/`` and its ``timings.json`` entry, and most
#: name its macro file ``generated/<key>.tex``, so renaming a key would move the committed archive and
#: change the paper's outputs.  Where key and module differ: bands -> simultaneous_bands, htest ->
#: h_test_size_power, bounded -> bounded_statistics, classification -> classification_coverage,
#: ale -> ale_coverage, peers -> peer_speed, diagnosis -> coverage_diagnosis.  (Until issue 25 the modules
#: were s1_electricity, s2_coverage, s3_heterogeneity, s4_cost, s5_real_data, s7_ale, s8_forest_ij,
#: stats_bands, stats_htest, stats_bounded, stats_classification and peers.)
STUDIES = {
    "electricity": "electricity",
    "coverage": "coverage",
    "diagnosis": "coverage_diagnosis",
    "heterogeneity": "heterogeneity",
    "cost": "cost",
    "real_data": "real_data",
    "bands": "simultaneous_bands",
    "htest": "h_test_size_power",
    "bounded": "bounded_statistics",
    "classification": "classification_coverage",
    "ale": "ale_coverage",
    "forest_ij": "forest_ij",
    "peers": "peer_speed",
    "debiased": "debiased_coverage",
}

#: What each study's ``render`` writes under the paper folder (extension-less, as main.tex names them);
#: "run" is :func:`experiments.run.write_run_macros`.  ``experiments/tests/test_archive.py`` checks that every file the
#: paper inputs is listed here and is rendered from the committed archive (``experiments/archive``).
OUTPUTS = {
    "run": ("generated/run", "generated/pending", "generated/compute", "tables/compute", "generated/summaries"),
    "electricity": ("figures/electricity_bands", "figures/electricity_contours", "generated/electricity"),
    "coverage": ("tables/coverage", "tables/coverage_small_r", "tables/coverage_width", "tables/coverage_molnar",
                 "figures/coverage_by_grid",
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

