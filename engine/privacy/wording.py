"""The sentences that state what a privacy mode and a ledger guarantee.

One source for the dashboard (``ui.budget``, ``ui.ledger_view``), the pages' labels and the run report
(``engine.reporting.report``), so a download says exactly what the page said.

- :func:`ledger_text`: one headline guarantee per result, "Guarantee: (ε, δ)-differential privacy per
  <unit> (<neighbouring relation>), proven" or "…, not proven: <reasons>". The (ε, δ) is the tightest
  *valid* total of the fit's own ledger (:func:`headline_total`): the privacy-loss-distribution (PLD)
  total when computed, else the smallest of the other valid accountants'; the others are listed by
  :func:`accountants_frame` (the ledger expander), never beside the headline.
- The unit: ``PrivacyLedger.unit`` ("" = one row), so a per-value ledger never reads as a per-series one.
- :data:`NEIGHBOURING_NOTE` / :data:`NEIGHBOURING_DETAIL`: why ε under replace-one is not comparable to
  ε under add/remove without a factor of about two.
- :func:`paper_label`: the one label of a paper-faithful result ("claimed ε = 1 per release (not valid;
  audit finds ε ≥ 11.1)") for legends, titles and reports, from the stored audit figures
  :data:`PAPER_AUDITS` (measured, with their provenance; never computed on page load).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .ledger import Neighbouring, PrivacyLedger

__all__ = [
    "ACCOUNTANT_NAMES",
    "MODE_TEXT",
    "NEIGHBOURING_DETAIL",
    "NEIGHBOURING_NOTE",
    "PAPER_AUDITS",
    "PaperAudit",
    "accountants_frame",
    "format_delta",
    "guarantee_unit",
    "headline_total",
    "ledger_text",
    "neighbouring_text",
    "paper_audit",
    "paper_audit_source",
    "paper_claim",
    "paper_label",
    "plural",
    "status_label",
]

MODE_TEXT = {
    "strict": (
        "**Strict mode** is built to be provably (ε, δ)-differentially private: rows are clipped to "
        "public bounds you declare, the noise is fresh and calibrated to a sensitivity that holds for "
        "every data set, and every release of the fit together stays inside the one (ε, δ) shown. "
        "Whether a given fit is proven is stated beside it, from its own ledger."
    ),
    "paper": (
        "**Paper-faithful mode** reproduces the published algorithm, weak points included: "
        "its sensitivity bounds are computed from the private data and each release is given "
        "the full (ε, δ). Where the privacy audit has measured it, the ε it claims per release is not "
        "valid: the audit finds a larger ε (each result's label says how much). The totals shown are what "
        "the paper's noise would cost "
        "*if* its bounds held; they are not a proven guarantee."
    ),
}

#: The neighbouring relations in words (``PrivacyLedger.neighbouring``).
_RELATION = {Neighbouring.ADD_REMOVE: "added or removed", Neighbouring.REPLACE_ONE: "replaced by another"}

NEIGHBOURING_NOTE = (
    "ε values are comparable only under the same neighbouring relation: replacing one row is removing one and "
    "adding another, so a guarantee of ε under *add or remove one row* gives about twice that ε under *replace "
    "one row*."
)
NEIGHBOURING_DETAIL = (
    "A differential-privacy guarantee says how much one person's data can change what is released. "
    "*Which* change is fixed by the neighbouring relation:\n\n"
    "- **Add or remove one row** (edPLS, DP-PCR, the attack lab): the two data sets differ by one row being "
    "present or absent. The number of rows itself is then private.\n"
    "- **Replace one row** (DP-CCA, PCA-Gauss, VAR-ADMM's noise defence): the two data sets have the same number "
    "of rows and differ in the contents of one. The number of rows is public.\n\n"
    "Replacing a row is one removal followed by one addition, so a release that is ε-DP under add/remove is "
    "about 2ε-DP under replace-one (exactly: (2ε, (1 + e^ε)·δ)). Comparing edPLS at ε = 1 with DP-CCA at ε = 1 "
    "therefore compares two different promises: to put them on one scale, double the add/remove ε (a replace-one "
    "guarantee gives no add/remove guarantee at all: it assumes the number of rows is public). Each ledger states "
    "the relation it was computed for."
)

#: Accountants in words (the keys of :func:`engine.privacy.ledger.ledger_totals`).
ACCOUNTANT_NAMES = {
    "pld": "privacy-loss distribution (numerical, tight)",
    "gdp": "exact composition of Gaussian noise",
    "zcdp": "zero-concentrated DP conversion",
    "basic": "adding up every release's ε and δ",
}


def plural(n: int, word: str, many: str | None = None) -> str:
    """"1 release", "2 releases" (``many``: an irregular plural)."""
    n = int(n)
    return f"{n} {word if n == 1 else (many or word + 's')}"


def format_delta(d: float) -> str:
    """1e-05 -> "1e-5", 0 -> "0", 0.0123 -> "0.012"."""
    if d == 0:
        return "0"
    text = f"{d:.2g}"
    return text.replace("e-0", "e-").replace("e+0", "e+")


def _fmt_eps(e: float) -> str:
    return "∞" if e == math.inf else f"{e:.4g}"


def guarantee_unit(ledger: PrivacyLedger) -> str:
    """What the guarantee protects, as a noun ("row", "owner's whole series", ...)."""
    return str(getattr(ledger, "unit", "") or "row")


def neighbouring_text(ledger: PrivacyLedger) -> str:
    """"per row (one row added or removed)" / "per owner's whole series (one owner's whole series replaced
    by another)": the unit and the neighbouring relation of the ledger."""
    unit = guarantee_unit(ledger)
    relation = _RELATION[ledger.neighbouring]
    return f"per {unit} (one {unit} {relation})"


