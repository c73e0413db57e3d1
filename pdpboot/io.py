"""Results: per-node arrays -> a labelled DataTree, the one band writer, save and load.

``build_tree`` assembles a result following the schema and ``band_variables`` writes every band.
Results are saved to netCDF (Zarr with the optional ``zarr`` extra).
``save`` records a schema version, a SHA-256 checksum of every variable and node, and a manifest of
the nodes; ``load`` verifies them and refuses a changed, truncated or spliced file.  Values are
stored in the dtype they are read back with (other object arrays as JSON strings); names, NUL
characters and list-valued attrs that netCDF cannot keep are encoded and restored.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import numbers
import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import xarray as xr

from ._evaluate import NodeArrays
from ._plan import PDSpec
from ._validate import check_path
from .header import ResultHeader
from .schema import CI_BOUNDS, node_name

#: variable attr recording the range of values a statistic can take, ``[lower, upper]`` (NaN: unbounded);
#: it overrides the header's ``supports`` entry, and band variables record the range they were clipped into
SUPPORT = "support"


def support_attrs(bounds: tuple[float | None, float | None] | None) -> dict:
    """The variable attrs recording ``bounds`` (none for an unbounded statistic)."""
    if bounds is None or bounds == (None, None):
        return {}
    return {SUPPORT: [np.nan if b is None else float(b) for b in bounds]}


def read_support(attrs: Mapping) -> tuple[float | None, float | None]:
    """The ``(lower, upper)`` bounds recorded by :func:`support_attrs` (``(None, None)``: unbounded)."""
    if SUPPORT not in attrs:
        return (None, None)
    lo, hi = (float(b) for b in np.asarray(attrs[SUPPORT], dtype=float))
    return (None if np.isnan(lo) else lo, None if np.isnan(hi) else hi)


def build_tree(
    spec: PDSpec,
    per_node: NodeArrays,
    *,
    outputs: list,
    ice_rows: np.ndarray | None,
    header: ResultHeader,
    node_attrs: Mapping[str, dict] | None = None,
    extra_coords: Mapping | None = None,
) -> xr.DataTree:
    """Assemble per-node variables into a result DataTree following the schema (``node_attrs``: per node)."""
    children = {}
    for fs in spec.feature_sets:
        dims = spec.dims(fs)
        name = node_name(dims)
        coords = {spec.names[p]: spec.grids[p].values for p in fs}
        coords["output"] = np.asarray(outputs)
        if ice_rows is not None:
            coords["instance"] = spec.row_labels(ice_rows)
        coords.update(extra_coords or {})
        variables = {var: xr.Variable(vdims, arr) for var, (vdims, arr) in per_node[name].items()}
        ds = xr.Dataset(variables, coords={k: v for k, v in coords.items()
                                           if any(k in vd for vd, _ in per_node[name].values())})
        ds.attrs = {
            "features": list(dims),
            "categorical": [int(spec.grids[p].categorical) for p in fs],
            "deciles": [float(d) for p in fs for d in spec.grids[p].deciles],
            **(node_attrs or {}).get(name, {}),
        }
        children[name] = xr.DataTree(ds)
    tree = xr.DataTree(children=children)
    tree.attrs = header.to_attrs()
    return tree


def band_variables(name: str, estimate: xr.DataArray, lower, upper, *, se=None, bias=None,
                   attrs: Mapping, pointwise: tuple | None = None) -> dict[str, xr.DataArray]:
    """The band variables of statistic ``name``: ``name_band`` (``ci_bound`` first), ``_se``, ``_bias``.

    The one place a band becomes variables, for :func:`pdpboot.confidence_bands` and every
    uncertainty method.  ``lower``, ``upper``, ``se`` and ``bias`` are arrays shaped like
    ``estimate``; ``pointwise`` (lower, upper) adds ``name_band_pointwise`` (for a simultaneous band).
    """

    def like(arr) -> xr.DataArray:
        return xr.DataArray(np.asarray(arr).reshape(estimate.shape), dims=estimate.dims, coords=estimate.coords)

    def band(lo, hi, simultaneous: bool) -> xr.DataArray:
        out = xr.concat([like(lo), like(hi)], dim=xr.Variable("ci_bound", CI_BOUNDS))
        out = out.transpose("ci_bound", *estimate.dims).assign_coords(ci_bound=CI_BOUNDS)
        out.attrs = dict(attrs, simultaneous=int(simultaneous))
        return out

    out = {f"{name}_band": band(lower, upper, bool(attrs.get("simultaneous", 0)))}
    if se is not None:
        out[f"{name}_se"] = like(se)
    if bias is not None:
        out[f"{name}_bias"] = like(bias)
    if pointwise is not None:
        out[f"{name}_band_pointwise"] = band(*pointwise, False)
    return out


# --- save and load -------------------------------------------------------------------------------

#: Version of the on-disk layout written by :func:`save` (2: the root records the node manifest).
SCHEMA_VERSION = 2

#: the list attrs of results saved before ``pdpboot_list_attrs`` recorded them (read-only compatibility)
_LEGACY_LIST_ATTRS = ("features", "categorical", "deciles", "critical_value", "bandwidth", "bandwidth_rot")
_LISTS = "pdpboot_list_attrs"
# netCDF names start with a letter, digit, underscore or a multi-byte character, hold no '/' or
# control character and do not end in a space; other names are stored encoded and decoded on load
_NETCDF_NAME = re.compile(r"^[A-Za-z0-9_\u0080-\U0010FFFF][^/\x00-\x1f\x7f]*(?<! )$")
_MAX_NAME_BYTES = 255  # netCDF's NC_MAX_NAME is 256; most file systems (Zarr) allow 255
_ENCODED = "pdpboot_encoded_names"
_ENCODED_ATTRS = "pdpboot_encoded_attrs"
_JSON_STRINGS = "pdpboot_json_strings"
_CHECKSUMS = "pdpboot_checksums"
_VERSION = "pdpboot_schema_version"
_MANIFEST = "pdpboot_manifest"
_ENCODED_GROUPS = "pdpboot_encoded_groups"
_ATTRS_KEY = "__attrs__"
_OWN = (_ENCODED, _ENCODED_ATTRS, _JSON_STRINGS, _CHECKSUMS, _VERSION, _ENCODED_GROUPS, _LISTS)


def _storable_name(name: str) -> bool:
    return bool(_NETCDF_NAME.match(name)) and len(name.encode("utf-8", "surrogatepass")) <= _MAX_NAME_BYTES


# --- checksums -----------------------------------------------------------------------------------

def _canonical(value):
    """A JSON-able form of an attr value that survives a netCDF/Zarr round trip unchanged."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (list, tuple)):
        items = [_canonical(v) for v in value]
        return items[0] if len(items) == 1 else items  # netCDF returns a 1-element list as a scalar
    if isinstance(value, float) and not np.isfinite(value):
        return repr(value)
    if isinstance(value, (bool, numbers.Integral)):
        return int(value)
    return value


