"""Macros for the numbers the paper quotes from the side studies' committed summaries.

Some studies report into ``experiments/summaries/<study>/*.json`` (written by their ``render
--summaries``) rather than into an archive of their own: ``background_molnar`` (fixed vs resample rows,
Molnar et al. at equal cost), ``bounded_shared`` (H² intervals on one shared subsample),
``classifier_se`` (the boosting classifier's standard error, the classifier default at B = 100 and the
pointwise diagnosis), ``skexplain_width`` (scikit-explain's background band against the refit band).
:func:`render` turns every number of those records into a ``\\newcommand`` in ``generated/summaries.tex``,
so that the paper types none of them by hand.

Macro names are letters only: a prefix per study, then the record's key words in CamelCase, then the
field (``\\MolnarGbmResPercPoint``, ``\\SharedBcCov``, ``\\ClfRareHgbClfSubLogitWhole``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from . import _common as C

SUMMARIES = C.ROOT / "experiments" / "summaries"

#: background_molnar's band labels -> macro words.
_MOLNAR_BANDS = {
    "bootstrap resample rows, percentile": "ResPerc",
    "bootstrap resample rows, sup-t": "ResSupt",
    "bootstrap fixed rows, percentile": "FixPerc",
    "bootstrap fixed rows, sup-t": "FixSupt",
    "bootstrap normal, B = 15": "NormFifteen",
    "bootstrap normal, B = 30": "NormThirty",
    "Molnar K = 15, n1/n = 0.7": "KFifteenSeventy",
    "Molnar K = 200, n1/n = 0.7": "KTwoHundredSeventy",
    "Molnar K = 15, n1/n = 0.5": "KFifteenFifty",
}


def camel(text: str) -> str:
    """``"sub632_logit"`` -> ``"SubLogit"``: the letter runs of ``text``, each capitalised (digits dropped)."""
    return "".join(word[:1].upper() + word[1:].lower() for word in re.findall(r"[A-Za-z]+", text))


def _put(macros: dict, name: str, value: str) -> None:
    if name in macros and macros[name] != value:
        raise ValueError(f"two summary records write the macro \\{name} ({macros[name]} and {value}).")
    macros[name] = value


def _put_range(macros: dict, name: str, records: list[dict], key: str, digits: int) -> None:
    """``<name>Min`` and ``<name>Max``: the smallest and largest ``key`` over ``records``."""
    _put(macros, name + "Min", C.fmt(min(r[key] for r in records), digits))
    _put(macros, name + "Max", C.fmt(max(r[key] for r in records), digits))


def _read(path: Path) -> list:
    return json.loads(path.read_text()) if path.exists() else []


def molnar_macros(records: list[dict]) -> dict[str, str]:
    """Coverage, MC SE, widths and R of every band of ``background_molnar`` for each learner."""
    macros: dict[str, str] = {}
    for rec in records:
        band = _MOLNAR_BANDS.get(rec["band"])
        if band is None:
            raise ValueError(f"background_molnar: no macro name for the band {rec['band']!r}; add it to _MOLNAR_BANDS.")
        head = f"Molnar{camel(rec['learner'])}{band}"
        for field, key, digits in (("Point", "pointwise_learner_n", 3), ("PointSE", "pointwise_learner_n_mcse", 3),
                                   ("Whole", "whole_learner_n", 3), ("WholeSE", "whole_learner_n_mcse", 3),
                                   ("Own", "pointwise_own", 3), ("OwnSE", "pointwise_own_mcse", 3),
                                   ("Width", "width", 2), ("Matched", "matched_width_own", 2)):
            _put(macros, head + field, C.fmt(rec[key], digits))
        _put(macros, head + "R", str(rec["R"]))
        _put(macros, f"Molnar{camel(rec['learner'])}N", str(rec["n"]))
    return macros


def shared_macros(records: list[dict]) -> dict[str, str]:
    """H² intervals on one shared subsample (``bounded_shared``): coverage per method and the diagnosis."""
    macros: dict[str, str] = {}
    for rec in records:
        method = camel(rec["method"])
        _put(macros, f"Shared{method}Cov", C.fmt(rec["coverage_expected"], 3))
        _put(macros, f"Shared{method}CovSE", C.fmt(rec["coverage_expected_mcse"], 3))
        _put(macros, f"Shared{method}MissAbove", C.fmt(rec["miss_target_above_interval"], 3))
        _put(macros, f"Shared{method}MissBelow", C.fmt(rec["miss_target_below_interval"], 3))
        _put(macros, "SharedR", str(rec["R"]))
        _put(macros, "SharedB", str(rec["B"]))
        _put(macros, "SharedSDRatio", C.fmt(rec["sd_resamples_over_sd_estimate"], 2))
        _put(macros, "SharedCorr", C.fmt(rec["corr_estimate_sd_resamples"], 2))
    return macros


def classifier_macros(default: list[dict], se_study: list[dict], diagnosis: list[dict]) -> dict[str, str]:
    """The classifier studies: the default at B = 100 per cell and scheme, the SE study, the finite-B check."""
    macros: dict[str, str] = {}
    for rec in default:
        dgp, learner = rec["cell"].split(":")
        head = f"Clf{camel(dgp)}{camel(learner)}{camel(rec['scheme'])}"
        for field, key in (("Point", "pointwise"), ("PointSE", "pointwise_mcse"), ("PointOrd", "pointwise_b1"),
                           ("PointOrdSE", "pointwise_b1_mcse"), ("Whole", "whole"), ("WholeSE", "whole_mcse")):
            _put(macros, head + field, C.fmt(rec[key], 3))
        if "pointwise_numpy" in rec:  # "Point" is the package's (B + 1) q rule since bba61ac; "PointOld" NumPy's
            _put(macros, head + "PointOld", C.fmt(rec["pointwise_numpy"], 3))
            _put(macros, head + "PointOldSE", C.fmt(rec["pointwise_numpy_mcse"], 3))
        _put(macros, head + "SESD", C.fmt(rec["se_ratio_median"], 2))
        _put(macros, head + "R", str(rec["R"]))
        _put(macros, "ClfDefaultB", str(rec["B"]))
    # The range over the DGPs of each learner and scheme (``\\ClfRangeLogregPlainPointMin``).
    groups: dict[str, list[dict]] = {}
    for rec in default:
        groups.setdefault(f"ClfRange{camel(rec['cell'].split(':')[1])}{camel(rec['scheme'])}", []).append(rec)
    for head, recs in groups.items():
        for field, key in (("Point", "pointwise"), ("PointOrd", "pointwise_b1"), ("Whole", "whole")):
            _put_range(macros, head + field, recs, key, 3)
        if all("pointwise_numpy" in r for r in recs):
            _put_range(macros, head + "PointOld", recs, "pointwise_numpy", 3)
        _put_range(macros, head + "R", recs, "R", 0)
    for rec in se_study:
        dgp, learner = rec["combo"].split(":")
        head = f"ClfSe{camel(dgp)}{camel(learner)}{camel(rec['scheme'])}"
        _put(macros, head + "SESD", C.fmt(rec["se_ratio_median"], 2))
        for field, key in (("Point", "pointwise_pkg"), ("PointSE", "pointwise_pkg_mcse"), ("Whole", "whole_pkg"),
                           ("WholeSE", "whole_pkg_mcse")):
            _put(macros, head + field, C.fmt(rec[key], 3))
        _put(macros, head + "R", str(rec["R"]))
        _put(macros, head + "B", str(rec["B"]))
    for rec in diagnosis:
        finite = rec.get("finite_b")
        if finite:
            _put(macros, "ClfExactInterp", C.fmt(finite["percentile_interpolated"], 3))
            _put(macros, "ClfExactOrder", C.fmt(finite["percentile_order_statistic"], 3))
            _put(macros, "ClfExactB", str(finite["B"]))
    return macros


def centring_macros(records: list[dict]) -> dict[str, str]:
    """Where the classifier default puts its band (``auto_centring.json``): the rare outcome's boosting classifier
    with the default and with a band centred on the estimate (``\\ClfCentringRareHgbClfCentredWhole``), and over the
    flexible learners' cells the range of the offset-error correlation and of the share of excluded estimates."""
    macros: dict[str, str] = {}
    flexible = [r for r in records if not r["cell"].endswith(":logreg")]
    for rec in records:
        if rec["cell"] == "rare:hgb_clf":
            for variant, name in (("auto", "Auto"), ("centred on the estimate", "Centred")):
                for field, key in (("Point", "pointwise"), ("Whole", "whole"), ("WholeSE", "whole_mcse")):
                    _put(macros, f"ClfCentringRareHgbClf{name}{field}", C.fmt(rec[variant][key], 3))
            _put(macros, "ClfCentringRareHgbClfR", str(rec["R"]))
    if flexible:
        _put_range(macros, "ClfCentringCorr", flexible, "offset_error_correlation", 2)
        _put(macros, "ClfCentringExcludedMaxPercent", C.fmt(100 * max(r["excluded_share"] for r in flexible), 1))
        losses = [r["auto"]["whole"] - r["centred on the estimate"]["whole"] for r in flexible]
        _put(macros, "ClfCentringLossMin", C.fmt(min(losses), 2))
        _put(macros, "ClfCentringLossMax", C.fmt(max(losses), 2))
    return macros


