"""Folders of runs killed before they finished (``SIGKILL``, power loss).

A run writes into ``<out>/.pdpboot_partial_<random>/``, records its owner (:data:`OWNER`) and the
result files it finished (:data:`WRITTEN`).  :func:`recover_stale`, called by every run, renames a
dead run's folder with finished results to ``pdpboot_<stamp>_incomplete`` (with ``INCOMPLETE.txt``),
removes one without, and leaves a live run's alone; a folder without an owner record counts as dead
once nothing in it changed for :data:`UNOWNED_AGE_S` seconds.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import socket
import time
from pathlib import Path

#: prefix of a run's folder while it is being written
PARTIAL_PREFIX = ".pdpboot_partial_"
#: the owner record inside a partial folder
OWNER = ".pdpboot_owner.json"
#: the list of finished result files inside a partial folder
WRITTEN = ".pdpboot_written"
#: a partial folder without an owner record is stale after this long without a change
UNOWNED_AGE_S = 3600.0


def _start_ticks(pid: int) -> int | None:
    """Start time of process ``pid`` in clock ticks since boot (Linux ``/proc``), None elsewhere."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (IndexError, ValueError):
        return None


def mark_owner(folder: Path) -> None:
    """Record this process as the owner of the partial run folder ``folder``."""
    record = {"pid": os.getpid(), "host": socket.gethostname(), "start_ticks": _start_ticks(os.getpid()),
              "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    _write_atomic(folder / OWNER, json.dumps(record))


def mark_written(folder: Path, written: list[str]) -> None:
    """Record the result files of ``folder`` that are complete (after each one is written)."""
    _write_atomic(folder / WRITTEN, "".join(f"{name}\n" for name in written))


def unmark(folder: Path) -> None:
    """Remove the records from a run folder that is being put in place (finished or incomplete)."""
    for name in (OWNER, WRITTEN):
        (folder / name).unlink(missing_ok=True)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _alive(owner: dict) -> bool:
    """Whether the process that owns a partial folder may still be running (True when unsure)."""
    if owner.get("host") != socket.gethostname():
        return True  # another machine (a shared disk): cannot tell
    pid = owner.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    except OSError:
        return True
    recorded, now = owner.get("start_ticks"), _start_ticks(pid)
    return recorded is None or now is None or recorded == now  # another process reusing the id: dead


def _newest_change(folder: Path) -> float:
    newest = folder.stat().st_mtime
    for path in folder.rglob("*"):
        try:
            newest = max(newest, path.stat().st_mtime)
        except OSError:
            pass
    return newest


def _owner(folder: Path) -> dict | None:
    try:
        owner = json.loads((folder / OWNER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) else None


def _finished(folder: Path) -> list[str]:
    try:
        names = (folder / WRITTEN).read_text(encoding="utf-8").split()
    except OSError:
        return []
    return [name for name in names if (folder / name).exists()]


def claim(out: Path, name: str) -> Path:
    """Create the empty folder ``out/name`` (``name_2``, ... when taken): an existing run is never touched."""
    k = 1
    while True:
        final = out / (name if k == 1 else f"{name}_{k}")
        try:
            final.mkdir()
            return final
        except FileExistsError:
            k += 1


def recover_stale(out: Path, now: datetime.datetime | None = None) -> list[str]:
    """Deal with the partial folders that killed runs left in ``out``; one line per folder on what was done.

    A dead run's folder with finished results becomes ``pdpboot_<its start>_incomplete`` (with an
    ``INCOMPLETE.txt``), one without is removed; a live run's folder is left alone.
    """
    if not out.is_dir():
        return []
    now = now or datetime.datetime.now(datetime.timezone.utc)
    notes = []
    for folder in sorted(out.glob(f"{PARTIAL_PREFIX}*")):
        if not folder.is_dir():
            continue
        owner = _owner(folder)
        try:
            if owner is None:
                if time.time() - _newest_change(folder) < UNOWNED_AGE_S:
                    notes.append(f"left {folder.name} alone: a run may still be writing into it (no owner record, "
                                 "changed in the last hour).")
                    continue
            elif _alive(owner):
                notes.append(f"left {folder.name} alone: the run writing into it (process {owner.get('pid')} on "
                             f"{owner.get('host')}) is still running.")
                continue
            notes.append(_recover(out, folder, owner, now))
        except OSError as exc:
            notes.append(f"could not tidy {folder.name} ({exc.strerror or exc}); remove it by hand.")
    return notes


def _recover(out: Path, folder: Path, owner: dict | None, now: datetime.datetime) -> str:
    started = (owner or {}).get("started")
    who = (f"the run started {started} (process {owner.get('pid')})" if owner else "a run of an older version")
    finished = _finished(folder)
    if not finished:
        shutil.rmtree(folder)
        return f"removed {folder.name}: {who} was killed before it finished any result."
    try:
        when = datetime.datetime.fromisoformat(started).astimezone() if started else None
    except (TypeError, ValueError):
        when = None
    when = when or datetime.datetime.fromtimestamp(folder.stat().st_mtime).astimezone()
    (folder / "INCOMPLETE.txt").write_text(
        f"This run was killed before it finished ({who}); found by the run of "
        f"{now.isoformat(timespec='seconds')}.\nComplete and loadable: {', '.join(finished)}.\n"
        "Missing: the results after them, workbook.xlsx and summary.md (and maybe some plots).\n", encoding="utf-8")
    unmark(folder)
    final = claim(out, f"pdpboot_{when.strftime('%Y%m%d-%H%M%S')}_incomplete")
    os.replace(folder, final)
    return f"{who} was killed before it finished: its finished {', '.join(finished)} kept in {final.name}/."