def _attrs_digest(attrs: dict) -> str:
    own = {str(k): _canonical(v) for k, v in attrs.items() if k not in _OWN}
    return hashlib.sha256(json.dumps(own, sort_keys=True, default=repr).encode()).hexdigest()


def _values_bytes(values: np.ndarray) -> bytes:
    kind = values.dtype.kind
    if kind == "b":
        return values.astype(bool).tobytes()
    if kind in "iu":
        return values.astype("<i8" if kind == "i" else "<u8").tobytes()
    if kind == "f":
        return values.astype("<f8").tobytes()
    if kind == "c":
        return values.astype("<c16").tobytes()
    if kind in "mM":
        return values.astype(f"{values.dtype.str[0]}{kind}8[ns]").view("<i8").tobytes()
    return json.dumps([str(v) if isinstance(v, str) else repr(v) for v in values.ravel().tolist()]).encode()


def _variable_digest(var: xr.Variable) -> str:
    digest = hashlib.sha256()
    values = np.asarray(var.values)
    digest.update(json.dumps([[str(d) for d in var.dims], list(values.shape)]).encode())
    digest.update(_values_bytes(values))
    digest.update(_attrs_digest(dict(var.attrs)).encode())
    return digest.hexdigest()


def _checksums(ds: xr.Dataset) -> dict:
    sums = {str(name): _variable_digest(var) for name, var in ds.variables.items()}
    sums[_ATTRS_KEY] = _attrs_digest(dict(ds.attrs))
    return sums