def multiclass_macros(records: list[dict]) -> dict[str, str]:
    """The default on a three-class outcome (``multiclass_default/summary.json``): ``\\ClfMultiHgbClfWhole``."""
    macros: dict[str, str] = {}
    for rec in records:
        head = f"ClfMulti{camel(rec['learner'])}"
        for field, key in (("Point", "pointwise"), ("PointSE", "pointwise_mcse"), ("Whole", "whole"),
                           ("WholeSE", "whole_mcse")):
            _put(macros, head + field, C.fmt(rec[key], 3))
        _put(macros, head + "R", str(rec["R"]))
        _put(macros, "ClfMultiB", str(rec["B"]))
        _put(macros, "ClfMultiN", str(rec["n"]))
    return macros


def h2_classifier_macros(records: list[dict]) -> dict[str, str]:
    """H2 intervals of a boosting classifier under each scheme (``h2_classifier/summary.json``):
    ``\\HtwoClfAutoCov``, ``\\HtwoClfBootstrapCov``."""
    macros: dict[str, str] = {}
    for rec in records:
        head = f"HtwoClf{camel(rec['scheme'])}"
        _put(macros, head + "Cov", C.fmt(rec["coverage"], 3))
        _put(macros, head + "CovSE", C.fmt(rec["coverage_mcse"], 3))
        _put(macros, head + "Above", C.fmt(rec["miss_above"], 3))
        _put(macros, head + "SESD", C.fmt(rec["se_ratio"], 2))
        _put(macros, head + "R", str(rec["R"]))
        _put(macros, "HtwoClfTarget", C.fmt(rec["target"], 3))
    return macros


