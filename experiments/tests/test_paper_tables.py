"""The paper's hand-written sources and a few generated tables follow the referee's rules (issue 31)."""

from __future__ import annotations

import re
from pathlib import Path

from experiments import coverage
from experiments.simultaneous_bands import calibrated_level_cell

PAPER = Path(__file__).resolve().parents[2] / "paper"
SOURCES = [PAPER / "main.tex", *sorted((PAPER / "sections").glob("*.tex"))]


def _rows(table: Path) -> list[list[str]]:
    body = table.read_text().split(r"\midrule")[1].split(r"\bottomrule")[0]
    return [[c.strip() for c in line.split("&")] for line in body.splitlines() if line.count("&") > 3]


def test_settings_with_small_r_are_only_in_the_appendix_table():
    main = [int(r[3]) for r in _rows(PAPER / "tables" / "coverage.tex")]
    small = [int(r[3]) for r in _rows(PAPER / "tables" / "coverage_small_r.tex")]
    assert main and min(main) >= coverage.SMALL_R
    assert all(r < coverage.SMALL_R for r in small)


def test_a_calibrated_level_at_the_ceiling_is_marked():
    assert calibrated_level_cell(0.99996) == r"1.0000$^{\dagger}$"
    assert calibrated_level_cell(0.9987) == "0.9987"
    assert calibrated_level_cell(float("nan")) == "--"


def test_code_arguments_escape_underscores():
    """``\\code{peer_speed.py}`` stops pdflatex (the PDF did not build after the study renames)."""
    bad = [(p.name, m) for p in SOURCES for m in re.findall(r"\\code\{([^{}]*)\}", p.read_text())
           if re.search(r"(?<!\\)_", m)]
    assert not bad


def test_software_table_has_no_unresolved_cells():
    tex = (PAPER / "main.tex").read_text()
    table = tex[tex.index(r"\label{tab:software}"):]
    table = table[:table.index(r"\end{tabular}")]
    assert "?" not in table
    for peer in ("scikit-explain", "mrIML", "Woodelf", "FastPD", r"\code{ale}"):
        assert peer in table, peer


def test_pair_labels_are_mathematics():
    from experiments.heterogeneity import math_pair_label

    assert math_pair_label("x1 × x2") == r"$x_{1} \times x_{2}$"
    assert math_pair_label("x10 × x3") == r"$x_{10} \times x_{3}$"
    assert math_pair_label("Temperature × Hour") == "Temperature × Hour"


def test_coverage_figure_gives_every_method_its_own_marker():
    """Colour-blind safe: the percentile, basic and M23 lines differ in marker shape, not only in colour."""
    assert set(coverage.METHOD_MARKERS) == {"percentile", "basic", "molnar"}
    assert len(set(coverage.METHOD_MARKERS.values())) == 3


def test_one_spelling_per_learner_and_method_in_every_table():
    """No table cell is a code key (gbm, ols, rf, bc, bca) or its upper-case abbreviation (GBM, RF)."""
    keys = {"gbm", "GBM", "ols", "rf", "RF", "mlp", "logit", "logistic", "gbc", "bc", "bca"}
    bad = []
    for table in sorted((PAPER / "tables").glob("*.tex")):
        for line in table.read_text().splitlines():
            bad += [(table.name, cell.strip()) for cell in line.rstrip("\\ ").split("&") if cell.strip() in keys]
    assert not bad


def test_rejection_rates_from_few_data_sets_are_counts():
    from experiments.heterogeneity import MIN_RATE_REPS, math_feature, rejection_cell

    assert rejection_cell(3, 3) == "3 of 3"
    assert rejection_cell(2, 25) == "0.08 (0.05)"  # sqrt(0.08 * 0.92 / 25) = 0.054
    assert rejection_cell(0, MIN_RATE_REPS) == "0.00 (0.00)"
    assert math_feature("x12") == "x_{12}"
    assert math_feature("Temperature") == r"\text{Temperature}"
