"""Privacy audit: run a release many times on neighbouring data and bound its epsilon from below."""
import math

import pandas as pd
import streamlit as st

from engine.methods.audit_catalog import AUDIT_TARGETS, DEFAULT_TRIALS, PAGE_BUGS, make_case, plants_bugs, target_label
from engine.privacy.audit import AUDIT_CONFIDENCE, epsilon_lower_bound
from engine.reporting.report import DataInfo, RunReport
from ui.budget import budget_picker
from ui.exports import export_bar, owner_secret, show_chart, tables_csv
from ui.figures.report import report_figure
from ui.privacy_audit.figures import audit_bound_figure, audit_histogram_figure
from ui.progress import Sweep
from ui.setting_errors import setting_error

QUANTILES = [0.0, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1.0]
TRIAL_OPTIONS = sorted({10_000, 20_000, 50_000, DEFAULT_TRIALS, 200_000, 500_000, 1_000_000, 3_000_000})
CONFIDENCE_TEXT = f"{100 * AUDIT_CONFIDENCE:g} %"

#: Page keys of the planted bugs ("none" for no bug: a selectbox option cannot be None).
BUG_LABELS = {(key or "none"): label for key, label in PAGE_BUGS.items()}


def intro() -> None:
    st.caption(
        "We tried to break each release: it is run many times on two neighbouring data sets (one row "
        "added, removed or replaced, chosen as the worst case for the method), every output is reduced "
        "to one number, and the best threshold test between the two sets gives a lower bound on ε that "
        f"holds with {CONFIDENCE_TEXT} confidence (Clopper-Pearson). A bound above the claim proves the claim wrong; "
        "a "
        "bound below it only says this attack did not break it."
    )


def target_section(budget) -> tuple[str, str]:
    """What to audit, and in which mode (the target's own mode when it lacks the sidebar's)."""
    labels = {key: label for key, (label, _) in AUDIT_TARGETS.items()}
    target = st.selectbox("What to audit", list(labels), format_func=labels.get, key="audit_target")
    modes = AUDIT_TARGETS[target][1]
    mode = budget.mode if budget.mode in modes else modes[0]
    if mode != budget.mode:
        st.info(f"{labels[target]} has only {mode} mode here; auditing that (the sidebar says {budget.mode}).")
    st.markdown(f"**Mode: {mode}.** " + (
        "Strict mode claims a proven (ε, δ): the audit must stay below it." if mode == "strict" else
        "Paper mode reproduces the published method: its ε is stated, not proven, and data-dependent "
        "bounds can let the audit exceed it."))
    return target, mode


def trial_settings(target: str, mode: str) -> tuple[str, int, int]:
    col1, col2 = st.columns(2)
    can_plant = mode == "strict" and plants_bugs(target)
    bug = col1.selectbox("Planted bug (strict mode; shows the auditor has teeth)", list(BUG_LABELS),
                         format_func=BUG_LABELS.get, key="audit_bug", disabled=not can_plant,
                         help="The shipped release with a bug planted where it draws its noise (only inside this "
                              "audit: no other page or session sees it). At the default budget (ε = 1) and the "
                              f"default {DEFAULT_TRIALS:,} trials the audit catches the bugs scaled by 4; the "
                              "halved ones are subtler and need about a million trials.")
    if not can_plant:
        bug = "none"
    trials = col2.select_slider("Trials per data set", options=TRIAL_OPTIONS, value=DEFAULT_TRIALS,
                                format_func=lambda n: f"{n:,}", key="audit_trials",
                                help="Half choose the test, half evaluate it. About a second per 100,000 trials "
                                     "(more for larger releases).")
    seed = st.number_input("Simulation seed (the audit's trials)", min_value=0, value=0, step=1, key="audit_seed",
                           help="Fixes the random draws of this simulation (the release run many times on generated "
                                "data) so that an audit can be repeated. It is not the noise of anything you "
                                "release: the method pages always draw their noise fresh.")
    return bug, trials, seed


#: Where each setting an audit's setup message can be about is on this page (ui.setting_errors), by its label.
SETTING_PLACES = (
    (("bug",), "in 'Planted bug (strict mode; shows the auditor has teeth)'"),
    (("mode",), "in the sidebar's privacy mode"),
    (("epsilon", "delta", "ε", "δ"), "in 'ε (epsilon)' or 'δ (delta)' in the sidebar"),
)
SETTINGS_FALLBACK = "The settings are 'What to audit', 'Planted bug (strict mode; shows the auditor has teeth)' and " \
                    "the sidebar's budget."


