"""Apply a shareable regression release to new spectra: one function for the "Apply a model" page and the CLI.

``predict_from_release(release, frame)`` checks that ``release`` is a shareable release of a regression
(edPLS in any mode, the recommended ``StrictEDPLS``, DP-PCR, AdaSSP) whose travel fields
(``engine.release.travel``) are of a known schema, matches the frame's columns to the release's channels by
name (missing channels are refused, naming them; extra columns are ignored and named in a note), applies the
caller's row-wise chain when the release names one outside the estimator, rebuilds the estimator from the release
(each method's ``estimator_from_release``) and returns its ``predict`` on the matched columns. Every
refusal is a ``ValueError`` with a message meant for the user.

Written by hand: the release format is PrivaLab's own; the prediction itself is the estimator's ``predict``.
"""
from __future__ import annotations

import importlib
import json
from typing import Any

import numpy as np
import pandas as pd

from engine.release.manifest import RELEASE_KIND
from engine.release.travel import SCHEMA_VERSION

__all__ = ["REGRESSION_RELEASES", "predict_from_release", "read_release"]

#: Release format -> (label, "module:function" rebuilding a predicting estimator from the release).
REGRESSION_RELEASES = {
    "privalab.edpls.release/1": ("edPLS", "engine.methods.edpls.release:estimator_from_release"),
    "privalab.edpls_recommended.release/1": ("edPLS (recommended strict)",
                                             "engine.methods.edpls.recommended_release:estimator_from_release"),
    "privalab.dp_pcr.release/1": ("DP-PCR", "engine.methods.dp_pcr.release:estimator_from_release"),
    "privalab.adassp.release/1": ("AdaSSP", "engine.methods.adassp.release:estimator_from_release"),
}
#: Estimators that apply their ``preprocessing_chain`` themselves in ``predict``.
_OWN_CHAIN = {"privalab.edpls_recommended.release/1"}


def read_release(data: Any) -> dict[str, Any]:
    """A release dict from a dict, JSON text or bytes (ValueError naming what is wrong)."""
    if isinstance(data, (bytes, bytearray)):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("the model file is not UTF-8 text: upload the release JSON a PrivaLab page or "
                             "`privalab fit` wrote") from None
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as err:
            raise ValueError(f"the model file is not JSON (line {err.lineno}, column {err.colno}: {err.msg})") \
                from None
    if not isinstance(data, dict):
        raise ValueError("the model file is not a PrivaLab release (a JSON object is expected)")
    return data


def _check_release(rel: dict[str, Any]) -> tuple[str, list[str], dict[str, Any]]:
    """(format, channels, fields) of a shareable regression release with known travel fields, else ValueError."""
    fmt = rel.get("format")
    if rel.get("kind") != RELEASE_KIND:
        what = "an owner's file" if "owner" in str(rel.get("kind", "")).lower() else f"format {fmt!r}"
        raise ValueError(f"this is not a shareable release ({what}): apply a model takes the shareable release "
                         "JSON of a regression (edPLS, DP-PCR, AdaSSP)")
    if fmt not in REGRESSION_RELEASES:
        raise ValueError(f"this release ({rel.get('method', fmt)}, format {fmt!r}) is not a regression: apply a "
                         f"model takes {', '.join(v[0] for v in REGRESSION_RELEASES.values())}")
    fields = rel.get("fields") or {}
    schema = fields.get("schema_version")
    if schema != SCHEMA_VERSION:
        got = "none (a release written before models carried their channel names)" if schema is None else repr(schema)
        raise ValueError(f"unknown release schema: {got}; this version of PrivaLab reads {SCHEMA_VERSION!r}. "
                         "Refit and export the model again")
    channels = fields.get("channels")
    if not isinstance(channels, list) or not channels or not all(isinstance(c, str) for c in channels):
        raise ValueError("the release's 'channels' field is not a list of channel names")
    return fmt, channels, fields


def _matched(frame: pd.DataFrame, channels: list[str]) -> tuple[np.ndarray, list[str]]:
    """X (n, m) in the release's channel order, and the frame's extra columns (ignored)."""
    by_name = {str(c): c for c in frame.columns}
    missing = [c for c in channels if c not in by_name]
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        raise ValueError(f"the spectra lack {len(missing)} of the model's {len(channels)} channels: {shown}")
    X = frame[[by_name[c] for c in channels]]
    bad = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    if bad:
        raise ValueError(f"channel column(s) {', '.join(map(str, bad[:5]))} are not numeric")
    values = X.to_numpy(dtype=float)
    if not np.all(np.isfinite(values)):
        r, c = np.argwhere(~np.isfinite(values))[0]
        raise ValueError(f"row {r + 1}, channel {channels[c]!r} is empty or not finite: every channel needs a number")
    extra = [str(c) for c in frame.columns if str(c) not in set(channels)]
    return values, extra


def _estimator(fmt: str, rel: dict[str, Any]) -> Any:
    module, func = REGRESSION_RELEASES[fmt][1].split(":")
    return getattr(importlib.import_module(module), func)(rel)


def predict_from_release(release: Any, frame: pd.DataFrame) -> pd.DataFrame:
    """Predictions of a shareable regression release on the rows of ``frame``.

    Parameters
    ----------
    release : dict, JSON text or bytes of a shareable release carrying travel fields (``engine.release.travel``).
    frame : DataFrame (n, *) with at least the release's channel columns (by name, any order; others ignored).

    Returns
    -------
    DataFrame (n, 1), index of ``frame``, one column "<response> (predicted)" (with the unit in brackets when
    declared); ``attrs["notes"]`` lists what was ignored (extra columns), ``attrs["release"]`` the model's
    travel fields.

    Raises
    ------
    ValueError
        Not a shareable regression release, an unknown schema, missing channels, non-numeric or empty cells,
        a release that cannot predict (e.g. a paper-mode edPLS release: no intercept).
    """
    rel = read_release(release)
    fmt, channels, fields = _check_release(rel)
    X, extra = _matched(frame, channels)
    chain = str(fields.get("preprocessing_chain") or "none")
    if fmt not in _OWN_CHAIN and chain != "none":
        from engine.methods.edpls.basis import rowwise_chain

        try:
            X = rowwise_chain(chain, X.shape[1]).transform(X)
        except ValueError as err:
            raise ValueError(f"the model's preprocessing '{chain}' cannot be rebuilt from the release ({err}); "
                             "refit with a row-wise chain (e.g. snv, sg1) to share the model") from None
    try:
        est = _estimator(fmt, rel)
        pred = np.asarray(est.predict(X), dtype=float)
    except (KeyError, TypeError, AttributeError) as err:
        raise ValueError(f"the release cannot be rebuilt into a model ({type(err).__name__}: {err})") from None
    pred = pred.reshape(len(X), -1)[:, 0] if pred.ndim > 1 else pred
    unit = str(fields.get("response_unit") or "")
    name = f"{fields.get('response') or 'y'} (predicted)" + (f" [{unit}]" if unit else "")
    out = pd.DataFrame({name: pred}, index=frame.index)
    notes = []
    if extra:
        shown = ", ".join(extra[:10]) + (f" and {len(extra) - 10} more" if len(extra) > 10 else "")
        notes.append(f"{len(extra)} column(s) that are not channels of the model were ignored: {shown}")
    out.attrs["notes"] = notes
    out.attrs["release"] = {k: fields.get(k) for k in ("response", "response_unit", "preprocessing_chain",
                                                         "estimator", "engine_version", "schema_version")}
    return out