# --- values in the dtype they are written and read back with -----------------------------------

_NATIVE = (  # (test every element passes, dtype netCDF and Zarr write and read back)
    (lambda v: isinstance(v, (bool, np.bool_)), "bool"),
    (lambda v: isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)), "int64"),
    (lambda v: isinstance(v, (float, np.floating)), "float64"),
    (lambda v: isinstance(v, (datetime.datetime, np.datetime64)) and getattr(v, "tzinfo", None) is None,
     "datetime64[ns]"),
)


def _native_values(values: np.ndarray) -> np.ndarray | None:
    """An object array as the native array netCDF/Zarr round-trip unchanged, or None (store as JSON)."""
    flat = values.ravel().tolist()
    if not flat or all(isinstance(v, str) for v in flat):
        return values  # strings (and empty arrays) are stored as they are
    for test, dtype in _NATIVE:
        if all(test(v) for v in flat):
            try:  # exact for these types; ints beyond int64 and out-of-range dates raise
                return values.astype(dtype)
            except (OverflowError, ValueError, TypeError):
                return None
    return None


def _json_cell(value, name: str) -> str:
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (str, bool, int, float)):
        return json.dumps(value)
    raise ValueError(
        f"Variable {name!r:.100} holds a {type(value).__name__} ({value!r:.60}), which netCDF and Zarr cannot "
        "store losslessly; convert it to numbers or text before saving."
    )


def _storable(ds: xr.Dataset) -> tuple[xr.Dataset, list[str]]:
    """``ds`` with object arrays in the dtype they are read back with, and the variables to store as JSON."""
    ds = ds.copy()
    as_json = []
    for name in list(ds.variables):
        var = ds.variables[name]
        values = np.asarray(var.values)
        if values.dtype.kind != "O":
            continue
        native = _native_values(values)
        if native is None:
            as_json.append(str(name))
        elif native is not values:
            replaced = xr.Variable(var.dims, native, attrs=var.attrs)
            if name in ds.indexes:
                ds = ds.assign_coords({name: replaced})
            else:
                ds[name] = replaced
    return ds, as_json


# --- encoding what the formats cannot store ------------------------------------------------------

def _has_nul(value) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, (list, tuple)):
        return any(_has_nul(v) for v in value)
    return False


def _encode_dataset(ds: xr.Dataset, as_json: list[str]) -> xr.Dataset:
    """Encode one node's unstorable names, NUL-holding attrs and the variables ``as_json``."""
    ds = ds.copy()
    for var in list(ds.variables):
        values = ds.variables[var].values
        nul = values.dtype.kind in "OUT" and any(isinstance(v, str) and "\x00" in v for v in values.ravel())
        if str(var) in as_json or nul:
            json_strings = [*json.loads(ds.attrs.get(_JSON_STRINGS, "[]")), str(var)]
            encoded = np.asarray([_json_cell(v, str(var)) for v in values.ravel().tolist()], dtype=object)
            ds[var] = ds[var].copy(data=encoded.reshape(values.shape))
            ds.attrs[_JSON_STRINGS] = json.dumps(json_strings)
    targets = [ds.attrs, *(ds.variables[v].attrs for v in ds.variables)]
    for attrs in targets:
        lists = sorted(str(k) for k, v in attrs.items() if isinstance(v, (list, tuple)))
        if lists or attrs is ds.attrs:  # (the node's own entry, even empty, marks the recording)
            attrs[_LISTS] = json.dumps(lists)
        bad = {k: attrs[k] for k in list(attrs) if _has_nul(attrs[k])}
        if bad:
            for k in bad:
                del attrs[k]
            attrs[_ENCODED_ATTRS] = json.dumps(bad)
    names = {str(n) for n in [*ds.dims, *ds.variables]}
    mapping = {n: f"pdpboot_name_{j}" for j, n in enumerate(sorted(names)) if not _storable_name(n)}
    if mapping:
        ds = ds.rename(mapping)
        ds.attrs[_ENCODED] = json.dumps({v: k for k, v in mapping.items()})
    return ds


