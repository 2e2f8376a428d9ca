"""Response and X columns of a regression page (edPLS, DP-PCR; P3LS's responses): widgets only, the proposals are
``engine.data.columns`` (read off column names and types, never off a response's values).

"Response (y)" offers the candidate responses first (a sample set's declared responses, then the named
numeric columns: a property, never a wavelength like "1100"), then every other numeric column. "X columns" is
a wavelength range slider when the X candidates are named by numbers, else a multiselect of the numeric
columns to leave out; either way the other candidate responses and id columns are left out by default.
"""
from __future__ import annotations

import streamlit as st

from engine.data.columns import id_columns, numeric_columns, response_candidates, wavelength_order, x_columns
from engine.methods.edpls.pipeline import PAGE_DEFAULTS, PageProblem, page_problem
from ui.state import keep, remembered


def proposed_responses(ds) -> list:
    """The candidate responses of a data set, the likeliest first (``engine.data.columns.response_candidates``):
    the one proposal every page with a response uses (edPLS, DP-PCR, P3LS). A table without a candidate (every
    numeric column named by a number: spectra alone) stops the page with a message saying how to add one."""
    candidates = response_candidates(ds.df, ds.response_columns)
    if not candidates:
        # a spectra file alone: proposing its first wavelength as "the response" would fit garbage
        st.error(f"{ds.name}: this file has no response column (every numeric column is named by a number: a "
                 "wavelength or channel). Add the reference values as a named column, or use 'X and Y as two "
                 "files' in the data choice above.", icon=":material/block:")
        st.stop()
    return candidates


def response_picker(ds, key: str, where=st) -> str:
    """The "Response (y)" selectbox, defaulting to the first candidate response (a named property).

    A table without a candidate (every numeric column named by a number: spectra alone) stops the page with
    a message saying how to add the response; the page's other choices stay in ``st.session_state``.
    """
    numeric = numeric_columns(ds.df)
    candidates = proposed_responses(ds)
    options = candidates + [c for c in numeric if c not in candidates]
    widget = f"{key}_response_{ds.origin}_{ds.name}"
    index = options.index(remembered(widget, options[0], lambda v: v in options))  # kept across pages (ui.state)
    return keep(widget, where.selectbox("Response (y)", options, index=index, key=widget,
                                        help="Candidates first: named numeric columns (a property, not a wavelength "
                                             "or an id)."))


def x_picker(ds, response: str, key: str) -> list:
    """The X columns for ``response``: a wavelength range, or the numeric columns left out."""
    df = ds.df
    candidates = response_candidates(df, ds.response_columns)
    others = [c for c in candidates if c != response]
    default = x_columns(df, response, others)
    waves = wavelength_order(default)
    where = f"{key}_{ds.origin}_{ds.name}_{response}"  # a choice never carries over to other data
    if len(waves) >= 2 and len(waves) == len(default):
        slider = f"{key}_xrange_{where}"
        value = remembered(slider, (waves[0], waves[-1]), lambda v: len(v) == 2 and all(w in waves for w in v))
        lo, hi = keep(slider, st.select_slider("X columns: wavelength range (column names)", options=waves,
                                               value=tuple(value), key=slider))
        a, b = waves.index(lo), waves.index(hi)
        inside = set(waves[min(a, b):max(a, b) + 1])
        chosen = [c for c in default if c in inside]
        left_out = [c for c in numeric_columns(df) if c != response and c not in default]
        if left_out:
            st.caption("Left out of X: " + ", ".join(str(c) for c in left_out[:12])
                       + (f" and {len(left_out) - 12} more" if len(left_out) > 12 else "")
                       + " (the other candidate responses, ids and columns not named by a wavelength).")
        return chosen
    pool = [c for c in numeric_columns(df) if c != response]
    ids = set(id_columns(df))
    picker = f"{key}_leave_out_{where}"
    out = keep(picker, st.multiselect("Leave out of X", pool, key=picker,
                                      default=remembered(picker, [c for c in pool if c in ids or c not in default],
                                                         lambda v: all(c in pool for c in v)),
                                      help="By default the other candidate responses and id columns are left out."))
    return [c for c in pool if c not in out]


def enough_x_columns(ds, response: str, channels: list) -> bool:
    """Whether at least two X columns are chosen; if not, an error naming the data set and the response (the
    caller stops the page or returns)."""
    if len(channels) >= 2:
        return True
    st.error(f"{ds.name}: with '{response}' as the response, fewer than two X columns are chosen.")
    return False


def page_problem_or_stop(ds, response: str, split: str, channels: list) -> PageProblem:
    """The page's regression problem (``page_problem`` with the pages' test share and split seed), or an error
    naming the data set and a stop: fewer than two X columns, or a split the rows do not allow."""
    if not enough_x_columns(ds, response, channels):
        st.stop()
    try:
        return page_problem(ds.df, response, ds.response_columns, split=split,
                            test_fraction=PAGE_DEFAULTS["test_fraction"], split_seed=PAGE_DEFAULTS["split_seed"],
                            x_columns=channels)
    except ValueError as err:
        st.error(f"{ds.name}: {err}")
        st.stop()
