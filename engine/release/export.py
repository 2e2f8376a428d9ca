"""Fitted estimators as plain JSON (no pickle), and back.

A fitted estimator becomes one JSON object::

    {"format": "privalab.<method>/1", "class": "DPCCA",
     "params": {...get_params(deep=False)...},
     "attributes": {...every public fitted attribute (trailing underscore)...},
     "types": {"x_weights_": {"kind": "ndarray", "dtype": "float64", "shape": [5, 2]}, ...},
     "not_exported": {"trace_": "AdmmTrace", ...},
     "ledger": {...PrivacyLedger.to_dict()...}, "ledger_totals": {...}, "privacy": "..."}

numpy arrays are nested lists, data frames ``to_dict(orient="split")``; ``types`` records what each
path was so :func:`estimator_from_dict` restores arrays with their dtype and shape. Non-finite floats
are written as the strings ``"nan"``, ``"inf"`` and ``"-inf"`` (strict JSON, ``allow_nan=False``).
Objects that are not plain data (protocol roles, message logs, random generators) are listed under
``not_exported`` with their type name and left out; so is anything named in ``exclude`` (for
example a copy of the private training data).
"""
from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from engine.privacy.ledger import Neighbouring, PrivacyLedger, Release, ledger_totals
from engine.privacy.ledger import _json_float as _float  # one non-finite float spelling for every JSON file

__all__ = [
    "decode_value",
    "dumps",
    "encode_value",
    "estimator_from_dict",
    "estimator_to_dict",
    "ledger_from_dict",
    "ledger_totals",
]

_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class _Skip(Exception):
    """A value that is not plain data."""




def _plain(v: Any) -> Any:
    """Elements of an array's ``tolist()`` made strict-JSON safe."""
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, complex):
        raise _Skip("complex")
    if isinstance(v, (str, bool, int)) or v is None:
        return v
    if isinstance(v, (np.generic,)):
        return _plain(v.item())
    return str(v)


_NOT_HANDLED = object()  # sentinel: None is a value an encoder can return


def _encode_scalar_or_array(v: Any, path: str, types: dict[str, Any]) -> Any:
    """None, str, bool, numbers and ndarrays; ``_NOT_HANDLED`` for anything else."""
    if v is None or isinstance(v, (str, bool)):
        return v
    if isinstance(v, np.bool_):
        types[path] = {"kind": "bool"}
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        types[path] = {"kind": "float"}
        return _float(float(v))
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "c":
            raise _Skip("complex array")
        types[path] = {"kind": "ndarray", "dtype": v.dtype.str if v.dtype.kind != "O" else "object",
                       "shape": list(v.shape)}
        return _plain(v.tolist())
    return _NOT_HANDLED


def _encode_record(v: Any, path: str, types: dict[str, Any]) -> Any:
    """Ledgers, frames, series and slices; ``_NOT_HANDLED`` for anything else."""
    if isinstance(v, PrivacyLedger):
        types[path] = {"kind": "PrivacyLedger"}
        return encode_value(v.to_dict(), path + "#", {})
    if isinstance(v, pd.DataFrame):
        types[path] = {"kind": "DataFrame"}
        split = v.to_dict(orient="split")
        return {"columns": [_plain(c) for c in split["columns"]], "index": _plain(list(split["index"])),
                "data": _plain([list(r) for r in split["data"]])}
    if isinstance(v, pd.Series):
        types[path] = {"kind": "Series"}
        return {"name": _plain(v.name), "index": _plain(list(v.index)), "data": _plain(v.tolist())}
    if isinstance(v, slice):
        types[path] = {"kind": "slice"}
        return [v.start, v.stop, v.step]
    return _NOT_HANDLED