def _decode_dataset(ds: xr.Dataset) -> xr.Dataset:
    mapping = json.loads(ds.attrs.pop(_ENCODED, "{}"))
    if mapping:
        ds = ds.rename(mapping)
    legacy = _LISTS not in ds.attrs  # written before the list attrs were recorded
    for attrs in [ds.attrs, *(ds.variables[v].attrs for v in ds.variables)]:
        attrs.update(json.loads(attrs.pop(_ENCODED_ATTRS, "{}")))
        names = _LEGACY_LIST_ATTRS if legacy else json.loads(attrs.pop(_LISTS, "[]"))
        for name in names:
            if name in attrs:
                attrs[name] = _as_list(attrs[name])
    for var in json.loads(ds.attrs.pop(_JSON_STRINGS, "[]")):
        values = ds.variables[var].values
        decoded = np.asarray([json.loads(v) for v in values.ravel().tolist()], dtype=object)
        ds[var] = ds[var].copy(data=decoded.reshape(values.shape))
    return ds


def _node_digest(sums: dict) -> str:
    return hashlib.sha256(json.dumps(sums, sort_keys=True).encode()).hexdigest()


def _encode(result: xr.DataTree) -> xr.DataTree:
    """The tree as written: storable dtypes and names, checksums per node, the node manifest at the root."""
    nodes, groups, manifest, safe_paths = {}, {}, {}, {"": ""}
    for node in list(result.subtree)[1:]:  # every node below the root, parents before children
        path = node.relative_to(result)
        parent, _, name = path.rpartition("/")
        safe = name if _storable_name(name) else f"pdpboot_group_{len(groups)}"
        safe_path = f"{safe_paths[parent]}/{safe}".lstrip("/")
        safe_paths[path] = safe_path
        if safe_path != path:
            groups[safe_path] = path
        ds, as_json = _storable(node.to_dataset(inherit=False))
        sums = _checksums(ds)
        ds.attrs[_CHECKSUMS] = json.dumps(sums)
        manifest[path] = _node_digest(sums)
        nodes[f"/{safe_path}"] = _encode_dataset(ds, as_json)
    root, as_json = _storable(result.to_dataset(inherit=False))
    root.attrs[_MANIFEST] = json.dumps(manifest, sort_keys=True)
    root.attrs[_CHECKSUMS] = json.dumps(_checksums(root))  # covers the manifest
    root.attrs[_VERSION] = SCHEMA_VERSION
    root = _encode_dataset(root, as_json)
    if groups:
        root.attrs[_ENCODED_GROUPS] = json.dumps(groups)
    nodes["/"] = root
    return xr.DataTree.from_dict(nodes)


def _schema_version(value, path: Path) -> int:
    """The recorded ``pdpboot_schema_version`` as an int >= 1 (refused in one line otherwise)."""
    try:
        number = float(str(value).strip())
    except ValueError:
        number = float("nan")
    if not (number == number and number == int(number) and number >= 1):
        raise ValueError(
            f"{str(path)!r} records {_VERSION} = {value!r:.40}, which no pdpboot writes (1 to {SCHEMA_VERSION}); "
            "the file was edited or damaged: recompute or restore it.")
    return int(number)


