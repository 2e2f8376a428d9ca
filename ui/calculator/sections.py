"""Noise & budget calculator: widgets -> engine.privacy -> figures."""
import numpy as np
import pandas as pd
import streamlit as st

from engine.privacy.calculator import compose_identical_gaussian, per_release_sigma_table, sigma_curve
from engine.privacy.calibration import gaussian_epsilon
from engine.privacy.wording import ACCOUNTANT_NAMES, plural
from engine.reporting.report import RunReport
from ui.budget import budget_picker
from ui.calculator.figures import sigma_curve_figure
from ui.exports import export_bar, show_chart, tables_csv
from ui.figures.report import report_figure
from ui.tables import human_headers


def intro() -> None:
    st.caption(
        "How much noise a budget buys, and what many releases cost together. Gaussian noise is "
        "calibrated with the analytic Gaussian mechanism (Balle & Wang 2018); totals come from basic "
        "composition, zCDP, the PLD accountant of Google's dp-accounting, and exact Gaussian composition."
    )


def epsilon_text(eps: float) -> str:
    if eps == float("inf"):
        return "no finite ε at this δ"
    return f"{eps:.5g}"


def inverse_section(budget, sens: float, one) -> tuple[float, float]:
    """The inverse: the smallest ε the Gaussian mechanism with a typed σ satisfies at the budget's δ."""
    st.markdown("**The other way round: which ε does a given σ buy?** Type the standard deviation of the "
                "Gaussian noise; the page gives the smallest ε for which that noise, on a query of sensitivity Δ, "
                f"is (ε, δ = {budget.delta:.1e})-differentially private (exact, analytic Gaussian).")
    c1, c2 = st.columns(2)
    sigma = float(c1.number_input("Noise σ (standard deviation)", min_value=1e-9,
                                  value=float(f"{one['analytic_sigma']:.4g}"), format="%.6g", key="calc_sigma_inv"))
    eps = gaussian_epsilon(sigma, budget.delta, sens)
    c2.metric(f"Smallest ε at σ = {sigma:.4g}", epsilon_text(eps),
              help=f"At δ = {budget.delta:.1e} and sensitivity Δ = {sens:g} (exact, analytic Gaussian).")
    return sigma, eps


def one_release(budget, sens: float):
    """σ for one release at the budget, σ against ε, and the inverse; returns the curve, the budget's row and
    the inverse's (σ, ε)."""
    st.subheader("One release")
    curve = sigma_curve(np.geomspace(0.05, 50, 60), budget.delta, sens)
    one = sigma_curve([budget.epsilon], budget.delta, sens).iloc[0]
    c1, c2, c3 = st.columns(3)
    c1.metric("Analytic Gaussian σ", f"{one['analytic_sigma']:.5g}")
    c2.metric("Classic Gaussian σ",
              "not proven for ε > 1" if np.isnan(one["classic_sigma"]) else f"{one['classic_sigma']:.5g}")
    c3.metric("Laplace scale b (Δ read as L1)", f"{one['laplace_scale']:.5g}")
    inverse = inverse_section(budget, sens, one)
    show_chart(st, sigma_curve_figure(curve, sens, budget.delta, chosen=(budget.epsilon, one["analytic_sigma"]),
                                      inverse=inverse), "sigma_vs_epsilon", page="calculator")
    return curve, one, inverse


def many_releases(budget, sens: float, k: int, one) -> tuple:
    """The whole budget split over k releases, and the total of k full-budget releases."""
    st.subheader(plural(k, "release").capitalize())
    st.markdown(f"**Spend the whole (ε = {budget.epsilon:g}, δ = {budget.delta:.1e}) over {plural(k, 'release')}:** "
                "σ each release needs.")
    split_table = per_release_sigma_table(budget.epsilon, budget.delta, sens, k)
    st.dataframe(human_headers(split_table), hide_index=True)
    st.markdown(
        "**Or give each release the full (ε, δ)** (what some papers do): the total actually spent is"
    )
    tot = compose_identical_gaussian(one["analytic_sigma"], sens, k, budget.delta, min(0.5, k * budget.delta))
    st.dataframe(
        [{"accounting": ACCOUNTANT_NAMES.get(m, m), "total ε": e, "at δ": d} for m, (e, d) in tot.items()],
        hide_index=True,
    )
    return split_table, tot


def downloads(budget, sens: float, k: int, curve, one, split_table, tot, inverse) -> None:
    st.subheader("Downloads")
    # Everything on this page is computed from the numbers typed above (ε, δ, Δ, k): no private data is read, so
    # the results are public and go into the shareable report with the inputs.
    sigma_rows = {f"σ per release over {plural(k, 'release')}, {r['accounting']}": r["sigma_per_release"]
                  for r in split_table.to_dict("records")}
    totals = {f"total ε of {plural(k, 'full-budget release')}, {ACCOUNTANT_NAMES.get(m, m)} (at δ = {d:.2g})": e
              for m, (e, d) in tot.items()}
    report = RunReport(
        page="calculator", method="Noise & budget calculator",
        parameters={"epsilon": budget.epsilon, "delta": budget.delta, "L2 sensitivity Δ": sens, "releases k": k},
        public_parameters={
            "epsilon": budget.epsilon, "delta": budget.delta, "L2 sensitivity Δ": sens, "releases k": k,
            "analytic Gaussian σ, one release (computed)": one["analytic_sigma"],
            "classic Gaussian σ, one release (computed)": "not proven for ε > 1" if np.isnan(one["classic_sigma"])
            else one["classic_sigma"],
            "Laplace scale b, one release (computed)": one["laplace_scale"],
            "σ typed for the inverse": inverse[0],
            "smallest ε at that σ, analytic Gaussian (computed)": epsilon_text(inverse[1]),
            **{f"{name} (computed)": v for name, v in {**sigma_rows, **totals}.items()}},
        mode=None, figures=report_figure("σ against ε", sigma_curve_figure(
            curve, sens, budget.delta, chosen=(budget.epsilon, one["analytic_sigma"])), shareable=True),
        mode_text=("This page releases nothing from private data: it computes the noise scales a budget needs and "
                   "what repeated releases cost in total (the analytic Gaussian calibration is exact; the classic "
                   "one is proven only for ε ≤ 1). Inputs and results are public."),
        notes=["The calculator releases nothing from private data: it computes the noise a budget needs, so there "
               "is no privacy ledger and no fitted model."])
    export_bar(report, no_release_reason="the calculator fits no model; it computes noise scales from the budget "
                                         "(inputs and results are public: they are in the shareable report).",
               public_tables=lambda: tables_csv({"σ per release": split_table, "σ against ε": curve,
                                                    "total of full-budget releases": pd.DataFrame(
                                                        [{"accounting": m, "total ε": e, "at δ": d}
                                                         for m, (e, d) in tot.items()])}))


def main() -> None:
    intro()
    budget = budget_picker("calc", modes=("strict",), show_calibration=False)
    col1, col2 = st.columns(2)
    sens = col1.number_input("L2 sensitivity Δ of one release", min_value=1e-9, value=1.0, format="%.4g")
    k = int(col2.number_input("Number of releases k", min_value=1, max_value=10_000, value=4, step=1))
    curve, one, inverse = one_release(budget, sens)
    split_table, tot = many_releases(budget, sens, k, one)
    downloads(budget, sens, k, curve, one, split_table, tot, inverse)
