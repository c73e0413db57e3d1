"""Save and load results (netCDF; Zarr with the optional ``zarr`` extra)."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import xarray as xr

from .schema import feature_nodes

_LIST_ATTRS = ("features", "categorical", "deciles", "critical_value")
# netCDF names start with a letter, digit, underscore or a multi-byte character, hold no '/' or
# control character and do not end in a space; other names are stored encoded and decoded on load
_NETCDF_NAME = re.compile(r"^[A-Za-z0-9_\u0080-\U0010FFFF][^/\x00-\x1f\x7f]*(?<! )$")
_ENCODED = "pdpboot_encoded_names"


def _encode_names(result: xr.DataTree) -> xr.DataTree:
    """Rename groups, dims and variables netCDF cannot store; record the originals in attrs."""
    nodes, groups = {}, {}
    for k, (name, child) in enumerate(result.children.items()):
        ds = child.to_dataset()
        names = {str(n) for n in [*ds.dims, *ds.variables]}
        mapping = {n: f"pdpboot_name_{j}" for j, n in enumerate(sorted(names)) if not _NETCDF_NAME.match(n)}
        if mapping:
            ds = ds.rename(mapping)
            ds.attrs[_ENCODED] = json.dumps({v: k_ for k_, v in mapping.items()})
        safe = name if _NETCDF_NAME.match(name) else f"pdpboot_group_{k}"
        if safe != name:
            groups[safe] = name
        nodes[f"/{safe}"] = ds
    nodes["/"] = result.to_dataset()
    if groups:
        nodes["/"].attrs[_ENCODED] = json.dumps(groups)
    return xr.DataTree.from_dict(nodes)


def _decode_names(tree: xr.DataTree) -> xr.DataTree:
    root = tree.to_dataset()
    groups = json.loads(root.attrs.pop(_ENCODED, "{}"))
    nodes = {"/": root}
    for name, child in tree.children.items():
        ds = child.to_dataset()
        mapping = json.loads(ds.attrs.pop(_ENCODED, "{}"))
        nodes[f"/{groups.get(name, name)}"] = ds.rename(mapping) if mapping else ds
    return xr.DataTree.from_dict(nodes)


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".nc", ".nc4", ".netcdf"):
        return "netcdf"
    if suffix == ".zarr":
        return "zarr"
    raise ValueError(f"Cannot tell the format of {str(path)!r}: use a .nc (netCDF) or .zarr path.")


def save(result: xr.DataTree, path: str | os.PathLike) -> Path:
    """Write a result to netCDF (``.nc``) or Zarr (``.zarr``).

    The file is written under a temporary name and renamed, so an interrupted
    save never leaves a half-written file at ``path``.

    Returns
    -------
    pathlib.Path
        The written path.
    """
    if not isinstance(result, xr.DataTree):
        raise TypeError(f"save expects an xarray.DataTree result, got {type(result).__name__}.")
    path = Path(path)
    kind = _format(path)
    if not path.parent.exists():
        raise FileNotFoundError(f"Folder {str(path.parent)!r} does not exist; create it first.")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.remove(tmp)
    try:
        if kind == "netcdf":
            _encode_names(result).to_netcdf(tmp, engine="netcdf4")
            os.replace(tmp, path)
        else:
            result.to_zarr(tmp, mode="w", zarr_format=2, consolidated=True)
            _replace_directory(Path(tmp), path)
    finally:
        _remove(Path(tmp))
    return path


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def _replace_directory(new: Path, path: Path) -> None:
    """Swap a finished store into place; the old one is removed only after the swap."""
    if not path.exists():
        os.replace(new, path)
        return
    old = path.with_name(f".{path.name}.old")
    _remove(old)
    os.replace(path, old)
    os.replace(new, path)
    _remove(old)


def _as_list(value):
    if isinstance(value, (list, tuple)):
        return list(value)
    if hasattr(value, "tolist"):
        value = value.tolist()
        return value if isinstance(value, list) else [value]
    return [value]


def load(path: str | os.PathLike) -> xr.DataTree:
    """Read a result written by :func:`save` into memory.

    Returns
    -------
    xarray.DataTree
        The result, identical to the one saved.
    """
    path = Path(path)
    kind = _format(path)
    if not path.exists():
        raise FileNotFoundError(f"No result at {str(path)!r}.")
    if kind == "netcdf":
        with xr.open_datatree(path, engine="netcdf4") as tree:
            tree = _decode_names(tree.load())
    else:
        with xr.open_datatree(path, engine="zarr") as tree:
            tree = tree.load()
    for node in feature_nodes(tree):
        for name in _LIST_ATTRS:
            if name in node.attrs:
                node.attrs[name] = _as_list(node.attrs[name])
        for var in node.ds.data_vars:
            attrs = node[var].attrs
            for name in _LIST_ATTRS:
                if name in attrs:
                    attrs[name] = _as_list(attrs[name])
    return tree