def headline_total(summary: dict[str, Any], delta: float | None = None) -> tuple[float, float, str]:
    """The tightest valid total of a ledger summary (``ledger_totals(..., pld=True)`` or ``ledger.summary``).

    Returns (epsilon, delta, accountant key). The PLD total when computed; else the smallest ε among the
    valid ones at the summary's δ: zCDP, the exact Gaussian composition ("gdp", present only for
    Gaussian-only ledgers) and the basic sum when its δ is no larger. A basic total with δ = 0 (pure
    ε-DP, e.g. one Laplace release) is preferred when its ε is within 0.1 % of the chosen one: the same ε
    at δ = 0 is the stronger statement.
    """
    pairs: dict[str, tuple[float, float]] = {k: (float(summary[k][0]), float(summary[k][1]))
                                             for k in ("pld", "gdp", "zcdp", "basic")
                                             if k in summary}
    if not pairs:
        raise ValueError("the summary holds no total (nothing was released with noise)")
    d = delta if delta is not None else next((pairs[k][1] for k in ("pld", "gdp", "zcdp") if k in pairs), None)
    if "pld" in pairs:
        key = "pld"
    else:
        valid: list[str] = [k for k in ("gdp", "zcdp") if k in pairs]
        if "basic" in pairs and (d is None or pairs["basic"][1] <= d):
            valid.append("basic")
        key = min(valid, key=lambda k: pairs[k][0])
    eps, dl = pairs[key]
    if "basic" in pairs and pairs["basic"][1] == 0 and pairs["basic"][0] <= eps * 1.001:
        key = "basic"
        eps, dl = pairs["basic"]
    return eps, dl, key


def _accountant_phrase(key: str, summary: dict[str, Any]) -> str:
    if key in ("pld", "gdp") and "gdp" in summary:  # Gaussian-only: the PLD total is the exact Gaussian composition
        return "totalled by the exact composition of Gaussian noise"
    if key == "basic" and float(summary["basic"][1]) == 0:
        return "pure ε-DP with δ = 0"
    return {"pld": "totalled by the privacy-loss distribution, the tightest valid total",
            "zcdp": "totalled through zero-concentrated DP",
            "basic": "every release's ε and δ added up"}[key]


