"""The Attack tab of the VAR-ADMM page: the paper's Propositions 2-4 run live on the chosen owners."""
from __future__ import annotations

import streamlit as st

from engine.attacks.var_admm_attacks import breach_table
from engine.jobs import JobError
from ui.exports import show_chart
from ui.figures import (
    var_attack_error_figure,
    var_attack_series_figure,
    var_breach_figure,
    var_singular_values_figure,
)
from ui.jobs_view import fit_wait
from ui.var_admm_runs import CENTRAL_ATTACKER, Defence, Setup, run_attack


def attack_inputs(setup: Setup, fit: dict, defence: Defence) -> tuple:
    a1, a2, a3 = st.columns(3)
    attacker = a1.selectbox("Attacker", [CENTRAL_ATTACKER] + fit["sites"], index=1, key="var_admm_attacker")
    victims = fit["sites"] if attacker == CENTRAL_ATTACKER else [s for s in fit["sites"] if s != attacker]
    victim = a2.selectbox("Victim", victims, key="var_admm_victim")
    n, p = len(fit["sites"]), len(setup.lags)
    K_max = int(a3.slider("Iterations observed (K)", 2, 40, min(40, max(8, (n - 1) * (p + 2) // n + 4)),
                          key="var_admm_kmax"))
    b1, b2, b3 = st.columns(3)
    attack_init = b1.selectbox("Initialisation of this run", ("random", "zero"), key="var_admm_attack_init")
    coef_noise = float(b2.number_input("Noise on shared coefficients, sd", 0.0, 10.0,
                                       defence.strength if defence.name == "coef_noise" else 0.0,
                                       key="var_admm_attack_coef_noise"))
    message_noise = float(b3.number_input("Noise on messages, sd", 0.0, 10.0,
                                          defence.strength if defence.name == "message_noise" else 0.0,
                                          format="%.5f", key="var_admm_attack_msg_noise"))
    return attacker, victim, K_max, coef_noise, message_noise, attack_init


def show_attack(setup: Setup, fit: dict, att: dict, victim: str) -> None:
    res, hourly = att["result"], setup.hourly
    n, p = len(fit["sites"]), len(setup.lags)
    v = res.victims.index(victim)
    K_show = res.k_exact or int(res.K[-1])
    k1, k2, k3, k4 = st.columns(4)
    k1.metric("Exact from K =", "never" if res.k_exact is None else str(res.k_exact))
    k2.metric("Paper's formula", "—" if res.predicted_k is None else str(res.predicted_k), help=res.formula)
    k3.metric(f"Error at K = {int(res.K[-1])}", f"{res.relerr[-1, v]:.1e}")
    k4.metric("Subspace rank found / needed", f"{res.rank_found} / {res.rank_needed}")
    st.markdown(res.note)
    if res.partial:
        st.info("The stacked observations did not reach the subspace's dimension (e.g. LASSO keeps a lag at zero): "
                "at most a partial leak at this K.")
    show_chart(st, var_attack_series_figure(att["times"][:24 * 7 if hourly else 300],
                                            res.truth[:24 * 7 if hourly else 300, v],
                                            res.reconstructions[K_show][:24 * 7 if hourly else 300, v],
                                            victim=victim, K=K_show, attacker=res.attacker),
               f"attack_reconstruction_{victim}", page="var_admm")
    show_chart(st, var_attack_error_figure(res.K, res.relerr, victims=res.victims, predicted_k=res.predicted_k,
                                           k_exact=res.k_exact, k_needed=res.k_needed, formula=res.formula),
               "attack_error", page="var_admm")
    if res.singular_values.size:
        show_chart(st, var_singular_values_figure(res.singular_values, res.rank_needed), "singular_values",
                   page="var_admm")
    st.markdown(f"**Zero-initialisation check** (same run): m¹ (n + ρ)/2 against Y, relative error "
                f"{att['zero_leak_err']:.1e}. {att['zero_leak_note']}.")
    Ts = sorted({100, 200, 500, 1000, 2000, 5000, 10000, 20000, att["T"]})
    ns = sorted({2, 10, 44, n})
    live = [(att["T"], res.k_exact, "this attack: exact")] if res.k_exact else None
    show_chart(st, var_breach_figure(breach_table(Ts, ns, [p]), p=p, live=live), "breach", page="var_admm")
    st.caption("As in the paper: the iterations after which the owners and the central node hold as many equations as "
               "unknowns. Counting is necessary, not sufficient; the "
               "attacks above are constructive and reach the owners' bound generically.")


def attack_tab(setup: Setup, fit: dict, defence: Defence) -> None:
    attacker, victim, K_max, coef_noise, message_noise, attack_init = attack_inputs(setup, fit, defence)
    try:
        with fit_wait("var_admm_attack", "Running the attack"):
            att = run_attack(setup.Y, setup.solar, setup.lags, setup.settings, attacker, victim, K_max, coef_noise,
                             message_noise, attack_init, setup.upload)
    except (ValueError, ArithmeticError, JobError) as err:
        st.error(f"The attack cannot run on this choice: {err}")
        att = None
    if att is not None:
        show_attack(setup, fit, att, victim)
