"""Write the documentation's validation page from the committed study summaries (experiments/summaries/).

Called by ``docs/conf.py`` at every build, as ``experiments/summary_macros.py`` writes the paper's numbers:
no number on the page is typed by hand. One table per claim; a coverage is shown as ``0.962 (0.004)``
(estimate and Monte Carlo SE) and judged against its nominal level within 2 MC SE.

``python docs/validation_page.py`` writes ``docs/validation.rst``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUMMARIES = HERE.parent / "experiments" / "summaries"

Column = tuple[str, Callable[[dict], str]]


def num(value, digits: int = 3) -> str:
    """A number rounded to ``digits`` decimals; missing values as an em dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}f}"


def with_se(value, se, digits: int = 3) -> str:
    """``0.962 (0.004)``: an estimate and its Monte Carlo standard error."""
    return f"{num(value, digits)} ({num(se, digits)})"


def judge(value: float, se: float, nominal: float, *, upper_only: bool = False) -> str:
    """Where a coverage (or a test's size) stands against its nominal level, within 2 MC SE."""
    if value < nominal - 2 * se:
        return "meets (below the level)" if upper_only else "**under-covers**"
    if value > nominal + 2 * se:
        return "**too large**" if upper_only else "conservative"
    return "meets (within 2 MC SE)"


def field(key: str, digits: int | None = None) -> Callable[[dict], str]:
    """A column showing ``record[key]`` (as text, or rounded to ``digits``)."""
    return lambda rec: str(rec[key]) if digits is None else num(rec[key], digits)


def coverage(key: str) -> Callable[[dict], str]:
    """A column showing ``record[key]`` with its MC SE ``record[key + "_mcse"]``."""
    return lambda rec: with_se(rec[key], rec[key + "_mcse"])


def table(title: str, claim: str, source: str, records: Sequence[dict], columns: Sequence[Column],
          note: str = "") -> str:
    """One claim: a section with its sentence, its source file and a ``list-table``."""
    if not records:
        return ""
    lines = [title, "-" * len(title), "", claim, "", f"Source: ``experiments/summaries/{source}``.", ""]
    if note:
        lines += [note, ""]
    lines += [".. list-table::", "   :header-rows: 1", "   :class: validation", ""]
    for row in [[name for name, _ in columns]] + [[show(rec) for _, show in columns] for rec in records]:
        lines.append(f"   * - {row[0]}")
        lines += [f"     - {cell}" for cell in row[1:]]
    return "\n".join(lines) + "\n\n"


def _own_target(rec: dict) -> tuple[float, float]:
    """A band's coverage of what it claims: the whole curve for a sup-t band, each grid point otherwise."""
    key = "whole_learner_n" if "sup-t" in rec["band"] else "pointwise_learner_n"
    return rec[key], rec[key + "_mcse"]


def _read(root: Path, name: str):
    path = root / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []


