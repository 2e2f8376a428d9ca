"""Fingerprints of data contents: an in-process cache key, and the owner's keyed fingerprint.

- :func:`data_sha256` is a plain SHA-256 of the contents. It is used only as an in-process cache key
  and never written to any file: a plain hash of private data lets anyone holding a candidate table
  (or all but one cell of it) confirm it by enumeration.
- :func:`data_fingerprint` is an HMAC-SHA256 of the same bytes under a secret key. It matches a report
  to a file for whoever holds the key, and nobody else. It appears only in the owner's workbook.
- The key is per owner and data set: :func:`fingerprint_key` derives it from the owner's secret (32 random
  bytes per browser session, :func:`new_owner_secret`, held only in memory) and the data, so one owner's
  workbooks of one table share a key and nobody else's key opens them. It never sits in the file that holds the
  HMAC: the owner downloads it as a separate key file (``engine.reporting.report.RunReport.fingerprint_key_file``).

Written with the standard library's ``hashlib``/``hmac``; only the canonical byte layout is ours.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["data_fingerprint", "data_sha256", "fingerprint_key", "key_id", "new_owner_secret"]

_KEY_DOMAIN = b"privalab fingerprint key v1"


def new_owner_secret() -> bytes:
    """A fresh owner secret: 32 bytes from the OS's entropy (one per browser session; never written)."""
    return secrets.token_bytes(32)


def fingerprint_key(owner_secret: bytes, *parts: Any) -> bytes:
    """The fingerprint key of this owner and this data set: HMAC-SHA256 under ``owner_secret`` of the contents
    :func:`data_sha256` covers (32 bytes). Another owner (another secret) or another table gives another key."""
    if len(bytes(owner_secret)) < 16:
        raise ValueError("the owner secret must hold at least 16 random bytes")
    h = hmac.new(bytes(owner_secret), _KEY_DOMAIN, digestmod=hashlib.sha256)
    for p in parts:
        h.update(b"\x1d")
        _hash_part(h, p)
    return h.digest()


def key_id(key: bytes) -> str:
    """A short public label of a key (16 hex), to match a key file to its workbook; it reveals nothing of it."""
    return hmac.new(bytes(key), b"privalab key id", digestmod=hashlib.sha256).hexdigest()[:16]


def _hash_part(h: Any, obj: Any) -> None:
    if isinstance(obj, pd.DataFrame):
        h.update(json.dumps({"shape": list(obj.shape), "columns": [str(c) for c in obj.columns],
                             "dtypes": [str(t) for t in obj.dtypes]}).encode())
        numeric = [i for i, t in enumerate(obj.dtypes)
                   if pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)]
        if numeric:  # one block, column by column (Fortran order): fast for wide spectra
            block = obj.iloc[:, numeric].to_numpy(dtype=float)
            h.update(np.asfortranarray(block).tobytes(order="F"))
        for i in sorted(set(range(obj.shape[1])) - set(numeric)):
            h.update(b"\x1f" + str(i).encode() + b"\x1f")
            h.update("\x1f".join(map(str, obj.iloc[:, i].tolist())).encode("utf-8", "surrogatepass"))
    elif isinstance(obj, pd.Series):
        _hash_part(h, obj.to_frame())
    elif isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        h.update(json.dumps({"shape": list(a.shape), "dtype": a.dtype.str}).encode())
        h.update(a.tobytes() if a.dtype.kind != "O" else "\x1f".join(map(str, a.ravel().tolist())).encode())
    elif isinstance(obj, (bytes, bytearray)):
        h.update(bytes(obj))
    elif isinstance(obj, str):
        h.update(obj.encode("utf-8", "surrogatepass"))
    elif isinstance(obj, (list, tuple)):
        for part in obj:
            h.update(b"\x1e")
            _hash_part(h, part)
    else:
        _hash_part(h, np.asarray(obj))


def data_sha256(*parts: Any) -> str:
    """SHA-256 (hex) of data contents: data frames (column names, dtypes and values, not the index),
    arrays (shape, dtype, bytes), bytes or text, in the order given. Equal data give equal hashes
    however they were loaded, so a reader can check that a report belongs to a table."""
    h = hashlib.sha256()
    for p in parts:
        h.update(b"\x1d")
        _hash_part(h, p)
    return h.hexdigest()


def data_fingerprint(*parts: Any, key: bytes) -> str:
    """HMAC-SHA256 (hex) of the contents :func:`data_sha256` covers, keyed with ``key`` (the owner's
    :func:`fingerprint_key`). For the owner's workbook only; the key goes in a separate file."""
    h = hmac.new(bytes(key), digestmod=hashlib.sha256)
    for p in parts:
        h.update(b"\x1d")
        _hash_part(h, p)
    return h.hexdigest()