def run_section(budget, target: str, mode: str, bug: str, trials: int, seed: int) -> None:
    audit_run = Sweep("audit", "audit")
    if st.button("Run audit", type="primary", key="audit_run"):
        try:
            case = make_case(target, mode, budget.epsilon, budget.delta,
                             None if bug == "none" or mode != "strict" else bug)
        except ValueError as err:
            setting_error("Cannot audit this choice", err, SETTING_PLACES, SETTINGS_FALLBACK)
        else:
            with audit_run.running("running the release on D and D′ ...") as bar:
                res = epsilon_lower_bound(case.release, case.D, case.D_prime, case.delta, int(trials), int(seed),
                                          alpha=1 - AUDIT_CONFIDENCE, chunk=max(1, int(trials) // 10),
                                          progress=lambda f: bar.progress(min(1.0, f),
                                                                          text=f"{100 * f:.0f}% of the trials"))
            st.session_state["audit_result"] = {"case": case, "result": res, "seed": int(seed),
                                                "title": target_label(target)}


def verdict_section(case, res) -> bool:
    """The audit's verdict against the claim; returns whether the bound exceeds it."""
    exceeded = res.epsilon_lb > case.claimed_eps
    if exceeded and case.mode == "strict":
        st.error("The audit **exceeds the claimed ε**: this release is not as private as it says"
                 + (f" (planted bug: {PAGE_BUGS.get(case.bug, case.bug)}: caught)." if case.bug else "."))
    elif exceeded:
        st.warning("The audit **exceeds the stated ε**: paper mode's data-dependent noise does not give the "
                   "guarantee it states.")
    elif case.bug:
        st.warning("The planted bug was not caught at this number of trials: try more trials.")
    else:
        st.success("The audit stays below the claim (no violation found; this is evidence, not a proof).")
    return exceeded


def confidence_text(res) -> str:
    return f"{100 * res.confidence:g} %"


def audit_title(case, title: str) -> str:
    """The human heading of an audit: the target's title, its mode and the planted bug if any."""
    bug = f", planted bug: {PAGE_BUGS.get(case.bug, case.bug)}" if case.bug else ""
    return f"{title} ({case.mode} mode{bug})"


def results_section(case, res, title: str) -> bool:
    st.subheader(f"Audit: {audit_title(case, title)}")
    c1, c2, c3 = st.columns(3)
    claim_text = "no guarantee (∞)" if math.isinf(case.claimed_eps) else f"{case.claimed_eps:.3g}"
    c1.metric(f"Claimed ε (δ = {case.delta:.1e})", claim_text)
    c2.metric(f"Audited ε lower bound ({confidence_text(res)} confidence)", f"{res.epsilon_lb:.3f}")
    c3.metric("Trials per data set", f"{res.n_trials:,}")
    exceeded = verdict_section(case, res)
    st.caption(f"Neighbours: {case.neighbours}. Release: {case.note}. Test: statistic '{res.statistic}', "
               f"threshold {res.threshold:.4g}, rejection rates {res.rate_num:.3g} vs {res.rate_den:.3g} "
               f"(point estimate of the bound {res.eps_point:.3g}).")
    show_chart(st, audit_histogram_figure(res.stat_D, res.stat_D_prime, res.threshold, statistic=res.statistic,
                                          title=f"Release outputs on neighbouring data sets: {title}"),
               f"histogram_{case.method}", page="privacy_audit")
    if math.isfinite(case.claimed_eps):
        show_chart(st, audit_bound_figure([audit_title(case, title)], [case.claimed_eps], [res.epsilon_lb],
                                          confidence=res.confidence), f"bound_{case.method}", page="privacy_audit")
    return exceeded


def export_section(case, res, exceeded: bool, seed: int, stored: dict, title: str) -> None:
    # The audit runs on generated worst-case neighbours D and D′, not on anyone's data: its settings and results
    # are public and go into the shareable report; the simulation seed and the trial statistics go to the workbook.
    bug_text = PAGE_BUGS.get(case.bug, case.bug)
    row = {"release": audit_title(case, title), "method": case.method, "mode": case.mode, "planted bug": bug_text,
           "claimed epsilon": case.claimed_eps, "delta": case.delta, "epsilon lower bound": res.epsilon_lb,
           "point estimate": res.eps_point, "confidence": confidence_text(res), "trials per data set": res.n_trials,
           "statistic": res.statistic, "threshold": res.threshold, "rejection rate (numerator)": res.rate_num,
           "rejection rate (denominator)": res.rate_den, "exceeds the claim": bool(exceeded)}
    report = RunReport(
        page="privacy_audit", method=f"Privacy audit: {audit_title(case, title)}",
        data=DataInfo.from_parts(f"neighbouring data sets D and D′ of {title}", "generated (worst case)",
                                 [case.D, case.D_prime], shape=(), note=f"Neighbours: {case.neighbours}.",
                                 owner_secret=owner_secret()),
        preprocessing="none",
        parameters={**row, "simulation seed (audit trials, not a release's noise)": stored.get("seed", int(seed))},
        public_parameters=row, mode=None,
        figures=report_figure("histogram", audit_histogram_figure(res.stat_D, res.stat_D_prime, res.threshold,
                                                                  statistic=res.statistic,
                                                                  title=f"Release outputs: {title}"), shareable=True),
        mode_text=(f"**Audit of a deliberately broken release ({bug_text}).** The planted bug removes the "
                   "guarantee the mode would give: this release is not (ε, δ)-DP, and the audit is there to "
                   "catch that." if case.bug else
                   f"**An audit releases nothing from private data.** It runs the {case.mode}-mode release many "
                   "times on generated worst-case neighbours D and D′; the lower bound is evidence about the "
                   "release's claim (a bound above the claim disproves it), not a guarantee."),
        notes=[f"Release: {case.note}."])
    export_bar(report, no_release_reason="an audit fits no model; it runs the release many times on two generated "
                                         "neighbouring data sets (its settings and results are in the shareable "
                                         "report).",
               # generated neighbours only, no private data: the tables are shareable and there is no owner's workbook
               public_tables=lambda: tables_csv({"trial statistics (quantiles)": pd.DataFrame(
                   {"quantile": QUANTILES, "statistic on D": pd.Series(res.stat_D).quantile(QUANTILES).to_numpy(),
                    "statistic on D′": pd.Series(res.stat_D_prime).quantile(QUANTILES).to_numpy()})}))


def main() -> None:
    intro()
    budget = budget_picker("audit", modes=("strict", "paper"), show_calibration=False)
    target, mode = target_section(budget)
    bug, trials, seed = trial_settings(target, mode)
    run_section(budget, target, mode, bug, trials, seed)
    stored = st.session_state.get("audit_result")
    if stored is None:
        st.caption("Pick a target and press **Run audit**.")
        return
    case, res = stored["case"], stored["result"]
    title = stored.get("title", case.name)
    exceeded = results_section(case, res, title)
    export_section(case, res, exceeded, seed, stored, title)
