"""Save and reopen a session (issue 31, item 6): the user's choices as a small JSON project file.

"Save session" downloads the choices kept in ``st.session_state`` (mode, ε, δ, calibration, declared public
bounds and ranges, chosen response and columns, chains, components, the run history's settings) and nothing
else: no data, no fitted model, no result, no noise key, no uploaded bytes, no number computed from private
rows. Keys are taken by an explicit whitelist (``SAVED``: name patterns) and values only when plain (text,
booleans, finite numbers, short lists of those); "Open session" applies the same filter to what it reads, so a
hand-edited file cannot plant anything else. The data itself is not in the file: the user uploads it again;
settings for a data set that is not loaded yet stay in the session and apply when it comes back (their keys
name the data set and the response).

Written by hand: Streamlit has no session export; the file is plain JSON.
"""
from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone

import streamlit as st

__all__ = ["FORMAT", "RUN_FIELDS", "SAVED", "apply_session", "saved_choices", "session_file_widget", "session_json"]

#: Format tag of the project file.
FORMAT = "privalab.session/1"
_PAGES = r"(edpls|dp_pcr|pca_gauss|dp_cca|p3ls|var_admm|calc|audit|attack|apply|home)"
#: The keys a project file may hold (full-match patterns) and the values each may take: "number" (a finite number
#: or a pair of them: a declared bound or range), "text" (a string or a list of strings: names, chains, choices),
#: "flag" (a boolean). A response key holding numbers, say, is not saved.
SAVED = tuple((re.compile(p), kind) for p, kind in (
    (r"pl_(epsilon|delta)", "number"),
    (r"pl_(mode|calibration|unit|response_unit)", "text"),
    (r"pl_reproducible", "flag"),
    (r"pl_public_.*", "number"),  # the shared "Public information" declarations: declared, never read off data
    (r"pl_public_.*", "text"),
    (_PAGES + r"_(eps|delta|k|n_components|reps|lags)", "number"),
    (_PAGES + r"_(mode|cal|calibration|chain|chains|chain_steps|split|strict_estimator|eps_grid|data_source|"
              r"data_sample|estimator|law|pca_source|unit)", "text"),
    (_PAGES + r"_repro", "flag"),
    (_PAGES + r"_(response|x_columns|y_columns|columns|xrange)(_.*)?", "text"),
    (_PAGES + r"_(y_low|y_high|y_range|x_bound|y_bound|bounds|low|high)(_.*)?", "number"),
))
#: The settings kept of each run of a run history (never its metrics: they come from private test rows).
RUN_FIELDS = ("page", "method", "mode", "estimator", "epsilon", "delta", "chain", "preprocessing", "n_components",
              "response", "status", "label", "time")
#: Keys of the run history (``ui.run_history``: a dict release id -> run), and where an opened file's runs go:
#: a file's runs carry settings only (no ledger, no metrics), so they are listed apart, never mixed into the
#: history that the odometer totals.
_RUN_KEYS = ("pl_runs", "pl_run_history")
OPENED_RUNS = "pl_opened_runs"
#: The shared "Public information" declarations (``ui.public_info``: data key -> {"y_range", "x_bound"}).
PUBLIC = "pl_public"
_MAX_LIST = 5000


