"""Shared helpers of the workflow tests: small generated tables and a quiet ``pdpboot`` call."""

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

import pdpboot
import pdpboot.workflow.strategy  # noqa: F401 - registers --effect's choices (RunConfig checks need them)
from pdpboot.cli import main

#: The workbook is an optional extra: runs skip it when openpyxl is missing (tests reading it skip).
HAS_OPENPYXL = importlib.util.find_spec("openpyxl") is not None
FAST = ["--n-resamples", "5", "--n-estimators", "5", "--grid-resolution", "5", "--ice-samples", "10",
        "--n-jobs", "1", "--quiet", *([] if HAS_OPENPYXL else ["--no-workbook"])]
REPO = Path(pdpboot.__file__).resolve().parent.parent


def regression_table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(0, 10, n)
    x1[rng.choice(n, 8, replace=False)] = np.nan
    count = rng.integers(0, 5, n)
    colour = rng.choice(["red", "green", "blue"], n).astype(object)
    colour[rng.choice(n, 5, replace=False)] = None
    y = np.nan_to_num(x1, nan=5.0) + 2 * count + 3 * (colour == "red") + rng.normal(0, 1, n)
    return pd.DataFrame({"x1": x1, "count": count, "colour": colour, "y": y})


def classification_table(n=150, seed=1):
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(0, 10, n)
    x1[rng.choice(n, 6, replace=False)] = np.nan
    colour = rng.choice(["red", "green", "blue"], n)
    z = np.nan_to_num(x1, nan=5.0) - 5 + 2 * (colour == "red")
    label = np.where(rng.random(n) < 1 / (1 + np.exp(-z)), "yes", "no")
    return pd.DataFrame({"x1": x1, "colour": colour, "size": rng.normal(size=n), "label": label})


def run_cli(args, capsys=None):
    code = main([str(a) for a in args])
    out = capsys.readouterr() if capsys is not None else None
    return code, out


def only_run_folder(out: Path) -> Path:
    entries = list(out.iterdir())
    assert len(entries) == 1, entries
    assert entries[0].name.startswith("pdpboot_")
    return entries[0]


def same(cells, values):
    """Workbook numbers equal the result's up to Excel's precision (openpyxl writes 16 digits)."""
    np.testing.assert_allclose(np.asarray(cells, dtype=float), values, rtol=1e-14, atol=0)


def sheet_frame(ws) -> pd.DataFrame:
    rows = list(ws.iter_rows(values_only=True))
    return pd.DataFrame(rows[1:], columns=rows[0])



def bad(args, capsys, out: Path):
    code, captured = run_cli([*args, "--out", out, "--quiet"], capsys)
    assert code == 2
    err = captured.err.strip()
    assert err.startswith("pdpboot: error: ") and "\n" not in err and "Traceback" not in err
    assert not out.exists()  # nothing left on disk
    return err



