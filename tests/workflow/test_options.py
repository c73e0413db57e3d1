"""Options: config file and command-line precedence, help, version, the demo, run folders."""


import subprocess
import sys

import pytest

import pdpboot
from pdpboot.cli import main
from pdpboot.schema import get_node

from .helpers import (
    FAST,
    REPO,
    only_run_folder,
    regression_table,
    run_cli,
)

# ----------------------------------------------------------------------------- options, config, demo


def test_config_file_and_command_line_precedence(tmp_path, capsys, monkeypatch):
    regression_table().to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "c.toml").write_text(
        'data = "t.csv"\ntarget = "y"\nn-resamples = 9\ngrid_resolution = 4\nfeatures = ["x1", "count"]\n'
        'n_estimators = 5\nice_samples = 0\nworkbook = false\n')
    monkeypatch.chdir(tmp_path)
    code, _ = run_cli(["run", "--config", "c.toml", "--n-resamples", "3", "--out", "o", "--quiet"], capsys)
    assert code == 0
    res = pdpboot.load(only_run_folder(tmp_path / "o") / "results.nc")
    assert res.attrs["n_resamples"] == 3  # the command line wins
    assert get_node(res, "x1").to_dataset().sizes["x1"] == 4  # from the file
    assert [n.attrs["features"] for n in res.children.values()] == [["x1"], ["count"]]


def test_demo_runs_and_says_where(tmp_path, capsys):
    code, out = run_cli(["demo", "--out", tmp_path, "--n-resamples", "3", "--n-estimators", "5",
                      "--grid-resolution", "5", "--ice-samples", "5", "--n-jobs", "1"], capsys)
    assert code == 0
    folder = only_run_folder(tmp_path)
    assert str(folder) in out.out and "--n-resamples" in out.out
    res = pdpboot.load(folder / "results.nc")
    assert [tuple(n.attrs["features"]) for n in res.children.values()] == [
        ("Temperature",), ("Hour",), ("Day",), ("Temperature", "Hour")]
    assert "Fitting" in out.err and "Plot" in out.err  # progress on stderr


def test_help_and_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for flag in ("--target", "--pairs", "--n-resamples", "--config", "--model", "examples:"):
        assert flag in text
    with pytest.raises(SystemExit):
        main(["--version"])
    assert pdpboot.__version__ in capsys.readouterr().out


def test_two_runs_never_share_a_folder(tmp_path, capsys):
    regression_table().to_csv(tmp_path / "t.csv", index=False)
    args = ["run", tmp_path / "t.csv", "--target", "y", "--features", "x1", "--no-workbook", "--out",
            tmp_path / "o", *FAST]
    assert run_cli(args, capsys)[0] == 0
    assert run_cli(args, capsys)[0] == 0
    assert len(list((tmp_path / "o").iterdir())) == 2




def test_help_and_version_import_nothing_heavy():
    """pdpboot --help / --version stay fast: the command line imports no NumPy, pandas or scikit-learn."""
    code = ("import sys; from pdpboot.cli import main\n"
            "try:\n    main(['run', '--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('numpy', 'pandas', 'sklearn', 'xarray', 'matplotlib') if m in sys.modules]\n"
            "assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, cwd=REPO)


def test_every_client_module_imports_without_the_optional_extras():
    """xgboost, lightgbm, catboost, openpyxl and pyarrow are extras: no module of the command line needs them
    to import (each is imported where a run uses it, with a message naming the extra)."""
    code = ("import importlib, pkgutil, sys\n"
            "for extra in ('xgboost', 'lightgbm', 'catboost', 'openpyxl', 'pyarrow'):\n    sys.modules[extra] = None\n"
            "import pdpboot.workflow, pdpboot.report\n"
            "names = ['pdpboot.cli'] + [f'{p.__name__}.{m.name}' for p in (pdpboot.workflow, pdpboot.report)\n"
            "                           for m in pkgutil.iter_modules(p.__path__) if m.name != 'xgb_labels']\n"
            "for name in names:\n    importlib.import_module(name)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr[-1500:]


def test_equivalent_command_gives_the_same_configuration():
    import shlex

    from pdpboot.cli import _config, _parser
    from pdpboot.workflow.options import RunConfig, defaults, equivalent_command

    config = RunConfig.from_dict({
        "data": "my table.csv", "target": "y", "pairs": [["a", "b"], ["c", "d"]], "exclude": ["id", "x y"],
        "workbook": False, "n_resamples": 30, "labels": {"a": "Alpha"}, "level_order": {"g": ["lo", "mid", "hi"]},
        "confidence_level": 0.9, "simultaneous": True, "out": "/somewhere"})
    command = equivalent_command(config)
    assert "/somewhere" not in command
    words = shlex.split(command)
    assert words[:3] == ["pdpboot", "run", "my table.csv"]
    again = _config(_parser().parse_args(words[1:]), defaults())
    assert again.replace(out=config.out) == config.replace(data=config.data)