def ledger_text(ledger: PrivacyLedger, delta: float | None = None, summary: dict[str, Any] | None = None) -> str:
    """One headline guarantee, stated once: the tightest valid total, its unit, and whether it is proven.

    summary: ``ledger.summary(delta)`` when the caller has it already (the PLD total is not free).
    The other accountants' totals are in :func:`accountants_frame`, not in this sentence.
    """
    if not len(ledger):
        return "No private release: these results carry no differential-privacy guarantee (ε = ∞)."
    s = ledger.summary(delta) if summary is None else summary
    eps, d, key = headline_total(s, delta)
    head = (f"**Guarantee: (ε = {_fmt_eps(eps)}, δ = {format_delta(d)})-differential privacy "
            f"{neighbouring_text(ledger)}")
    n = int(s.get("n_releases", len(ledger)))
    what = f"{plural(n, 'noisy release')}, {_accountant_phrase(key, s)}"
    if s["status"] == "proven":
        return head + (f", proven.** {what[0].upper() + what[1:]}. This is a proven guarantee: every sensitivity "
                       "comes from public bounds and the noise is fresh.")
    reasons = "; ".join(r.removeprefix("not proven: ") for r in s.get("reasons_not_proven", []))
    return head + (f", not proven.** These totals are **not** a proven guarantee: {reasons or 'see the ledger'} "
                   f"({what}).")


def accountants_frame(ledger: PrivacyLedger, delta: float | None = None, summary: dict[str, Any] | None = None
                      ) -> pd.DataFrame:
    """Every accountant's total of the ledger, one row each, the headline's marked (for the ledger expander).

    Columns: accountant, ε, δ, "valid for this ledger", "headline".
    """
    if not len(ledger):
        return pd.DataFrame(columns=["accountant", "ε", "δ", "valid for this ledger", "headline"])
    s = ledger.summary(delta) if summary is None else summary
    *_, key = headline_total(s, delta)
    rows = []
    for k in ("pld", "gdp", "zcdp", "basic"):
        if k not in s:
            continue
        valid = ("yes" if k != "gdp" else "yes (Gaussian noise only)")
        rows.append({"accountant": ACCOUNTANT_NAMES[k], "ε": float(s[k][0]), "δ": float(s[k][1]),
                     "valid for this ledger": valid, "headline": "← headline" if k == key else ""})
    if "gdp" not in s:
        rows.append({"accountant": ACCOUNTANT_NAMES["gdp"], "ε": math.nan, "δ": math.nan,
                     "valid for this ledger": "no (not every release adds Gaussian noise)", "headline": ""})
    return pd.DataFrame(rows)


def status_label(ledger: PrivacyLedger | None) -> str:
    """The short label of a fit's guarantee, from its own ledger: "proven", "not proven" or "no privacy"."""
    return "no privacy" if ledger is None else ledger.status


# --------------------------------------------------------------------------- paper mode
@dataclass(frozen=True)
class PaperAudit:
    """One stored audit of a paper-faithful release: the claimed ε and the lower bound the audit found."""

    method: str
    claimed_epsilon: float
    delta: float
    epsilon_lb: float
    setting: str


#: The audit's settings shared by every stored figure below (their provenance).
PAPER_AUDIT_PROTOCOL = ("catalogue audit (engine.methods.audit_catalog.make_case(method, 'paper', ε, 1e-5), "
                        "engine.privacy.audit.run_case with 1,000,000 trials per data set, random_state 0, "
                        "99 % confidence (Clopper-Pearson, alpha = 0.01)); measured on 2026-11-24 at commit "
                        "e8865df")

_EDPLS = "edPLS, first noisy weight vector, noise std σ; neighbours: one outlier row added (3× the largest ‖x‖·|y|)"
_CCA = "DP-CCA, the one noisy moment matrix; neighbours: one row replaced by an outlier (5× the largest row norm)"
_PCA = ("PCA-Gauss, Lap-PCA covariance at the printed scale (M = 2 columns) of a real paper-mode fit, whose "
        "centre and scale come from the private rows; neighbours: one row replaced (all ones -> alternating signs); "
        "measured again on 2026-11-27 when the audit began to drive the fit itself (issue 28)")

#: Stored, measured lower bounds on the true ε of one paper-mode release at a claimed ε (see
#: :data:`PAPER_AUDIT_PROTOCOL`; the bounds near 11 are the most 10^6 trials can show: the true ε is larger).
#: Reproduce one: ``run_case(make_case("edpls", "paper", 1.0, 1e-5), 1_000_000, 0, alpha=0.01)["eps_lb"]``.
PAPER_AUDITS = tuple(
    PaperAudit(method, eps, 1e-5, lb, setting)
    for method, setting, pairs in (
        ("edpls", _EDPLS, ((0.1, 11.08), (0.3, 11.08), (1.0, 11.08), (3.0, 11.08), (10.0, 11.08))),
        ("dp_cca", _CCA, ((0.1, 0.339), (0.3, 1.28), (1.0, 4.82), (3.0, 10.7), (10.0, 11.46))),
        ("pca_gauss", _PCA, ((0.1, 0.24), (0.3, 0.765), (1.0, 2.57), (3.0, 7.2), (10.0, 11.45))),
    )
    for eps, lb in pairs
)