def skexplain_macros(records: list[dict]) -> dict[str, str]:
    """scikit-explain's background band against pdpboot's refit band (``skexplain_width``), per learner."""
    macros: dict[str, str] = {}
    for learner in sorted({rec["learner"] for rec in records}):
        recs = [rec for rec in records if rec["learner"] == learner]
        head = f"Skx{camel(learner)}"
        _put(macros, head + "RatioMin", C.fmt(min(r["ratio_min"] for r in recs), 1))
        _put(macros, head + "RatioMax", C.fmt(max(r["ratio_max"] for r in recs), 1))
        _put_range(macros, head + "RatioMedian", recs, "ratio_median", 1)
        for field, key in (("Pdpboot", "pdpboot_halfwidth_over_sd"), ("Skexplain", "skexplain_halfwidth_over_sd")):
            _put_range(macros, head + field + "Hw", recs, key, 2)
        _put(macros, "SkxR", str(min(r["R"] for r in recs)))
    if records:  # over both learners and every feature
        _put_range(macros, "SkxRatioMedian", records, "ratio_median", 0)
        for field, key in (("Pdpboot", "pdpboot_halfwidth_over_sd"), ("Skexplain", "skexplain_halfwidth_over_sd")):
            _put_range(macros, f"Skx{field}Hw", records, key, 2)
    return macros


def ratio_model_macros(records: list[dict], errors: list[dict]) -> dict[str, str]:
    """The debiased estimator's density-ratio models on DGP E (``debiased_ratio_models``): coverage and largest
    |bias| / SD of the polynomial, boosted and default ratio, how often a held-out loss picks the polynomial, and
    the smallest SE / SD of the default on E and H."""
    macros: dict[str, str] = {}
    by = {(r["setting"].split("_")[0], r["model"].split(" ")[0].rstrip(":")): r for r in records}
    for (dgp, model), head in ((("E", "polynomial"), "DrmEPoly"), (("E", "boosting"), "DrmEBoost"),
                               (("E", "default"), "DrmEDefault")):
        rec = by.get((dgp, model))
        if rec is not None:
            _put(macros, head + "Point", C.fmt(rec["pointwise"], 3))
            _put(macros, head + "Whole", C.fmt(rec["whole"], 3))
            _put(macros, head + "MaxBias", C.fmt(rec["max_abs_bias_sd"], 2))
    defaults = [by[k] for k in (("E", "default"), ("H", "default")) if k in by]
    if defaults:
        _put(macros, "DrmSeSdMin", C.fmt(min(min(min(row) for row in r["se_sd"]) for r in defaults), 2))
    picked = {r["model"]: r["picked_by_loss"] for r in errors}
    if "polynomial" in picked:
        _put(macros, "DrmPolyPickedByLoss", str(picked["polynomial"]))
        _put(macros, "DrmRatioErrorSets", str(sum(picked.values())))
    return macros


def render(ctx: C.Context, summaries: Path = SUMMARIES) -> None:
    """Write ``generated/summaries.tex`` from the committed summary records under ``summaries``."""
    macros: dict[str, str] = {}
    for part in (molnar_macros(_read(summaries / "background_molnar" / "summary.json")),
                 shared_macros(_read(summaries / "bounded_shared" / "summary.json")),
                 classifier_macros(_read(summaries / "classifier_se" / "default_B100.json"),
                                   _read(summaries / "classifier_se" / "summary.json"),
                                   _read(summaries / "classifier_se" / "pointwise_diagnosis.json")),
                 centring_macros(_read(summaries / "classifier_se" / "auto_centring.json")),
                 multiclass_macros(_read(summaries / "multiclass_default" / "summary.json")),
                 h2_classifier_macros(_read(summaries / "h2_classifier" / "summary.json")),
                 skexplain_macros(_read(summaries / "skexplain_width" / "summary.json")),
                 ratio_model_macros(_read(summaries / "debiased_ratio_models" / "summary.json"),
                                    _read(summaries / "debiased_ratio_models" / "ratio_error.json"))):
        for name, value in part.items():
            _put(macros, name, value)
    C.write_macros(ctx.out("generated", "summaries.tex"), dict(sorted(macros.items())),
                   "From experiments/summaries/*/*.json (experiments/summary_macros.py).")