def _plain(value):
    """``value`` when it is plain (text, bool, finite number, None or a short list of those), else ``_SKIP``."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value if math.isfinite(float(value)) else _SKIP
    if isinstance(value, (list, tuple)) and len(value) <= _MAX_LIST:
        items = [_plain(v) for v in value]
        return _SKIP if any(v is _SKIP or isinstance(v, list) for v in items) else items
    return _SKIP


_SKIP = object()


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _fits(value, kind: str) -> bool:
    """Whether a plain ``value`` is of the ``kind`` its key allows (``SAVED``)."""
    if kind == "flag":
        return isinstance(value, bool)
    if kind == "number":
        return _is_number(value) or (isinstance(value, list) and len(value) <= 2 and all(map(_is_number, value)))
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))


def _kept(key: str, value):
    """The value to save or restore under ``key`` (``_SKIP``: not a whitelisted key, or not of its kind)."""
    value = _plain(value)
    if value is _SKIP:
        return _SKIP
    ok = any(p.fullmatch(key) and (value is None or _fits(value, kind)) for p, kind in SAVED)
    return value if ok else _SKIP


def _runs(value) -> list:
    """The settings of each run (``RUN_FIELDS`` and the run's own plain settings), never its metrics."""
    if isinstance(value, dict):
        value = list(value.values())
    if not isinstance(value, (list, tuple)):
        return []
    out = []
    for run in value:
        settings = getattr(run, "__dict__", run)
        if isinstance(settings, dict):
            flat = {**{k: v for k, v in settings.items() if k in RUN_FIELDS},
                    **(settings["settings"] if isinstance(settings.get("settings"), dict) else {})}
            kept = {str(k): _plain(v) for k, v in flat.items() if k in RUN_FIELDS or isinstance(v, (str, bool))}
            out.append({k: v for k, v in kept.items() if v is not _SKIP})
    return out


def _public(value) -> dict:
    """The declarations of ``pl_public`` with plain values only: declared ranges and bounds (public by definition)."""
    if not isinstance(value, dict):
        return {}
    out = {}
    for key, decl in value.items():
        if not isinstance(decl, dict):
            continue
        rng = _plain(decl.get("y_range"))
        xb = decl.get("x_bound")
        kept = {}
        if isinstance(rng, list) and len(rng) == 2 and all(v is None or _is_number(v) for v in rng):
            kept["y_range"] = rng
        if isinstance(xb, dict):
            kept["x_bound"] = {str(m): b for m, b in xb.items() if _is_number(_plain(b))}
        if kept:
            out[str(key)] = kept
    return out


def saved_choices(state) -> dict:
    """The whitelisted, plain choices of ``state`` (a mapping such as ``st.session_state``)."""
    out = {}
    for key in list(state.keys()):
        value = _kept(str(key), state[key])
        if value is not _SKIP:
            out[str(key)] = value
    return dict(sorted(out.items()))


def session_json(state) -> str:
    """The project file's text: format, time, choices and the run history's settings."""
    runs = next((_runs(state[k]) for k in _RUN_KEYS if k in state), [])
    doc = {"format": FORMAT, "saved_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "note": "Settings only: the data are not in this file; upload them again after opening it.",
           "settings": saved_choices(state), "public": _public(state.get(PUBLIC)), "runs": runs}
    return json.dumps(doc, indent=1, allow_nan=False)


def apply_session(state, text) -> int:
    """Apply a project file's settings to ``state``; returns how many were applied (ValueError when the file is
    not a PrivaLab session). Only whitelisted keys with plain values are applied."""
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"not a PrivaLab session file (not JSON: {err})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("settings"), dict):
        raise ValueError(f"not a PrivaLab session file (expected format {FORMAT!r})")
    n = 0
    for key, value in doc["settings"].items():
        value = _kept(str(key), value)
        if value is not _SKIP:
            ranged = isinstance(value, list) and "range" in str(key)  # range sliders hold tuples; JSON gives lists
            state[str(key)] = tuple(value) if ranged else value
            n += 1
    if doc.get("runs"):
        state[OPENED_RUNS] = _runs(doc["runs"])
    public = _public(doc.get("public"))
    if public:
        mine = state.setdefault(PUBLIC, {}) if hasattr(state, "setdefault") else state[PUBLIC]
        for key, decl in public.items():
            entry = mine.setdefault(key, {})
            if "y_range" in decl:
                entry["y_range"] = tuple(decl["y_range"])
            if "x_bound" in decl:
                entry.setdefault("x_bound", {}).update({int(m) if m.isdigit() else m: b
                                                        for m, b in decl["x_bound"].items()})
            n += 1
    return n


def _open(upload) -> None:
    token = getattr(upload, "file_id", None) or (upload.name, upload.size)  # a new upload of the same file: new id
    if st.session_state.get("pl_session_opened") == token:
        return  # applied on an earlier run; the uploader keeps the file across reruns
    try:
        n = apply_session(st.session_state, upload.getvalue())
    except ValueError as err:
        st.error(f"{upload.name}: {err}")
        return
    st.session_state["pl_session_opened"] = token
    st.session_state["pl_session_message"] = (f"{upload.name}: {n} settings restored. The data are not in the "
                                              "file: upload them again; their settings apply when they come back.")
    st.rerun()


def session_file_widget() -> None:
    """The sidebar's "Save session" download and "Open session" upload (drawn before the page runs, so a
    restored setting reaches the page's widgets on this very run)."""
    with st.sidebar.expander("Session: save or open", icon=":material/save:"):
        st.download_button("Save session", session_json(st.session_state), file_name="privalab_session.json",
                           mime="application/json", key="pl_session_save", on_click="ignore",
                           help="Your settings (budget, mode, declared bounds, columns, chains, run history "
                                "settings) as a JSON file; no data and no results")
        upload = st.file_uploader("Open session", type=["json"], key="pl_session_upload",
                                  help="A file saved with 'Save session'; then upload your data again")
        if upload is not None:
            _open(upload)
        message = st.session_state.get("pl_session_message")
        if message:
            st.success(message)
