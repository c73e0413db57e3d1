"""What a run's numbers depend on besides its inputs: library versions and file checksums.

Imported by :mod:`~pdpboot.workflow.run` (which records them) and :mod:`~pdpboot.workflow.repro`
(which compares them); it imports neither, so the two never import each other.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import sys
from pathlib import Path

from .._version import __version__

#: Libraries whose versions are recorded (distribution name -> shown name); missing ones are skipped.
LIBRARIES = ("numpy", "pandas", "scipy", "scikit-learn", "xarray")
#: Optional model libraries recorded when the run's model comes from them.
MODEL_LIBRARIES = ("xgboost", "lightgbm", "joblib", "threadpoolctl")


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def versions(extra: tuple[str, ...] = ()) -> dict[str, str]:
    """Versions of pdpboot, Python and the libraries the numbers depend on.

    Parameters
    ----------
    extra : tuple of str
        More distributions to record (only those installed are listed).

    Returns
    -------
    dict
        Distribution name -> version string, ``"pdpboot"`` and ``"python"`` included.
    """
    out = {"pdpboot": __version__}
    for name in (*LIBRARIES, *extra):
        found = _version(name)
        if found is not None:
            out[name] = found
    out["python"] = ".".join(map(str, sys.version_info[:3]))
    return out


def sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes (read in 1 MiB chunks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