def _decode(tree: xr.DataTree, path: Path, verify: bool) -> xr.DataTree:
    root = tree.to_dataset(inherit=False)
    version = root.attrs.pop(_VERSION, None)
    if version is None:
        raise ValueError(f"{str(path)!r} is not a pdpboot result (it has no {_VERSION} attribute); read it with "
                         "xarray.open_datatree instead.")
    version = _schema_version(version, path)
    if version > SCHEMA_VERSION:
        raise ValueError(f"{str(path)!r} was written with result schema version {version}, newer than this pdpboot "
                         f"reads ({SCHEMA_VERSION}); upgrade pdpboot.")
    groups = json.loads(root.attrs.pop(_ENCODED_GROUPS, "{}"))
    root = _verified(_decode_dataset(root), "the root", path, verify)
    manifest = root.attrs.pop(_MANIFEST, None)
    stored = {groups.get(n.relative_to(tree), n.relative_to(tree)): _decode_dataset(n.to_dataset(inherit=False))
              for n in list(tree.subtree)[1:]}
    if verify and manifest is None and version >= 2:
        raise ValueError(f"The root of {str(path)!r} has no node manifest; the file is damaged or was edited.")
    if verify and manifest is not None:
        manifest = json.loads(manifest)
        _check_manifest(manifest, {k: None for k in stored}, path)  # whole nodes missing or added
    elif verify:
        warnings.warn(
            f"{str(path)!r} was saved by an older pdpboot (result schema {version}) without a node manifest: "
            "a missing or added node cannot be detected. Save it again to record one.",
            UserWarning, stacklevel=3,
        )
    nodes, found = {"/": root}, {}
    for original, ds in stored.items():
        sums = ds.attrs.get(_CHECKSUMS)
        nodes[f"/{original}"] = _verified(ds, f"node {original!r:.100}", path, verify)
        if verify:
            found[original] = _node_digest(json.loads(sums))
    if verify and manifest is not None:
        _check_manifest(manifest, found, path)  # a node replaced by another result's (valid checksums)
    return xr.DataTree.from_dict(nodes)


def _check_manifest(manifest: dict, found: dict, path: Path) -> None:
    """Refuse a tree whose nodes are not exactly the ones saved (missing, added or replaced)."""
    problems = []
    if missing := sorted(set(manifest) - set(found)):
        problems.append(f"missing node(s) {', '.join(map(repr, missing))}")
    if extra := sorted(set(found) - set(manifest)):
        problems.append(f"node(s) {', '.join(map(repr, extra))} that were not saved with it")
    if replaced := sorted(k for k in set(manifest) & set(found) if found[k] is not None and manifest[k] != found[k]):
        problems.append(f"node(s) {', '.join(map(repr, replaced))} replaced by other content")
    if problems:
        raise ValueError(
            f"{str(path)!r} does not hold the nodes recorded when it was saved: {'; '.join(problems)[:400]}. "
            "The file was damaged or edited; recompute or restore it (load(..., verify=False) reads it anyway)."
        )


def _verified(ds: xr.Dataset, where: str, path: Path, verify: bool) -> xr.Dataset:
    stored = ds.attrs.pop(_CHECKSUMS, None)
    if not verify:
        return ds
    if stored is None:
        raise ValueError(f"{where} of {str(path)!r} has no checksums; the file is damaged or was edited.")
    expected = json.loads(stored)
    actual = _checksums(ds)
    bad = sorted(k for k in set(expected) | set(actual) if expected.get(k) != actual.get(k))
    if bad:
        shown = ["attributes" if b == _ATTRS_KEY else b for b in bad]
        raise ValueError(
            f"{where} of {str(path)!r} does not match the checksums recorded when it was saved "
            f"(in: {', '.join(shown)[:300]}); the file is damaged or was modified. Recompute or restore it "
            "(load(..., verify=False) reads it anyway)."
        )
    return ds


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".nc", ".nc4", ".netcdf"):
        return "netcdf"
    if suffix == ".zarr":
        try:  # an optional extra: say so, instead of xarray's error (or, on load, "damaged")
            import zarr  # noqa: F401
        except ImportError:
            raise ImportError(f"{str(path)!r} is a Zarr store, which needs zarr: pip install \"pdpboot[zarr]\" "
                              "(or use a .nc path: netCDF needs nothing more).") from None
        return "zarr"
    raise ValueError(f"Cannot tell the format of {str(path)!r}: use a .nc (netCDF) or .zarr path.")


