"""The edPLS page's chain builder (issue #31, item 3): the preprocessing steps in the order the user picks them.

One chain drives every fit of the page: the recommended strict estimator's ``preprocessing=`` (so its release
names the chain), the plain Analyze-Gauss strict fit, the paper-faithful fit and the non-private reference.
Which steps are offered depends on what keeps the guarantee:

- the recommended estimator: only row-wise steps that learn nothing from the rows (``CHAIN_INFO``'s
  ``learns_from_data`` False); a step that learns from the private rows is not offered (the estimator refuses it);
- the plain strict fit: every step; those that learn from the private rows are marked "not proven" (the fit's
  report and ledger say so: ``ui.edpls.exports.STRICT_LEAKY_CHAIN``);
- paper-faithful mode: every step (the mode proves nothing anyway).

The chain is kept in ``st.session_state`` under the widget's key, so it survives strict -> paper -> strict and the
estimator radio, and in ``ui.state``'s kept values, so it survives a visit to another page; a step the current
fit does not offer is dropped with a note. Widgets only: the chains are
``engine.data.preprocess``.
"""
from __future__ import annotations

import streamlit as st

from engine.data.preprocess import CHAIN_INFO, chain_names
from ui.state import keep, restore

KEY = "edpls_chain_steps"
#: The recommended estimator's measured default chain (``StrictEDPLS``'s ``preprocessing``).
RECOMMENDED_DEFAULT = ["snv", "sg1"]


def _offered(strict: bool, recommended: bool) -> list[str]:
    steps = [s for s in chain_names() if s != "none"]
    if strict and recommended:
        return [s for s in steps if not CHAIN_INFO.get(s, {}).get("learns_from_data")]
    return steps


def _label(strict: bool):
    def label(step: str) -> str:
        if strict and CHAIN_INFO.get(step, {}).get("learns_from_data"):
            return f"{step} (learns from the private rows: not proven)"
        return step
    return label


def chain_builder(strict: bool, recommended: bool, default_chain: str = "none") -> str:
    """The chain's name ("snv+sg1", "none") from an ordered multiselect: the first step picked runs first."""
    offered = _offered(strict, recommended)
    restore(KEY)  # Streamlit drops the widget's state on another page: the chain comes back (ui.state)
    kept = st.session_state.get(KEY)
    if kept is not None:
        dropped = [s for s in kept if s not in offered]
        if dropped:
            st.session_state[KEY] = [s for s in kept if s in offered]
            st.caption(f"Dropped from the chain: {', '.join(dropped)} (it learns from the private rows, which the "
                       "recommended estimator refuses: it would break the guarantee).")
        kw = {}
    else:
        default = RECOMMENDED_DEFAULT if strict and recommended else [s for s in default_chain.split("+") if s in
                                                                      offered]
        kw = {"default": default}
    steps = st.multiselect(
        "Preprocessing chain (steps in the order picked)", offered, key=KEY, format_func=_label(strict),
        help="Each step runs on the output of the one before it, in the order you picked them (remove and pick "
             "again to reorder); empty: no preprocessing. The private model, its shareable release and the "
             "non-private reference all use this chain."
             + (" Only row-wise steps that learn nothing from your rows are offered: they keep the guarantee."
                if strict and recommended else ""), **kw)
    keep(KEY, list(steps))
    chain = "+".join(steps) if steps else "none"
    st.caption(f"Chain: {' → '.join(steps) if steps else 'none'}.")
    return chain


def chain_info(chain: str) -> dict:
    """What the chain learns from the training rows (``CHAIN_INFO`` of each step, merged): ``learns_from_data``
    is True when any step learns, and the notes of those steps are joined."""
    parts = [p for p in chain.split("+") if p]
    learning = [CHAIN_INFO[p] for p in parts if CHAIN_INFO.get(p, {}).get("learns_from_data")]
    if not learning:
        return dict(CHAIN_INFO.get(chain, {"learns_from_data": False, "learned": "", "strict_note": ""}))
    return {"learns_from_data": True, "learned": "; ".join(i["learned"] for i in learning),
            "strict_note": " ".join(i["strict_note"] for i in learning)}