def sections(root: Path) -> list[str]:
    """The page's tables, one per claim, from the summaries under ``root``."""
    out = []
    default = _read(root, "classifier_se/default_B100.json")
    out.append(table(
        "Classifiers: the default (0.632 subsample, logit scale) at B = 100",
        "Claim: for a classifier's probabilities, ``resampling=\"auto\"`` (0.632 subsample, bands on the logit "
        "scale) covers the learner's expected PD at about the nominal 95 %, pointwise and over the whole curve. "
        "``plain`` is the bootstrap, ``logit`` the bootstrap on the logit scale, ``sub632`` the subsample on "
        "the probability scale, ``sub632_logit`` the default.",
        "classifier_se/default_B100.json", default,
        [("setting (DGP:learner)", field("cell")), ("scheme", field("scheme")), ("R", field("R")),
         ("B", field("B")), ("pointwise (MC SE)", coverage("pointwise")), ("whole curve (MC SE)", coverage("whole")),
         ("SE ÷ true SD", field("se_ratio_median", 2)),
         ("whole curve vs 0.95", lambda r: judge(r["whole"], r["whole_mcse"], 0.95))]))
    out.append(table(
        "Classifiers: remedies for a boosting classifier's small bootstrap SE",
        "Claim: the bootstrap SE of a boosting classifier's probability PD is below the true sampling SD, so "
        "its bands under-cover; the 0.632 subsample with bands on the logit scale fixes it.",
        "classifier_se/summary.json", _read(root, "classifier_se/summary.json"),
        [("setting (DGP:learner)", field("combo")), ("scheme", field("scheme")), ("R", field("R")),
         ("B", field("B")), ("SE ÷ true SD", field("se_ratio_median", 2)),
         ("pointwise (MC SE)", coverage("pointwise_pkg")), ("whole curve (MC SE)", coverage("whole_pkg")),
         ("whole curve vs 0.95", lambda r: judge(r["whole_pkg"], r["whole_pkg_mcse"], 0.95))]))
    out.append(table(
        "Classifiers: the package's defaults end to end",
        "Claim: ``bootstrap_partial_dependence`` and ``confidence_bands`` with their defaults cover a "
        "classifier's expected PD.",
        "classifier_se/auto_default.json", _read(root, "classifier_se/auto_default.json"),
        [("setting (DGP:learner)", field("cell")), ("method", field("method")), ("R", field("R")), ("B", field("B")),
         ("pointwise (MC SE)", coverage("pointwise")), ("whole curve (MC SE)", coverage("whole")),
         ("whole curve vs 0.95", lambda r: judge(r["whole"], r["whole_mcse"], 0.95))]))
    out.append(table(
        "Classifiers: why the band keeps its offset from the estimate",
        "Claim: a pointwise band may lie wholly on one side of its estimate; centring it on the estimate lowers "
        "coverage, because the refits' offset is negatively correlated with the estimate's error.",
        "classifier_se/auto_centring.json", _read(root, "classifier_se/auto_centring.json"),
        [("setting (DGP:learner)", field("cell")), ("R", field("R")), ("B", field("B")),
         ("whole curve, default (MC SE)", lambda r: with_se(r["auto"]["whole"], r["auto"]["whole_mcse"])),
         ("whole curve, centred (MC SE)", lambda r: with_se(r["centred on the estimate"]["whole"],
                                                            r["centred on the estimate"]["whole_mcse"])),
         ("offset-error correlation", field("offset_error_correlation", 2))]))
    out.append(table(
        "Classifiers: three classes",
        "Claim: on a three-class outcome the defaults cover every class's probability PD (conservatively for "
        "flexible learners).",
        "multiclass_default/summary.json", _read(root, "multiclass_default/summary.json"),
        [("learner", field("learner")), ("n", field("n")), ("R", field("R")), ("B", field("B")),
         ("pointwise (MC SE)", coverage("pointwise")), ("whole curve (MC SE)", coverage("whole")),
         ("whole curve vs 0.95", lambda r: judge(r["whole"], r["whole_mcse"], 0.95))]))
    fresh = []
    for path in sorted((root / "fresh_classifier").glob("*.json")):
        design = json.loads(path.read_text(encoding="utf-8"))
        fresh += [{**design, "feature": name, **stats} for name, stats in design["features"].items()]
    out.append(table(
        "Classifiers: fresh designs (rare outcome, threshold)",
        "Claim checked on designs the default was not tuned on; the rare outcome with few boosting rounds is "
        "where it fails.",
        "fresh_classifier/*.json", fresh,
        [("design", field("design")), ("feature", field("feature")), ("n", field("n")), ("R", field("R")),
         ("B", field("B")), ("pointwise (MC SE)", coverage("pointwise")), ("whole curve (MC SE)", coverage("whole")),
         ("whole curve vs 0.95", lambda r: judge(r["whole"], r["whole_mcse"], 0.95))]))
    out.append(table(
        "H² of a boosting classifier",
        "Claim: the 95 % percentile interval of H² covers the learner's expected H² under the default scheme.",
        "h2_classifier/summary.json", _read(root, "h2_classifier/summary.json"),
        [("scheme", field("scheme")), ("resampling", field("resampling")), ("R", field("R")), ("B", field("B")),
         ("coverage (MC SE)", coverage("coverage")), ("missed above", field("miss_above")),
         ("SE ÷ true SD", field("se_ratio", 2)),
         ("vs 0.95", lambda r: judge(r["coverage"], r["coverage_mcse"], 0.95))]))
    out.append(table(
        "H² intervals on one shared subsample",
        "Claim: H² is biased upwards under refitting, so its intervals miss from above; none of the interval "
        "methods reaches 0.95 for every learner. Use ``h_statistic_test`` to test for an interaction.",
        "bounded_shared/summary.json", _read(root, "bounded_shared/summary.json"),
        [("setting", field("setting")), ("method", field("method")), ("R", field("R")), ("B", field("B")),
         ("coverage (MC SE)", coverage("coverage_expected")), ("missed below", field("miss_target_below_interval")),
         ("missed above", field("miss_target_above_interval")),
         ("vs 0.95", lambda r: judge(r["coverage_expected"], r["coverage_expected_mcse"], 0.95))]))
    htest = _read(root, "h_test_size_power/summary.json")
    cells = [{"cell": name, **cell} for name, cell in (htest or {}).get("cells", {}).items()]
    out.append(table(
        "The H test's size",
        "Claim: under no interaction, ``h_statistic_test`` rejects at most at its level (here 5 %).",
        "h_test_size_power/summary.json", cells,
        [("learner/null DGP", field("cell")), ("R", field("R")),
         ("B (null refits)", lambda r: str(htest["design"]["K"])),
         ("rejection rate (MC SE)", coverage("rejection")),
         ("R partial", lambda r: "yes" if r.get("partial") else "no"),
         ("vs 0.05", lambda r: judge(r["rejection"], r["rejection_mcse"], htest["design"]["alpha"],
                                     upper_only=True))]))
    noise = _read(root, "beyond_noise/summary.json")
    verdicts = [{"cell": name, "feature": kind, "B": name.rsplit("=", 1)[1], **cell[key]}
                for name, cell in (noise or {}).get("cells", {}).items() if "/null/" in name
                for kind, key in (("two-level", "b_new"), ("numeric", "x_new")) if cell[key]["R"]]
    out.append(table(
        "The \u201cbeyond noise\u201d verdict of the command line",
        "Claim: under a feature without effect the verdict says *yes* in at most 5 % of data sets; for a two-level "
        "feature it is the contrast interval printed beside it; no verdict is offered below 39 refits (at 95 %).",
        "beyond_noise/summary.json", verdicts,
        [("learner/null/B", field("cell")), ("feature", field("feature")), ("R", field("R")), ("B", field("B")),
         ("rejection rate (MC SE)", lambda r: with_se(r["rate"], r["mc_se"])),
         ("vs 0.05", lambda r: judge(r["rate"], r["mc_se"], 0.05, upper_only=True))]))
    out.append(table(
        "Averaging over the resample's own rows",
        "Claim: averaging each refit's PD over its own rows (the default ``background=\"resample\"``) covers; "
        "fixed rows and Molnar et al.'s learner-variance intervals at equal cost under-cover. Each band is judged "
        "on what it claims: sup-t bands on the whole curve, the others pointwise.",
        "background_molnar/summary.json", _read(root, "background_molnar/summary.json"),
        [("learner", field("learner")), ("band", field("band")), ("n", field("n")), ("R", field("R")),
         ("B (refits)", field("refits")), ("pointwise (MC SE)", coverage("pointwise_learner_n")),
         ("whole curve (MC SE)", coverage("whole_learner_n")),
         ("own target vs 0.95", lambda r: judge(*_own_target(r), 0.95))]))
    out.append(table(
        "The debiased estimator: density-ratio models",
        "Claim: the debiased estimator's band covers the data's PD where it gives one; the density-ratio model "
        "matters (no resamples: K = 5 cross-fitted fits, so B does not apply).",
        "debiased_ratio_models/summary.json", _read(root, "debiased_ratio_models/summary.json"),
        [("setting", field("setting")), ("ratio model", field("model")), ("R", field("R")), ("B", lambda r: "—"),
         ("pointwise (MC SE)", coverage("pointwise")), ("whole curve (MC SE)", coverage("whole")),
         ("largest abs(bias) ÷ SD", field("max_abs_bias_sd", 2)),
         ("pointwise vs 0.95", lambda r: judge(r["pointwise"], r["pointwise_mcse"], 0.95))]))
    out.append(table(
        "Background-only bands are too narrow",
        "Claim: a band that resamples only the rows the PD averages over (scikit-explain's) ignores the "
        "model's refitting error; its half-width is a fraction of the PD's true SD.",
        "skexplain_width/summary.json", _read(root, "skexplain_width/summary.json"),
        [("learner", field("learner")), ("feature", field("feature")), ("R", field("R")),
         ("width ratio, median", field("ratio_median", 1)),
         ("pdpboot half-width ÷ SD", field("pdpboot_halfwidth_over_sd", 2)),
         ("background half-width ÷ SD", field("skexplain_halfwidth_over_sd", 2))]))
    return [s for s in out if s]


