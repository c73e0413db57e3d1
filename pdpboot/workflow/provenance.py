"""What a run's numbers depend on besides its inputs: library versions and file checksums."""

from __future__ import annotations

import hashlib
import importlib.metadata
import sys
from pathlib import Path

from .. import __version__

#: Libraries whose versions are recorded because they can change the numbers; the optional ones
#: (numba: the compiled tree walk; the boosting libraries) are recorded as "not installed" when
#: missing, so that installing one later is reported as a difference of environment.
LIBRARIES = ("numpy", "pandas", "scipy", "scikit-learn", "xarray", "numba", "xgboost", "lightgbm", "catboost")
#: Optional model libraries recorded with a saved model (the libraries to load it with).
MODEL_LIBRARIES = ("xgboost", "lightgbm", "joblib", "threadpoolctl")
#: Distributions that provide an import name under another distribution name.
_ALIASES = {"xgboost": ("xgboost", "xgboost-cpu")}
NOT_INSTALLED = "not installed"
#: Key of the exact tree engine's walk in :func:`versions` ("compiled (numba)", or "brute force (no numba)").
TREE_WALK = "tree walk"


def _version(distribution: str) -> str | None:
    for name in _ALIASES.get(distribution, (distribution,)):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def tree_walk() -> str:
    """How the exact tree engine walks trees here: ``"compiled (numba)"``, or ``"brute force (no numba)"``.

    The exact engine and brute force agree to about 1e-14 (they sum in another order), so a run and its
    reproduction in environments that differ here can differ in the last bits.
    """
    from ..engine.tree import kernel_available

    return "compiled (numba)" if kernel_available() else "brute force (no numba)"


def versions(extra: tuple[str, ...] = ()) -> dict[str, str]:
    """Versions of pdpboot, Python, every library that can change the numbers (``"not installed"`` when
    missing) and ``extra`` distributions that are installed; :data:`TREE_WALK` says whether the exact tree
    engine walks trees in compiled code."""
    out = {"pdpboot": __version__}
    for name in LIBRARIES:
        out[name] = _version(name) or NOT_INSTALLED
    for name in extra:
        found = _version(name)
        if found is not None:
            out[name] = found
    out["python"] = ".".join(map(str, sys.version_info[:3]))
    out[TREE_WALK] = tree_walk()
    return out


def sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes (read in 1 MiB chunks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
