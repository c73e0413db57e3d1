"""A run killed outright (SIGKILL) leaves its hidden partial folder; the next run into that folder tidies it:
finished results kept in ``pdpboot_<stamp>_incomplete``, nothing else left behind, a live run's folder untouched."""

from __future__ import annotations

import datetime
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import pdpboot
from pdpboot.workflow.run import OWNER, UNOWNED_AGE_S, WRITTEN, recover_stale

from .helpers import FAST, REPO, regression_table, run_cli


def _partial(out, name, *, pid=None, started="2026-01-02T03:04:05+00:00", written=(), files=()):
    folder = out / f".pdpboot_partial_{name}"
    folder.mkdir(parents=True)
    if pid is not None:
        import socket

        (folder / OWNER).write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "start_ticks": None,
                                                "started": started}))
    for f in files:
        (folder / f).write_text("x")
    if written:
        (folder / WRITTEN).write_text("".join(f"{w}\n" for w in written))
    return folder


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_dead_runs_are_kept_or_removed_and_live_ones_left_alone(tmp_path):
    out = tmp_path / "o"
    dead = _dead_pid()
    _partial(out, "kept", pid=dead, written=["results.nc"], files=["results.nc", "model.joblib"])
    _partial(out, "empty", pid=dead, files=["model.joblib"])
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _partial(out, "live", pid=live.pid, written=["results.nc"], files=["results.nc"])
        _partial(out, "unowned", files=["results.nc"])  # an older version's folder, changed just now
        notes = recover_stale(out)
    finally:
        live.kill()
        live.wait()
    stamp = datetime.datetime.fromisoformat("2026-01-02T03:04:05+00:00").astimezone().strftime("%Y%m%d-%H%M%S")
    names = sorted(p.name for p in out.iterdir())
    assert names == [".pdpboot_partial_live", ".pdpboot_partial_unowned", f"pdpboot_{stamp}_incomplete"]
    kept = out / names[-1]
    assert kept.name.endswith("_incomplete") and (kept / "results.nc").is_file() and (kept / "model.joblib").is_file()
    assert "killed before it finished" in (kept / "INCOMPLETE.txt").read_text()
    assert not (kept / OWNER).exists() and not (kept / WRITTEN).exists()
    assert len(notes) == 4
    assert any("removed .pdpboot_partial_empty" in n for n in notes)
    assert any(".pdpboot_partial_live alone" in n and "still running" in n for n in notes)
    assert any(".pdpboot_partial_unowned alone" in n for n in notes)


def test_an_unowned_folder_untouched_for_an_hour_is_stale(tmp_path):
    out = tmp_path / "o"
    folder = _partial(out, "old", files=["model.joblib"])
    old = time.time() - UNOWNED_AGE_S - 60
    for path in (folder / "model.joblib", folder):
        os.utime(path, (old, old))
    assert recover_stale(out) == ["removed .pdpboot_partial_old: a run of an older version was killed before it "
                                  "finished any result."]
    assert list(out.iterdir()) == []


def test_a_reused_process_id_is_not_the_owner(tmp_path):
    """The recorded start time differs from that of the process now holding the id: the owner is dead."""
    from pdpboot.workflow.run import _start_ticks

    if _start_ticks(os.getpid()) is None:
        pytest.skip("no /proc: process start times unknown")
    out = tmp_path / "o"
    folder = _partial(out, "reused", pid=os.getpid(), files=["model.joblib"])
    record = json.loads((folder / OWNER).read_text())
    (folder / OWNER).write_text(json.dumps({**record, "start_ticks": _start_ticks(os.getpid()) - 1}))
    assert recover_stale(out)[0].startswith("removed .pdpboot_partial_reused")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_sigkilled_run_leaves_nothing_behind_and_loses_nothing(tmp_path):
    """A real run killed (SIGKILL) while ALE runs, after results.nc was written: the next run into the same
    folder keeps results.nc (it loads, checksums verified) in pdpboot_<stamp>_incomplete, says so in its
    log, and leaves no hidden partial folder (one was left behind before)."""
    data = tmp_path / "table.csv"
    regression_table().to_csv(data, index=False)
    out = tmp_path / "o"
    args = ["run", str(data), "--target", "y", "--effect", "both", "--out", str(out), *FAST]
    code = ("import time, sys\nimport pdpboot.workflow.effect_ale as m\n"
            "m.bootstrap_ale = lambda *a, **k: time.sleep(600)\n"  # a long ALE: time to kill the run
            f"from pdpboot.cli import main\nsys.exit(main({[str(a) for a in args]!r}))\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, cwd=tmp_path)
    try:
        deadline = time.time() + 300
        while not list(out.glob(".pdpboot_partial_*/plots/pd_x1.png")):  # drawn after results.nc was saved
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.time() < deadline, "results.nc was never written"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert len(list(out.glob(".pdpboot_partial_*"))) == 1  # what a killed run leaves
    code, _ = run_cli(["run", data, "--target", "y", "--out", out, *FAST])
    assert code == 0
    assert not list(out.glob(".pdpboot_partial_*"))
    (kept,) = out.glob("pdpboot_*_incomplete")
    assert "pd_band" in pdpboot.load(kept / "results.nc")["x1"].ds
    assert "results.nc" in (kept / "INCOMPLETE.txt").read_text()
    (new,) = [p for p in out.iterdir() if p != kept]
    assert "killed before it finished" in (new / "run.log").read_text()
    assert not (new / OWNER).exists() and not (new / WRITTEN).exists()