HEAD = """.. This file is generated by docs/validation_page.py from experiments/summaries/ at every build. Do not edit.

.. _validation:

Validation
==========

Every claim the package makes about coverage, in one place: the simulation studies behind the defaults
and the warnings, read from the summaries the studies committed to ``experiments/summaries/`` (the same
files the paper's numbers come from). Columns: the setting (data-generating process and learner), R
(simulated data sets), B (resamples per data set), the coverage of 95 % bands (or a test's rejection rate)
with its Monte Carlo standard error in brackets, and where it fails, judged against the nominal level
within 2 MC SE. *Pointwise* is the share of grid points whose band covers the target; *whole curve* the
share of data sets whose simultaneous band covers the whole curve. The target is the learner's expected
PD unless a table says otherwise. Scripts: ``experiments/<study>.py``.

"""


def failures(parts: Sequence[str]) -> str:
    """A list at the top: per table, the rows judged to under-cover (their first two cells)."""
    lines = ["Where it fails", "--------------", "",
             "Rows below whose coverage is more than 2 MC SE under the nominal level:", ""]
    for part in parts:
        if " vs 0." not in part:  # a table with no nominal level to judge against
            continue
        title = part.splitlines()[0]
        rows = [row for row in part.split("   * - ")[2:] if "**under-covers**" in row]
        named = [" / ".join(cell.strip().lstrip("- ").strip() for cell in row.splitlines()[:2]) for row in rows]
        lines.append(f"- `{title}`_: " + ("; ".join(f"``{n}``" for n in named) if named else "none") + ".")
    return "\n".join(lines) + "\n\n"


def render(root: Path = SUMMARIES) -> str:
    """The page as reStructuredText."""
    parts = sections(root)
    return HEAD + failures(parts) + "".join(parts)


def write_page(root: Path = SUMMARIES, path: Path = HERE / "validation.rst") -> Path:
    """Write the page (only when its text changed, so that Sphinx does not rebuild it needlessly)."""
    text = render(root)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


if __name__ == "__main__":
    print(write_page())
