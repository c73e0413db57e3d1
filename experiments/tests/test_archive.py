"""`make render` from a clone: the committed archive (experiments/archive) regenerates what the paper inputs.

Every study that writes a file the paper ``\\input``s or ``\\includegraphics`` must have its compact results
committed under ``experiments/archive/<study>/`` (with the ``MANIFEST.json`` that ``--archive`` writes).
A study the paper reads from without a committed archive fails, naming the paper's files it leaves missing
(every study is archived since session 5; there are no expected failures left).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from experiments import OUTPUTS, STUDIES

ROOT = Path(__file__).resolve().parents[2]
PAPER = ROOT / "paper"
ARCHIVE = ROOT / "experiments" / "archive"
#: The whole committed archive stays small (compact summaries, never every resample).
ARCHIVE_LIMIT_BYTES = 15_000_000


def _strip_comments(tex: str) -> str:
    return re.sub(r"(?<!\\)%.*", "", tex)


def paper_targets(main: Path = PAPER / "main.tex") -> set[str]:
    """Generated files the paper reads: \\input / \\includegraphics targets under figures/, tables/, generated/.

    Hand-written inputs (e.g. ``sections/*.tex``) are followed, so their targets count too.
    """
    targets: set[str] = set()
    todo, seen = [main], set()
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        tex = _strip_comments(path.read_text())
        names = re.findall(r"\\includegraphics(?:\[[^\]]*\])?\{([^}]+)\}", tex) + re.findall(r"\\input\{([^}]+)\}", tex)
        for name in names:
            name = re.sub(r"\.(tex|pdf|png)$", "", name.strip())
            if name.split("/")[0] in ("figures", "tables", "generated"):
                targets.add(name)
            else:
                todo.append(main.parent / f"{name}.tex")
    return targets


def _produced(folder: Path, target: str) -> bool:
    return any((folder / f"{target}{ext}").is_file() for ext in (".tex", ".pdf", ".png"))


def archived_studies() -> list[str]:
    return [s for s in STUDIES if (ARCHIVE / s / "MANIFEST.json").is_file()]


def _study_of(target: str) -> str | None:
    return next((s for s, outs in OUTPUTS.items() if target in outs), None)


def test_every_file_the_paper_inputs_has_a_study():
    targets = paper_targets()
    assert any(t.startswith("figures/") for t in targets) and any(t.startswith("generated/") for t in targets)
    orphans = sorted(t for t in targets if _study_of(t) is None)
    assert not orphans, f"register these in experiments.OUTPUTS (the study whose render writes them): {orphans}"
    assert set(OUTPUTS) <= set(STUDIES) | {"run"}, sorted(set(OUTPUTS) - set(STUDIES))


def test_study_modules_are_named_by_what_they_study():
    """Every study key maps to an existing module of experiments/, and no module carries a bare number or
    a 'stats_' prefix instead of its subject (issue 25: s1_electricity ... s8_forest_ij, stats_*, peers)."""
    folder = Path(__file__).resolve().parents[2] / "experiments"
    for key, module in STUDIES.items():
        assert (folder / f"{module}.py").is_file(), (key, module)
    modules = [p.stem for p in folder.glob("*.py")]
    assert not [m for m in modules if re.fullmatch(r"s\d+_\w+|stats_\w+|peers", m)]


def test_paper_targets_follow_inputs_and_skip_comments(tmp_path):
    (tmp_path / "sections").mkdir()
    (tmp_path / "main.tex").write_text("\\input{generated/run}\n% \\input{tables/old}\n\\input{sections/extra}\n"
                                       "\\includegraphics[width=1in]{figures/a.pdf}\n")
    (tmp_path / "sections" / "extra.tex").write_text("\\input{tables/t}\n")
    assert paper_targets(tmp_path / "main.tex") == {"generated/run", "figures/a", "tables/t"}


def test_archive_is_small_and_matches_its_manifests():
    files = [p for p in ARCHIVE.rglob("*") if p.is_file()] if ARCHIVE.exists() else []
    total = sum(p.stat().st_size for p in files)
    assert total < ARCHIVE_LIMIT_BYTES, f"experiments/archive holds {total / 1e6:.1f} MB"
    for study in archived_studies():
        manifest = json.loads((ARCHIVE / study / "MANIFEST.json").read_text())
        assert manifest["study"] == study and manifest["files"], study
        for rel, meta in manifest["files"].items():
            data = (ARCHIVE / study / rel).read_bytes()
            assert len(data) == meta["bytes"] and hashlib.sha256(data).hexdigest() == meta["sha256"], (study, rel)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    """``python -m experiments <archived studies> --render-only`` from a copy of the archive into a temp folder."""
    base = tmp_path_factory.mktemp("render")
    archive = base / "archive"
    if ARCHIVE.exists():
        shutil.copytree(ARCHIVE, archive)
    else:
        archive.mkdir()
    paper = base / "paper"
    studies = archived_studies()
    if studies:
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        proc = subprocess.run([sys.executable, "-m", "experiments", *studies, "--render-only", "--results-dir",
                               str(archive), "--paper-dir", str(paper)],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-4000:]
    return paper


@pytest.mark.parametrize("study", sorted(set(OUTPUTS) - {"run"}))
def test_render_from_the_archive(study, rendered):
    needed = sorted(t for t in OUTPUTS[study] if t in paper_targets())
    if study not in archived_studies():
        if not needed:
            pytest.skip(f"the paper inputs nothing from {study!r}")
        pytest.fail(f"experiments/archive/{study}/MANIFEST.json not committed: `make render` cannot regenerate "
                    f"{needed} from a clone; after its full run: python -m experiments {study} --render-only "
                    f"--archive")
    missing = [t for t in OUTPUTS[study] if not _produced(rendered, t)]
    assert not missing, f"{study}: rendering from experiments/archive did not produce {missing}"
    for target in (t for t in OUTPUTS[study] if t.startswith("generated/")):
        assert "\\newcommand" in (rendered / f"{target}.tex").read_text(), f"{study}: {target} defines no macro"


@pytest.mark.parametrize("study", sorted(set(OUTPUTS) - {"run"}))
def test_committed_numbers_are_those_of_the_archive(study, rendered):
    """paper/tables and paper/generated of an archived study are what its archive renders to (no stale numbers)."""
    if study not in archived_studies():
        pytest.skip(f"{study!r} has no committed archive (see test_render_from_the_archive)")
    stale = [t for t in OUTPUTS[study] if t.startswith(("tables/", "generated/"))
             and (PAPER / f"{t}.tex").read_text() != (rendered / f"{t}.tex").read_text()]
    assert not stale, f"{stale} differ from what experiments/archive/{study} renders to: run `make render`"


def test_archive_study_copies_compact_files_with_a_manifest(tmp_path):
    from experiments import _common as C

    results = tmp_path / "results"
    (results / "demo" / "summary").mkdir(parents=True)
    (results / "demo" / "summary" / "a.nc").write_bytes(b"abc")
    (results / "demo" / "big_cache.nc").write_bytes(b"x" * 100)
    ctx = C.Context(results_dir=results, paper_dir=tmp_path / "paper")
    target = C.archive_study(ctx, "demo", ["summary/*.nc"], dest=tmp_path / "archive")
    manifest = json.loads((target / "MANIFEST.json").read_text())
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) == [
        "MANIFEST.json", "summary/a.nc"]
    assert manifest["files"]["summary/a.nc"] == {"bytes": 3, "sha256": hashlib.sha256(b"abc").hexdigest()}
    with pytest.raises(FileNotFoundError, match="nothing matches"):
        C.archive_study(ctx, "demo", ["summary/*.json"], dest=tmp_path / "archive")


def test_quick_minutes_needs_a_complete_quick_run(tmp_path):
    """``\\RunQuickMinutes``: the sum over every study of a quick run's record, '--' (NaN) for a partial one."""
    from experiments.run import quick_minutes

    full = {study: {"wall_seconds": 6.0} for study in STUDIES}
    assert quick_minutes(full) == pytest.approx(len(STUDIES) * 6.0 / 60)
    partial = {"coverage": {"wall_seconds": 133.5}}
    assert quick_minutes(partial) != quick_minutes(partial)  # NaN
    local, committed = tmp_path / "local.json", tmp_path / "committed.json"
    local.write_text(json.dumps(partial))
    committed.write_text(json.dumps(full))
    assert quick_minutes(paths=(local, committed)) == pytest.approx(len(STUDIES) * 0.1)
    assert quick_minutes(paths=(tmp_path / "none.json",)) != quick_minutes(paths=(tmp_path / "none.json",))