def save(result: xr.DataTree, path: str | os.PathLike) -> Path:
    """Write a result to netCDF (``.nc``) or Zarr (``.zarr``), atomically, with checksums.

    Parameters
    ----------
    result : xarray.DataTree
        A pdpboot result (names and attrs are stored losslessly).
    path : str or path
        Ends in ``.nc`` (netCDF 4) or ``.zarr`` (a Zarr v2 store, a directory).

    Returns
    -------
    pathlib.Path
        The written path.

    Examples
    --------
    >>> import tempfile, pathlib, xarray as xr
    >>> tree = xr.DataTree.from_dict({"/x": xr.Dataset({"pd": ("x", [1.0, 2.0])})})
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> xr.testing.assert_identical(load(save(tree, folder / "r.nc")), tree)
    """
    if not isinstance(result, xr.DataTree):
        raise TypeError(f"save expects an xarray.DataTree result, got {type(result).__name__}.")
    path = check_path(path, "save path")
    kind = _format(path)
    if kind == "netcdf" and path.is_dir():
        raise ValueError(f"save path {str(path)!r} is a folder; give a file path ending in .nc.")
    if not path.parent.exists():
        raise FileNotFoundError(f"Folder {str(path.parent)!r} does not exist; create it first.")
    encoded = _encode(result)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.remove(tmp)
    try:
        if kind == "netcdf":
            encoded.to_netcdf(tmp, engine="netcdf4")
        else:
            encoded.to_zarr(tmp, mode="w", zarr_format=2, consolidated=True)
        try:  # what was written is what load will read: never put a file in place that fails its checksums
            _read(Path(tmp), kind, verify=True, shown=path)
        except ValueError as exc:
            raise ValueError(f"pdpboot could not write {str(path)!r} faithfully, so nothing was written there "
                             f"(a bug, please report it): {exc}") from exc
        if kind == "netcdf":
            os.replace(tmp, path)
        else:
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


def _as_list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else np.atleast_1d(value).tolist()


def load(path: str | os.PathLike, *, verify: bool = True) -> xr.DataTree:
    """Read a result written by :func:`save` into memory.

    Parameters
    ----------
    path : str or path
        A ``.nc`` file or ``.zarr`` store written by :func:`save`.
    verify : bool
        Check every checksum and the node manifest (``ValueError`` naming what changed);
        ``False`` skips both.

    Returns
    -------
    xarray.DataTree
        The result, identical to the one saved.

    Examples
    --------
    >>> import tempfile, pathlib, xarray as xr
    >>> tree = xr.DataTree.from_dict({"/x": xr.Dataset({"pd": ("x", [1.0, 2.0])})})
    >>> path = save(tree, pathlib.Path(tempfile.mkdtemp()) / "r.zarr")
    >>> load(path, verify=False)["x"].ds["pd"].values.tolist()
    [1.0, 2.0]
    """
    path = Path(path)
    kind = _format(path)
    if not path.exists():
        raise FileNotFoundError(f"No result at {str(path)!r}.")
    return _read(path, kind, verify=verify, shown=path)


def _read(path: Path, kind: str, *, verify: bool, shown: Path) -> xr.DataTree:
    """Read and decode the result at ``path`` (messages name ``shown``)."""
    try:
        with xr.open_datatree(path, engine="netcdf4" if kind == "netcdf" else "zarr") as tree:
            tree = tree.load()
    except Exception as exc:  # noqa: BLE001 - netCDF/HDF5/Zarr raise many types on a damaged file
        raise ValueError(
            f"{str(shown)!r} could not be read as a {'netCDF' if kind == 'netcdf' else 'Zarr'} pdpboot result "
            f"({type(exc).__name__}: {str(exc)[:200]}); it is damaged or not a result."
        ) from exc
    try:
        tree = _decode(tree, shown, verify)
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged bookkeeping attribute
        raise ValueError(f"{str(shown)!r} is damaged: its pdpboot attributes cannot be decoded ({exc!r:.200}).") \
            from exc
    return tree
