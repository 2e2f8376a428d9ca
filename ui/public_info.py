"""The "Public information" panel: what the user declares public about one data set, declared once.

One vocabulary everywhere: a *range* for y (its lowest and highest possible values); the bound on |y| the
plain Analyze-Gauss fits need is derived from it, max(|lo|, |hi|), never asked for again. The row bound on
‖x‖ is the second declaration. Both are kept per data set and response in ``st.session_state["pl_public"]``
(a plain key: Streamlit drops a widget's state when a run does not draw it, e.g. paper mode or another page),
so strict -> paper -> strict, the strict estimator radio, edPLS -> DP-PCR keep what the user typed.

Widgets have page-scoped keys (``<page>_y_low_<origin>_<name>_<response>``, ``<page>_x_bound_<m>``); a widget
drawn anew takes its value from the store. Nothing here reads private rows: the defaults are documented
public defaults of a *sample* set (public data) or nothing for an upload.

The recommended strict estimator can do without a range: "none: estimate privately" (``allow_private``) gives
``y_range=None``, and the fit spends a share of its budget on a noisy histogram of y (its ``choices_`` and ledger
say so; ``private_range_note`` words it). There is no declared-public centre of y: ``StrictEDPLS`` takes the
midpoint of the range as the centre and has no separate parameter for it.

The range warning (``range_warning``) uses DP outputs only: the range of y the fit released (``y_range_``, the
private refinement of the declared range) or a released scale of y when the fit carries one.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

STORE = "pl_public"
#: The one vocabulary for the response's public range: every page that asks for it uses these labels.
Y_LOW_LABEL = "Lowest possible y"
Y_HIGH_LABEL = "Highest possible y"
#: A declared range wider than this many DP standard deviations of y gets a warning.
WIDE_RANGE_FACTOR = 20.0
#: A declared range wider than this many times the range the fit released privately gets a warning (a range's
#: width is about four standard deviations: the same threshold as ``WIDE_RANGE_FACTOR``).
WIDE_OVER_RELEASED = WIDE_RANGE_FACTOR / 4


@dataclass(frozen=True)
class PublicInfo:
    """The declarations of one data set: ``y_range`` (lo, hi), ``x_bound`` (None where the page does not use
    it) and ``range_note`` (where the range came from when it is the sample set's documented default)."""

    y_range: tuple | None
    x_bound: float | None
    range_note: str | None = None

    @property
    def y_bound(self) -> float:
        """The bound on |y| implied by the range: max(|lo|, |hi|) (a declared range only)."""
        if self.y_range is None:
            raise ValueError("no declared range of y (estimated privately): this fit needs one")
        return float(max(abs(v) for v in self.y_range))


def data_key(ds, response) -> str:
    """The store's key of one data set and response (a declaration never carries over to new data)."""
    return f"{ds.origin}_{ds.name}_{response}"


def _stored(key: str) -> dict:
    return st.session_state.setdefault(STORE, {}).setdefault(key, {})


def _number(where, label, widget_key, stored, default, **kw):
    """A number input whose value comes from the store when it is drawn anew (no Session-State warning)."""
    value = None if widget_key in st.session_state else (stored if stored is not None else default)
    return where.number_input(label, value=value, format="%.4g", key=widget_key, **kw)


def _range_inputs(page, ds, response, y, store) -> tuple:
    # imported here, as in public_info_panel: the pages that take only this module's labels and store (PCA-Gauss,
    # the attack lab) then do not import edPLS and chemotools (0.2 s of a restarted server's first PCA-Gauss tab)
    from engine.methods.edpls.pipeline import sample_y_range

    default = sample_y_range(y) if ds.origin == "sample" else (None, None)
    kept = store.get("y_range") or (None, None)
    c1, c2 = st.columns(2)
    where = data_key(ds, response)
    lo = _number(c1, Y_LOW_LABEL, f"{page}_y_low_{where}", kept[0], default[0],
                 help="The low end of the response's public range: from its physical range (e.g. 0 for a content "
                      "in % w/w), never from your data. The bound on |y| is derived from the range.")
    hi = _number(c2, Y_HIGH_LABEL, f"{page}_y_high_{where}", kept[1], default[1],
                 help="The high end of the response's public range: from its physical range (e.g. 100 for a "
                      "content in % w/w), never from your data.")
    store["y_range"] = (lo, hi)
    note = None
    if ds.origin == "sample" and (lo, hi) == tuple(default):
        note = ("default y range: [0, b] (or [-b, b] with negative values), b the power of ten above the public "
                "sample set's |y|")
    return lo, hi, note


PRIVATE_CHOICE = "none: estimate privately"


def _range_how(page: str, where: str, store: dict, allow_private: bool) -> bool:
    """Whether the range of y is estimated privately (kept in the store; only where the fit can do it)."""
    key = f"{page}_y_how_{where}"
    options = ("declared", "private")
    if not allow_private:
        if store.get("y_private"):
            st.caption("This fit needs a declared range of y (the private estimate is the recommended estimator's).")
        return False
    kw = {} if key in st.session_state else {"index": 1 if store.get("y_private") else 0}
    how = st.radio("Range of y", options, key=key, horizontal=True,
                   format_func={"declared": "declared public range", "private": PRIVATE_CHOICE}.get,
                   help="No range you can vouch for? The recommended estimator then spends a share of the budget on "
                        "a noisy histogram of y and uses the range it releases (in its choices and the ledger).",
                   **kw)
    store["y_private"] = how == "private"
    return store["y_private"]


def public_info_panel(page: str, ds, response: str, problem, *, x_bound: bool = True, extra=None,
                      allow_private: bool = False) -> PublicInfo:
    """Draw the panel and return the declarations (stops the page until a usable range is declared).

    ``x_bound``: ask for the row bound on ‖x‖ (the plain Analyze-Gauss fits and DP-PCR); ``extra``: a callable
    drawn inside the panel after the bounds (e.g. the recommended estimator's public spectra), its result is
    returned as the second value of a tuple when given. ``allow_private``: offer "none: estimate privately"
    (the recommended estimator's ``y_range=None``); the returned ``y_range`` is then None.
    """
    store = _stored(data_key(ds, response))
    box = st.container(border=True)
    with box:
        st.markdown("**Public information** (declared once for this data set: kept across modes, estimators "
                    "and pages)")
        if _range_how(page, data_key(ds, response), store, allow_private):
            st.caption("Range of y: none declared. The fit estimates it privately (a noisy histogram of y, a share "
                       "of the budget, in the ledger); the range it released is shown after the fit.")
            more = extra() if extra is not None else None
            info = PublicInfo(None, None, None)
            return info if extra is None else (info, more)
        lo, hi, note = _range_inputs(page, ds, response, problem.y, store)
        xb = None
        if x_bound:
            from engine.methods.edpls.pipeline import default_x_bound  # see _range_inputs

            m = len(problem.channels)
            kept = store.get("x_bound", {}).get(m)
            xb = _number(st, "Bound on ‖x‖ (row L2 norm)", f"{page}_x_bound_{m}", kept, default_x_bound(m),
                         min_value=1e-9, help="Default √m: assumes every channel lies in [-1, 1] (absorbance "
                         "units), an assumption about the instrument, not read from the data.")
            store.setdefault("x_bound", {})[m] = xb
        more = extra() if extra is not None else None
        if lo is None or hi is None:
            st.info("Enter the public range of y (the response's physical range, not read from your data) to fit.")
            st.stop()
        if not hi > lo:
            st.error(f"The public range of y must have its highest value above its lowest ({lo:g} ≥ {hi:g}): "
                     "change it in the Public information panel.")
            st.stop()
        st.caption(f"Bound on |y| used where a fit needs one: max(|{lo:g}|, |{hi:g}|) = "
                   f"{max(abs(lo), abs(hi)):g}.")
    info = PublicInfo((float(lo), float(hi)), None if xb is None else float(xb), note)
    return info if extra is None else (info, more)


def dp_scale(model) -> float | None:
    """A DP estimate of y's standard deviation the fit already released (None when it has none; 0 when the noisy
    variance was not positive)."""
    for name in ("y_scale_", "y_std_"):
        v = getattr(model, name, None)
        if v is not None:
            try:
                v = float(v)
            except (TypeError, ValueError):
                continue
            if v >= 0:
                return v
    return None


def released_range(model) -> tuple | None:
    """The range of y the fit released (``y_range_``: a DP output of the recommended estimator), or None."""
    rng = getattr(model, "y_range_", None)
    if rng is None:
        return None
    try:
        lo, hi = (float(v) for v in rng)
    except (TypeError, ValueError):
        return None
    return (lo, hi) if hi > lo else None


def private_range_note(model) -> str | None:
    """After a fit with no declared range: the range it estimated privately and how (its ``choices_``)."""
    rng = released_range(model)
    if rng is None:
        return None
    how = getattr(model, "choices_", {}).get("y_source", "a noisy histogram of y")
    return (f"Range of y estimated privately: {rng[0]:.4g} to {rng[1]:.4g} ({how}); it is a DP output of this fit, "
            "in its ledger and its shareable release.")


def range_warning(y_range, model) -> str | None:
    """A warning when the declared range is far wider than the fit's DP estimate of y's spread (DP outputs only:
    the range the fit released, else a released scale of y; nothing when the fit released neither or no range
    was declared)."""
    if y_range is None:
        return None
    width = float(y_range[1]) - float(y_range[0])
    released = released_range(model)
    if released is not None:
        inner = released[1] - released[0]
        if width <= WIDE_OVER_RELEASED * inner:
            return None
        return (f"The declared range of y ({y_range[0]:g} to {y_range[1]:g}, width {width:.4g}) is about "
                f"{width / inner:.0f} times the range this fit estimated privately ({released[0]:.4g} to "
                f"{released[1]:.4g}): the noise is scaled to the range, so a narrower public range (still from "
                "domain knowledge) would give a better model.")
    scale = dp_scale(model)
    if scale is None:
        return None
    if scale == 0:
        return (f"The fit's noisy moments cannot tell y's spread from zero: the noise, scaled to the declared range "
                f"of y ({y_range[0]:g} to {y_range[1]:g}), swamps the response. A narrower public range (from domain "
                "knowledge), more rows or a larger ε would give a useful model.")
    if width <= WIDE_RANGE_FACTOR * scale:
        return None
    return (f"The declared range of y ({y_range[0]:g} to {y_range[1]:g}, width {width:.4g}) is about "
            f"{width / scale:.0f} times the fit's private estimate of y's spread ({scale:.3g}): the noise is scaled "
            "to the range, so a narrower public range (still from domain knowledge) would give a far better model.")


def show_range_warning(y_range, model) -> None:
    text = range_warning(y_range, model)
    if text:
        st.warning(text)