def paper_audit(method: str, epsilon: float) -> tuple[PaperAudit | None, bool]:
    """The stored audit for a paper-mode result: (audit, exact), exact when it was measured at this very
    claimed ε. Otherwise, among the stored audits that exceeded their claim: the one whose claimed ε is
    nearest on a log scale when ε lies inside the measured range, else the one that exceeded its claim by
    the largest factor (None when the method has none)."""
    found = [a for a in PAPER_AUDITS if a.method == method]
    for a in found:
        if math.isclose(a.claimed_epsilon, float(epsilon), rel_tol=1e-9):
            return a, True
    informative = [a for a in found if a.epsilon_lb > a.claimed_epsilon]
    if not informative or not (epsilon > 0 and math.isfinite(epsilon)):
        return None, False
    claims = [a.claimed_epsilon for a in informative]
    if min(claims) <= epsilon <= max(claims):
        return min(informative, key=lambda a: abs(math.log(a.claimed_epsilon / float(epsilon)))), False
    return max(informative, key=lambda a: a.epsilon_lb / a.claimed_epsilon), False


def _audit_clause(method: str | None, epsilon: float | None) -> str:
    """"not valid; audit finds ε ≥ X" (measured at this claimed ε), "not valid; at a claimed ε = e the audit
    finds ε ≥ X" (measured at another: always so for ``epsilon=None``, an axis of several ε), or "not valid: its
    noise is scaled by the private data" (no stored audit)."""
    audit, exact = paper_audit(method, 1.0 if epsilon is None else epsilon) if method else (None, False)
    if audit is None:
        return "not valid: its noise is scaled by the private data"
    if epsilon is not None and exact and audit.epsilon_lb > audit.claimed_epsilon:
        return f"not valid; audit finds ε ≥ {audit.epsilon_lb:.3g}"
    return f"not valid; at a claimed ε = {audit.claimed_epsilon:g} the audit finds ε ≥ {audit.epsilon_lb:.3g}"


def paper_claim(epsilon: float | None, method: str | None = None) -> str:
    """"claimed ε = 1 per release (not valid; audit finds ε ≥ 11.1)"; ``epsilon=None``: "claimed ε per release
    (…)" for an axis or a legend that spans several ε (the audit figure then names its own claimed ε)."""
    eps = "ε" if epsilon is None else f"ε = {epsilon:g}"
    return f"claimed {eps} per release ({_audit_clause(method, epsilon)})"


def paper_label(title: str, epsilon: float | None, method: str | None = None) -> str:
    """The one label of a paper-faithful result, for legends, titles and reports.

    "edPLS paper mode: claimed ε = 1 per release (not valid; audit finds ε ≥ 11.1)". ``method`` is the
    audit catalogue's key ("edpls", "dp_cca", "pca_gauss"; None: no stored audit applies, e.g. another
    noise variant); without a stored audit at this ε the nearest stored one is named with its own claimed ε;
    without any, the label says "not valid" and why. ``epsilon=None``: a label for several ε (a sweep's legend).
    """
    return f"{title} paper mode: {paper_claim(epsilon, method)}"


def paper_audit_source(method: str, epsilon: float) -> str:
    """Where a paper label's audit figure comes from (one sentence, for a caption or a report note)."""
    audit, exact = paper_audit(method, epsilon)
    if audit is None:
        return "No stored audit of this paper-mode release: its claim is not valid because its noise is scaled by " \
               "the private data."
    at = "this claimed ε" if exact else f"a claimed ε = {audit.claimed_epsilon:g}"
    return (f"The audit figure is a stored measurement at {at}, δ = {format_delta(audit.delta)}: {audit.setting}; "
            f"{PAPER_AUDIT_PROTOCOL}. It is a lower bound: the true ε can only be larger.")
