"""The paper's macros from the side studies' summary records (experiments/summary_macros.py)."""

from pathlib import Path

import numpy as np
import pytest

from experiments import summary_macros as S

_MOLNAR = {"learner": "gbm", "band": "bootstrap fixed rows, sup-t", "R": 30, "n": 500,
           "pointwise_learner_n": 0.9833, "pointwise_learner_n_mcse": 0.0061, "whole_learner_n": 0.8667,
           "whole_learner_n_mcse": 0.0414, "pointwise_own": 0.9833, "pointwise_own_mcse": 0.0061,
           "width": 1.6312, "matched_width_own": 1.2604}


def test_camel_keeps_letter_runs_only():
    assert S.camel("sub632_logit") == "SubLogit"
    assert S.camel("hgb_clf") == "HgbClf"
    assert S.camel("normal_log") == "NormalLog"


def test_molnar_record_becomes_named_macros():
    macros = S.molnar_macros([_MOLNAR])
    assert macros["MolnarGbmFixSuptWhole"] == "0.867"
    assert macros["MolnarGbmFixSuptWholeSE"] == "0.041"
    assert macros["MolnarGbmFixSuptMatched"] == "1.26"
    assert macros["MolnarGbmFixSuptR"] == "30"
    assert macros["MolnarGbmN"] == "500"


def test_unknown_band_and_conflicting_records_are_refused():
    with pytest.raises(ValueError, match="no macro name for the band"):
        S.molnar_macros([{**_MOLNAR, "band": "something new"}])
    with pytest.raises(ValueError, match="two summary records"):
        S.molnar_macros([_MOLNAR, {**_MOLNAR, "width": 2.0}])


def test_classifier_ranges_span_the_dgps():
    recs = [{"cell": f"{dgp}:logreg", "scheme": "plain", "R": r, "B": 100, "pointwise": p, "pointwise_mcse": 0.01,
             "pointwise_b1": p + 0.02, "pointwise_b1_mcse": 0.01, "whole": 0.9, "whole_mcse": 0.02,
             "se_ratio_median": 1.0}
            for dgp, p, r in (("step", 0.921, 201), ("rare", 0.927, 150))]
    macros = S.classifier_macros(recs, [], [])
    assert (macros["ClfRangeLogregPlainPointMin"], macros["ClfRangeLogregPlainPointMax"]) == ("0.921", "0.927")
    assert (macros["ClfRangeLogregPlainRMin"], macros["ClfRangeLogregPlainRMax"]) == ("150", "201")
    assert macros["ClfStepLogregPlainPointOrd"] == "0.941"


def test_every_summary_macro_the_paper_quotes_is_written(tmp_path):
    """The paper quotes no Molnar/Shared/Clf macro that the committed summaries do not produce."""
    import re

    from experiments import _common as C

    ctx = C.default_context(quick=False, results_dir=tmp_path / "results", paper_dir=tmp_path / "paper")
    for sub in ("generated", "tables", "figures"):
        (tmp_path / "paper" / sub).mkdir(parents=True, exist_ok=True)
    S.render(ctx)
    text = (tmp_path / "paper" / "generated" / "summaries.tex").read_text()
    written = set(re.findall(r"\\newcommand\{\\([A-Za-z]+)\}", text))
    paper = Path(__file__).resolve().parents[2] / "paper"
    used = set()
    for path in [paper / "main.tex", *sorted((paper / "sections").glob("*.tex"))]:
        used.update(re.findall(r"\\((?:Molnar|Shared|Clf|Skx)[A-Za-z]*)", path.read_text()))
    assert used, "the paper quotes none of these macros any more: drop this test or the module"
    assert used <= written, f"quoted but not written: {sorted(used - written)}"


def test_skexplain_width_summary_by_hand():
    """Width ratio and half-width / (1.96 SD) from two hand-made data sets of one learner."""
    from experiments import skexplain_width as W

    z = 1.959963984540054
    recs = [{"learner": "rf", "rep": r, **{f"{f}_skexplain_width": 0.1 for f in W.FEATURES},
             **{f"{f}_pdpboot_width": w for f in W.FEATURES}, **{f"{f}_estimate": [e, e] for f in W.FEATURES}}
            for r, w, e in ((0, 1.0, 0.0), (1, 2.0, 1.0))]
    rows, text = W.summarize(recs)
    row = rows[0]
    assert (row["ratio_min"], row["ratio_median"], row["ratio_max"]) == pytest.approx((10.0, 15.0, 20.0))
    sd = float(np.std([0.0, 1.0], ddof=1))  # the estimate's SD over the two data sets
    assert row["pdpboot_halfwidth_over_sd"] == pytest.approx(1.5 / 2 / z / sd)
    assert row["skexplain_halfwidth_over_sd"] == pytest.approx(0.1 / 2 / z / sd)
    macros = S.skexplain_macros(rows)
    assert (macros["SkxRatioMedianMin"], macros["SkxR"]) == ("15", "2")