def encode_value(v: Any, path: str = "", types: dict[str, Any] | None = None) -> Any:
    """``v`` as plain JSON data; the kind of every array, frame, tuple or ledger goes into ``types[path]``."""
    types = {} if types is None else types
    for encode in (_encode_scalar_or_array, _encode_record):
        out = encode(v, path, types)
        if out is not _NOT_HANDLED:
            return out
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        types[path] = {"kind": "dataclass", "class": type(v).__name__}
        return {f.name: encode_value(getattr(v, f.name), f"{path}.{f.name}", types) for f in dataclasses.fields(v)}
    if isinstance(v, dict):
        return {str(k): encode_value(x, f"{path}.{k}", types) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        if isinstance(v, tuple):
            types[path] = {"kind": "tuple"}
        return [encode_value(x, f"{path}[{i}]", types) for i, x in enumerate(v)]
    raise _Skip(type(v).__name__)  # generators, random states, callables, ...


def _unfloat(v: Any) -> Any:
    if isinstance(v, list):
        return [_unfloat(x) for x in v]
    if isinstance(v, str) and v in _NONFINITE:
        return _NONFINITE[v]
    return v


def decode_value(v: Any, path: str, types: dict[str, Any]) -> Any:
    """Inverse of :func:`encode_value` for one path."""
    t: dict[str, Any] = types.get(path) or {}
    kind = t.get("kind")
    if kind == "ndarray":
        dtype = np.dtype(object) if t["dtype"] == "object" else np.dtype(t["dtype"])
        raw = _unfloat(v) if dtype.kind in "fc" else v
        arr = np.array(raw, dtype=dtype) if dtype.kind != "O" else _object_array(raw, t["shape"])
        return arr.reshape(t["shape"])
    if kind == "float":
        return float(_NONFINITE.get(v, v)) if isinstance(v, str) else float(v)
    if kind == "bool":
        return np.bool_(v)
    if kind == "PrivacyLedger":
        return ledger_from_dict(v)
    if kind == "DataFrame":
        return pd.DataFrame(v["data"], columns=v["columns"], index=v["index"])
    if kind == "Series":
        return pd.Series(v["data"], index=v["index"], name=v["name"])
    if kind == "slice":
        return slice(*v)
    if isinstance(v, dict):
        return {k: decode_value(x, f"{path}.{k}", types) for k, x in v.items()}
    if isinstance(v, list):
        out = [decode_value(x, f"{path}[{i}]", types) for i, x in enumerate(v)]
        return tuple(out) if kind == "tuple" else out
    return v


def _object_array(raw: Any, shape: list[int]) -> np.ndarray:
    arr = np.empty(len(raw) if isinstance(raw, list) else 0, dtype=object)
    if len(shape) == 1:
        arr[:] = raw
        return arr
    return np.array(raw, dtype=object)


def ledger_from_dict(data: dict[str, Any]) -> PrivacyLedger:
    """A :class:`PrivacyLedger` from ``PrivacyLedger.to_dict()`` output (non-finite strings allowed)."""
    led = PrivacyLedger(neighbouring=data.get("neighbouring", Neighbouring.ADD_REMOVE),
                        caveats=list(data.get("caveats", [])), unit=str(data.get("unit", "")),
                        accountant=str(data.get("accountant", "basic")))
    fields = set(Release.__dataclass_fields__)
    for e in data.get("entries", []):
        e = {k: (_NONFINITE[v] if isinstance(v, str) and v in _NONFINITE and k != "name" else v)
             for k, v in e.items() if k in fields}
        led.add(Release(**e))
    return led


def estimator_to_dict(est: Any, fmt: str, *, exclude: Iterable[str] = (), state: Iterable[str] = (),
                      ledger: PrivacyLedger | None = None, privacy: str | None = None,
                      extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A fitted scikit-learn style estimator as plain JSON data (see the module docstring).

    exclude: fitted attribute names to leave out (listed under ``not_exported`` as "excluded").
    state: private attribute names (leading underscore) that ``transform``/``predict`` need; written
    under ``"state"`` and restored by :func:`estimator_from_dict`.
    ledger: the privacy ledger to include (default: the estimator's ``privacy_ledger_``, if any).
    privacy: a sentence stating what the model guarantees (for models without a ledger).
    """
    types: dict[str, Any] = {}
    not_exported: dict[str, Any] = {}
    params = {}
    for k, v in est.get_params(deep=False).items():
        try:
            params[k] = encode_value(v, f"params.{k}", types)
        except _Skip as why:
            params[k] = None
            not_exported[f"params.{k}"] = str(why)
    attributes = {}
    for k, v in sorted(vars(est).items()):
        if not k.endswith("_") or k.startswith("_"):
            continue
        if k in exclude:
            not_exported[k] = "excluded (private training data or not part of the model)"
            continue
        try:
            attributes[k] = encode_value(v, k, types)
        except _Skip as why:
            not_exported[k] = str(why)
    state_out = {}
    for k in state:
        if hasattr(est, k):
            try:
                state_out[k] = encode_value(getattr(est, k), f"state.{k}", types)
            except _Skip as why:
                not_exported[k] = str(why)
    led = ledger if ledger is not None else getattr(est, "privacy_ledger_", None)
    out = {
        "format": fmt,
        "class": type(est).__name__,
        "params": params,
        "attributes": attributes,
        "state": state_out,
        "types": types,
        "not_exported": not_exported,
        "ledger": encode_value(led.to_dict() if led is not None
                               else {"neighbouring": Neighbouring.ADD_REMOVE.value, "entries": []}),
        "ledger_totals": ledger_totals(led),
    }
    if privacy:
        out["privacy"] = privacy
    if extra:
        out.update(encode_value(extra))
    return out


def estimator_from_dict(data: dict[str, Any] | str | bytes, cls: type, fmt: str) -> Any:
    """An estimator of class ``cls`` with the params and fitted attributes of ``estimator_to_dict`` output.

    ``data`` may be the dict or its JSON string. Attributes listed under ``not_exported`` stay unset,
    so methods that need them (a protocol's roles, a random generator) are not available.
    """
    if isinstance(data, (str, bytes)):
        data = json.loads(data)
    if not isinstance(data, dict) or data.get("format") != fmt:
        raise ValueError(f"not an exported {cls.__name__} model (expected format {fmt!r})")
    types = data.get("types", {})
    params = {k: decode_value(v, f"params.{k}", types) for k, v in data["params"].items()
              if f"params.{k}" not in data.get("not_exported", {})}
    est = cls(**params)
    for k, v in data["attributes"].items():
        setattr(est, k, decode_value(v, k, types))
    for k, v in data.get("state", {}).items():
        setattr(est, k, decode_value(v, f"state.{k}", types))
    if "privacy_ledger_" not in data["attributes"] and data.get("ledger", {}).get("entries"):
        est.privacy_ledger_ = ledger_from_dict(data["ledger"])
    return est


def dumps(data: dict[str, Any], **json_kwargs: Any) -> str:
    """Strict JSON (no NaN/Infinity literals)."""
    json_kwargs.setdefault("allow_nan", False)
    return json.dumps(data, **json_kwargs)
