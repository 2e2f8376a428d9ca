"""VAR-ADMM (issue #9): the collaborative VAR, its ADMM, the defences, the attacks and the page.

Oracles: statsmodels' ``VAR(Y).fit(p)`` (coefficients, intercept, forecasts), scikit-learn's
``Lasso`` / ``Ridge`` (penalised central fits), the spec's macrodata numbers (8.2), the spec's
Fig. 10 table of (58)/(61), closed forms (m^1 = 2Y/(n + rho), the ADMM identities of 4.2), and
the true series for the attacks.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Lasso, Ridge
from statsmodels.tsa.api import VAR

from engine.attacks.var_admm_attacks import (
    breach_iterations_central,
    breach_iterations_owner,
    central_node_attack,
    du_var_attack,
    karr_var_attack,
    large_t_central,
    large_t_owner,
    owner_attack,
    structure_solve,
    zero_init_leak,
)
from engine.methods.var_admm import (
    CollaborativeVAR,
    add_noise,
    companion_radius,
    defence_comparison,
    evaluate_forecasts,
    lag_major_to_owner_major,
    lagged_design,
    macrodata_growth,
    noise_guarantee,
    noise_ledger,
    noise_sweep,
    orthogonal_rows_demo,
    owner_major_from_coefs,
    owner_major_to_lag_major,
    post_multiplication_demo,
    prepare_solar,
    random_stationary_var,
    simulate_var,
    var10_3_coefs,
    var22_coefs,
    var_forecasts,
)
from tab_helpers import charts_in, open_tab

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def macro():
    return macrodata_growth(demean=False).to_numpy()


@pytest.fixture(scope="module")
def var22():
    return simulate_var(var22_coefs(), 2002, random_state=4)


@pytest.fixture(scope="module")
def var10():
    return simulate_var(var10_3_coefs(), 2003, random_state=4)


# ----------------------------------------------------------------------------- central fit
@pytest.mark.parametrize("trend", ["c", "n"])
def test_central_fit_equals_statsmodels(macro, var10, trend):
    for Y, p in ((macro, 2), (var10 + 1.5, 3)):
        ours = CollaborativeVAR(p, trend=trend).fit(Y)
        ref = VAR(Y).fit(p, trend=trend)
        assert ours.coefs_.shape == ref.coefs.shape
        np.testing.assert_allclose(ours.coefs_, ref.coefs, atol=1e-8, rtol=0)
        np.testing.assert_allclose(ours.intercept_, ref.intercept, atol=1e-8, rtol=0)
        np.testing.assert_allclose(ours.forecast(Y[-p:], 4), ref.forecast(Y[-p:], 4), atol=1e-8)
        np.testing.assert_allclose(ours.sigma_u_, ref.sigma_u, atol=1e-8)


def test_macrodata_matches_the_spec_numbers():
    yc = macrodata_growth(demean=True).to_numpy()
    m = CollaborativeVAR(2, trend="n").fit(yc)
    B1 = [[-0.2794, -0.1004, -1.9710], [0.6750, 0.2687, 4.4141], [0.0332, 0.0258, 0.2255]]
    B2 = [[0.0084, -0.1230, 0.3805], [0.2902, 0.2323, 0.8006], [-0.0073, 0.0235, -0.1240]]
    np.testing.assert_allclose(m.coefs_[0].T, B1, atol=1e-4)
    np.testing.assert_allclose(m.coefs_[1].T, B2, atol=1e-4)
    assert m.n_obs_ == 200


def test_owner_major_and_lag_major_give_the_same_predictions(var10):
    Z, _ = lagged_design(var10, 3)
    m = CollaborativeVAR(3, trend="n").fit(var10)
    B_om = m.coef_owner_major_
    B_lm = owner_major_to_lag_major(B_om, 10, 3)
    Z_lm = owner_major_to_lag_major(Z.T, 10, 3).T  # the same permutation of Z's columns
    np.testing.assert_allclose(Z @ B_om, Z_lm @ B_lm, atol=1e-12)
    np.testing.assert_array_equal(lag_major_to_owner_major(B_lm, 10, 3), B_om)
    np.testing.assert_array_equal(owner_major_from_coefs(m.coefs_, 3), B_om)


def test_lag_set_with_gaps_is_zero_on_unused_lags():
    Y = simulate_var(var22_coefs(), 600, random_state=1)
    m = CollaborativeVAR((1, 2, 5), trend="c").fit(Y)
    assert m.coefs_.shape == (5, 2, 2)
    assert np.all(m.coefs_[2:4] == 0)
    Z, tgt = lagged_design(Y, (1, 2, 5))
    np.testing.assert_allclose(m.predict_design(Z), Z @ m.coef_owner_major_ + m.intercept_)


def test_penalised_central_fits_equal_scikit_learn(var22):
    Y = var22 + 2.0
    Z, tgt = lagged_design(Y, 2)
    lasso = CollaborativeVAR(2, penalty="lasso", alpha=0.01).fit(Y)
    ref = Lasso(alpha=0.01, tol=1e-14, max_iter=200_000).fit(Z, tgt)
    np.testing.assert_allclose(lasso.coef_owner_major_, ref.coef_.T, atol=1e-8)
    np.testing.assert_allclose(lasso.intercept_, ref.intercept_, atol=1e-8)
    assert lasso.lambda_ == pytest.approx(0.01 * len(tgt))
    ridge = CollaborativeVAR(2, penalty="ridge", alpha=0.05).fit(Y)
    ref = Ridge(alpha=0.05 * len(tgt)).fit(Z, tgt)
    np.testing.assert_allclose(ridge.coef_owner_major_, ref.coef_.T, atol=1e-8)
    np.testing.assert_allclose(ridge.intercept_, ref.intercept_, atol=1e-8)


# ----------------------------------------------------------------------------- ADMM
@pytest.mark.parametrize("scheme", ["paper", "anderson"])
@pytest.mark.parametrize("penalty,alpha", [("none", 0.0), ("ridge", 0.05), ("lasso", 0.01)])
@pytest.mark.parametrize("trend", ["c", "n"])
def test_admm_converges_to_the_central_fit(var22, penalty, alpha, trend, scheme):
    Y = var22[:800] + 1.0
    central = CollaborativeVAR(2, penalty=penalty, alpha=alpha, trend=trend).fit(Y)
    for init, variant in (("zero", "base"), ("random", "y_free")):
        admm = CollaborativeVAR(2, solver="admm", penalty=penalty, alpha=alpha, trend=trend, rho=1.0, tol=1e-10,
                                max_iter=20_000, init=init, variant=variant, random_state=0, store_path=False,
                                scheme=scheme).fit(Y)
        assert admm.converged_ and admm.scheme_ == scheme
        scale = np.max(np.abs(central.coefs_))
        assert np.max(np.abs(admm.coefs_ - central.coefs_)) <= 1e-6 * scale
        np.testing.assert_allclose(admm.intercept_, central.intercept_, atol=1e-6 * np.max(np.abs(Y)))


@pytest.mark.parametrize("scheme", ["paper", "anderson"])
def test_admm_converges_on_macrodata_and_ten_owners(macro, var10, scheme):
    for Y, p, rho in ((macro, 2, 0.5), (var10[:1000], 3, 2.0)):
        central = CollaborativeVAR(p).fit(Y)
        admm = CollaborativeVAR(p, solver="admm", rho=rho, tol=1e-10, max_iter=20_000, store_path=False,
                                scheme=scheme).fit(Y)
        assert admm.converged_
        assert np.max(np.abs(admm.coefs_ - central.coefs_)) <= 1e-6 * np.max(np.abs(central.coefs_))


def test_base_and_y_free_give_the_same_iterates_and_the_identities_hold(var22):
    kw = dict(solver="admm", trend="n", penalty="lasso", alpha=0.005, rho=2.0, tol=None, max_iter=8, keep_values=8,
              u0_scale=10.0, random_state=3)
    base = CollaborativeVAR(2, **kw).fit(var22)
    free = CollaborativeVAR(2, variant="y_free", **kw).fit(var22)
    for a, b in zip(base.trace_.broadcasts, free.trace_.broadcasts):
        np.testing.assert_allclose(a, b, atol=1e-12)
    tr, (Z, Y) = base.trace_, base.design_
    n, rho = 2, 2.0
    m, U = tr.broadcasts, tr.u_path
    ZB = [Z @ B for B in tr.shared_coef_path]
    for k in range(1, 8):
        np.testing.assert_allclose(m[k - 1], U[k - 1] - 2 * U[k], atol=1e-10)
        R = Y - ZB[k - 1]
        np.testing.assert_allclose(R, n * U[k - 1] - (n + rho) * U[k], atol=1e-10)
    for k in range(1, 7):
        W = n * m[k - 1] - (n + rho) * m[k]
        np.testing.assert_allclose(W, -Y - ZB[k - 1] + 2 * ZB[k], atol=1e-10)


@pytest.mark.parametrize("scheme", ["paper", "anderson"])
def test_residuals_stopping_rule_and_fixed_k(var10, scheme):
    Y = var10[:1000]
    boyd = CollaborativeVAR(3, solver="admm", rho=2.0, random_state=1, scheme=scheme, tol=1e-4).fit(Y)
    tr = boyd.trace_
    assert boyd.converged_ and boyd.n_iter_ < 500 and boyd.scheme_ == tr.scheme == scheme
    assert tr.primal_residuals[-1] <= tr.eps_primal[-1] and tr.dual_residuals[-1] <= tr.eps_dual[-1]
    k = max(len(tr.primal_residuals) // 10, 1)
    if scheme == "paper":
        assert np.isinf(tr.dual_residuals[0])
        # decrease in trend: the last tenth is far below the first tenth
        assert tr.primal_residuals[-k:].mean() < 1e-2 * tr.primal_residuals[:k].mean()
    else:  # the dual is eliminated at rho = n: the consensus holds exactly
        assert np.all(tr.primal_residuals == 0) and tr.rho == 10
    assert tr.dual_residuals[-k:].mean() < 1e-2 * tr.dual_residuals[1:k + 1].mean()
    # a fixed initialisation: from a fresh random start the 50-iterate error spreads over about 0.004-0.012
    # (12 seeds: 0.0041-0.0085; two fresh starts in CI: 0.0109, 0.0115), so the 1e-2 check needs a known start
    fixed = CollaborativeVAR(3, solver="admm", rho=2.0, tol=None, max_iter=50, random_state=1).fit(Y)
    assert fixed.n_iter_ == 50 and not fixed.converged_ and fixed.trace_.n_broadcasts == 50
    central = CollaborativeVAR(3).fit(Y)
    assert np.max(np.abs(fixed.coefs_ - central.coefs_)) < 1e-2  # "tends to stabilize after 50 iterations"
    assert len(fixed.trace_.coef_path) == 50


def test_every_message_is_recorded_with_its_shape(var22):
    m = CollaborativeVAR(2, solver="admm", tol=None, max_iter=5, trend="c", owner_names=["north", "south"]).fit(var22)
    log = m.trace_.log.to_frame()
    T = m.n_obs_
    per_iter = log[log["phase"] == "iteration"]
    assert len(per_iter) == 5 * (2 + 1)
    ups = per_iter[per_iter["receiver"] == "central"]
    assert set(ups["sender"]) == {"north", "south"} and set(ups["shape"]) == {f"{T} x 2"}
    casts = per_iter[per_iter["sender"] == "central"]
    assert list(casts["receiver"].unique()) == ["all owners"] and len(casts) == 5
    assert len(log[log["phase"] == "final"]) == 2  # intercept pieces (trend "c")
    vol = m.trace_.log.volume(by=("sender",)).set_index("sender")
    assert vol.loc["north", "values sent"] == 5 * T * 2 + 2
    assert m.trace_.owner_messages == [] and m.trace_.broadcasts == []  # shapes only by default


def test_noise_inside_admm_changes_the_fit_but_stays_finite(var22):
    clean = CollaborativeVAR(2, solver="admm", tol=None, max_iter=60, random_state=0).fit(var22)
    for kw in ({"coef_noise": 0.05}, {"message_noise": 0.05, "noise_law": "laplace"}):
        noisy = CollaborativeVAR(2, solver="admm", tol=None, max_iter=60, random_state=0, **kw).fit(var22)
        assert np.all(np.isfinite(noisy.coefs_))
        assert np.max(np.abs(noisy.coefs_ - clean.coefs_)) > 1e-4


# ----------------------------------------------------------------------------- attacks
def test_zero_initialisation_leaks_every_series_at_once(var22):
    m = CollaborativeVAR(2, solver="admm", init="zero", trend="n", tol=None, max_iter=2, keep_values=2).fit(var22)
    leak = zero_init_leak(m)
    np.testing.assert_allclose(leak.reconstructions[1], m.design_[1], atol=1e-12)
    np.testing.assert_allclose(m.trace_.broadcasts[0] * (2 + 2.0) / 2, m.design_[1], atol=1e-12)
    masked = CollaborativeVAR(2, solver="admm", init="random", trend="n", tol=None, max_iter=2, keep_values=2,
                              random_state=0).fit(var22)
    assert zero_init_leak(masked).relerr.min() > 0.1


@pytest.mark.parametrize("rho", [0.7, 5.0])
def test_owner_attack_is_exact_at_the_large_T_value_of_61(var22, var10, rho):
    for Y, p, alpha in ((var22, 2, 0.005), (var10, 3, 0.0)):
        n = Y.shape[1]
        k61 = large_t_owner(n, p)
        assert k61 == (3 if n == 2 else 5)
        m = CollaborativeVAR(p, solver="admm", penalty="lasso", alpha=alpha, trend="n", rho=rho, tol=None,
                             max_iter=k61, keep_values=k61, u0_scale=10.0, random_state=int(rho * 10)).fit(Y)
        res = owner_attack(m, attacker=n - 1)
        assert res.error_at(k61).max() <= 1e-8
        assert res.error_at(k61 - 1).min() > 1e-2
        assert res.k_exact == k61 and res.predicted_k == breach_iterations_owner(2000, n, p)
        np.testing.assert_allclose(res.reconstructions[k61], Y[p:, :n - 1], atol=1e-7 * np.abs(Y).max())


def test_owner_attack_with_an_intercept_and_daytime_rows(var22):
    Y = var22 + 3.0
    mask = np.ones(len(Y), bool)
    mask[::7] = False  # rows left out of the fit, as night hours are
    m = CollaborativeVAR(2, solver="admm", trend="c", tol=None, max_iter=4, keep_values=4, random_state=2).fit(
        Y, row_mask=mask)
    res = owner_attack(m, 0)
    assert res.error_at(3).max() <= 1e-8
    truth = Y[m.fit_rows_, 1]
    np.testing.assert_allclose(res.reconstructions[3][:, 0], truth - truth.mean(), atol=1e-7)


def test_central_node_attack_on_the_y_free_variant(var22, var10):
    for Y, p, k_exact in ((var22, 2, 2), (var10, 3, 1)):
        n = Y.shape[1]
        assert large_t_central(n, p) == k_exact == breach_iterations_central(20_000, n, p)
        m = CollaborativeVAR(p, solver="admm", variant="y_free", trend="n", tol=None, max_iter=3, keep_values=3,
                             random_state=1).fit(Y)
        res = central_node_attack(m, victim=1)
        assert res.k_exact == k_exact
        if k_exact > 1:
            assert res.error_at(k_exact - 1).min() > 1e-2
    base = CollaborativeVAR(2, solver="admm", trend="n", tol=None, max_iter=2, keep_values=2).fit(var22)
    assert central_node_attack(base, 0).relerr.max() == 0.0  # (47): the central node holds Y


def test_noise_does_not_stop_the_attacks(var22):
    """Prop. 4: coefficient noise (73) leaves the attacks exact; message noise (74) leaves an
    approximate leak whose error is of the order of the noise-to-signal ratio."""
    kw = dict(solver="admm", variant="y_free", trend="n", rho=5.0, tol=None, max_iter=10, keep_values=10,
              u0_scale=10.0, random_state=1)
    coef = CollaborativeVAR(2, coef_noise=1.0, **kw).fit(var22)
    assert owner_attack(coef, 0).error_at(3).max() <= 1e-8
    assert central_node_attack(coef, 1).error_at(2).max() <= 1e-8
    msg = CollaborativeVAR(2, message_noise=1e-4, **kw).fit(var22)
    s = 1e-4 / np.sqrt(np.mean(np.stack(msg.trace_.owner_messages) ** 2))
    for res in (owner_attack(msg, 0), central_node_attack(msg, 1)):
        err = res.relerr[-1].max()
        assert s / 10 <= err <= 10 * s


def test_structure_solve_recovers_presample_values():
    rng = np.random.default_rng(0)
    y = rng.standard_normal(203)
    Y = np.column_stack([y, rng.standard_normal(203)])
    Z, tgt = lagged_design(Y, 3)
    V = np.linalg.qr(Z[:, :3])[0]
    x = rng.standard_normal(3)
    g = tgt[:, 0] - V @ x
    y_hat, free, info = structure_solve(g, V, (1, 2, 3))
    np.testing.assert_allclose(y_hat[:, 0], y[3:], atol=1e-10)
    np.testing.assert_allclose([free[t][0] for t in (-3, -2, -1)], y[:3], atol=1e-10)
    assert info["rank"] == info["unknowns"] == 6


def test_breach_formulas_reproduce_the_spec_table():
    table = {  # (T, n): k2/k3 for p = 1, 2, 3, 6, 12, 24 (spec section 7; None = "-")
        (100, 2): [(1, 3), (2, 3), (2, 4), (4, 5), (7, 9), (16, 18)],
        (100, 10): [(1, 4), (1, 5), (1, 7), (1, 16), (2, None), (4, None)],
        (1000, 10): [(1, 3), (1, 4), (1, 5), (1, 8), (2, 15), (3, 30)],
        (20000, 2): [(1, 3), (2, 3), (2, 4), (4, 5), (7, 8), (13, 14)],
        (20000, 10): [(1, 3), (1, 4), (1, 5), (1, 8), (2, 13), (3, 24)],
        (20000, 44): [(1, 3), (1, 4), (1, 5), (1, 8), (1, 15), (1, 27)],
    }
    for (T, n), row in table.items():
        for p, (k2, k3) in zip((1, 2, 3, 6, 12, 24), row):
            assert breach_iterations_central(T, n, p) == k2, (T, n, p)
            assert breach_iterations_owner(T, n, p) == k3, (T, n, p)
    assert breach_iterations_central(20000, 10, 12) == large_t_central(10, 12)


def test_du_and_karr_protocols_in_a_var():
    Y = simulate_var(var22_coefs(), 202, random_state=4)
    du = du_var_attack(Y[:, 0], Y[:, 1], 2, random_state=0)
    assert du["product_error"] < 1e-9 and du["Z1_error"] < 1e-8 and du["Z2_error"] < 1e-8
    alone = karr_var_attack(Y[:, 0], Y[:, 1], 2)
    same = karr_var_attack(Y[:, 0], Y[:, 1], 2, second_offset=0)
    disjoint = karr_var_attack(Y[:, 0], Y[:, 1], 2, second_offset=98)
    assert alone["product_error"] < 1e-9 and alone["g"] == 100
    assert alone["rank"] < alone["unknowns"] and same["rank"] < same["unknowns"]
    assert disjoint["rank"] == disjoint["unknowns"] == 202 and disjoint["max_error"] < 1e-8


# ----------------------------------------------------------------------------- simulated processes
def test_simulated_processes_are_the_specs():
    assert companion_radius(var22_coefs()) == pytest.approx(0.663, abs=1e-3)
    c10 = var10_3_coefs()
    assert np.count_nonzero(c10) == 42 and companion_radius(c10) == pytest.approx(0.759, abs=1e-3)
    assert np.all(c10[:, 7:, :][:, :, np.r_[0:7]] == 0)  # targets 8-10 are pure AR
    for seed in range(8):
        for p, d in ((2, 2), (3, 10)):
            assert companion_radius(random_stationary_var(p, d, random_state=seed)) < 1


def test_simulated_var_is_recovered():
    Y = simulate_var(var22_coefs(), 20_000, random_state=0)
    m = CollaborativeVAR(2, trend="n").fit(Y)
    assert np.max(np.abs(m.coefs_ - var22_coefs())) < 0.03


# ----------------------------------------------------------------------------- defences
def test_transformations(var22):
    Z, tgt = lagged_design(var22, 2)
    ortho = orthogonal_rows_demo(Z, tgt, 2, random_state=0)
    assert ortho["max_abs_difference"] < 1e-10
    ortho_lasso = orthogonal_rows_demo(Z, tgt, 2, penalty="lasso", alpha=0.01, random_state=0)
    assert ortho_lasso["max_abs_difference"] < 1e-8  # M'M = I keeps the whole objective
    compressed = orthogonal_rows_demo(Z, tgt, 2, rows_kept=200, random_state=0)
    assert compressed["max_abs_difference"] > 1e-3
    post = post_multiplication_demo(Z, tgt, 2, random_state=0)
    assert post["identity_error"] < 1e-8 and post["max_abs_difference"] < 1e-8
    assert np.max(np.abs(post["coef_transformed"] - post["coef_plain"])) > 1e-2  # B' is not B


def test_noise_guarantees_are_stated_honestly():
    g = noise_guarantee("laplace", 0.6, 12.0, T=1000)
    assert g["eps_per_value"] == pytest.approx(20.0) and g["eps_per_series"] == pytest.approx(20_000.0)
    assert noise_guarantee("laplace", 0.2, 12.0, T=10)["eps_per_value"] == pytest.approx(60.0)
    assert noise_guarantee("laplace", 0.8, 12.0, T=10)["eps_per_value"] == pytest.approx(15.0)
    u = noise_guarantee("uniform", 0.6, 12.0, T=10)
    assert np.isinf(u["eps_per_value"]) and not u["proven"]
    gauss = noise_guarantee("gaussian", 1.0, 1.0, T=100, delta=1e-5)
    assert gauss["eps_per_series"] > gauss["eps_per_value"] > 0
    assert not noise_guarantee("laplace", 0.6, 12.0, T=10, sensitivity_source="data")["proven"]
    ledger = noise_ledger("laplace", 0.6, 12.0, n_series=2)
    assert ledger.total("basic")[0] == pytest.approx(20.0)
    assert len(noise_ledger("uniform", 0.6, 12.0, 2)) == 0


def test_noise_shrinks_the_coefficients():
    Y = simulate_var(var22_coefs(), 20_000, random_state=2)
    clean = CollaborativeVAR(2, trend="n").fit(Y)
    noisy = CollaborativeVAR(2, trend="n").fit(add_noise(Y, "laplace", 0.6, random_state=0))
    assert np.abs(noisy.coefs_).sum() < 0.8 * np.abs(clean.coefs_).sum()
    d_small = np.abs(CollaborativeVAR(2, trend="n").fit(add_noise(Y, "laplace", 0.2, 1)).coefs_ - var22_coefs()).mean()
    d_large = np.abs(noisy.coefs_ - var22_coefs()).mean()
    assert d_small < d_large


# ----------------------------------------------------------------------------- forecasts
def test_rolling_forecasts_match_forecast_and_the_var_beats_ar():
    Y = simulate_var(var22_coefs(), 6000, random_state=5)
    ev = evaluate_forecasts(Y, 2, 4500)
    assert (ev.table["mae_gain_pct"] > 0).all() and (ev.table["rmse_gain_pct"] > 0).all()
    m = ev.model
    for h in (1, 3):
        pred = var_forecasts(m, Y, np.array([5000, 5500]), horizon=h)
        np.testing.assert_allclose(pred[0], m.forecast(Y[:5000 - h + 1], h)[-1], atol=1e-12)
        np.testing.assert_allclose(pred[1], m.forecast(Y[:5500 - h + 1], h)[-1], atol=1e-12)
    ten = simulate_var(var10_3_coefs(), 6000, random_state=5)
    ev10 = evaluate_forecasts(ten, 3, 4500, model=CollaborativeVAR(3, trend="n"))
    gains = ev10.table["mae_gain_pct"].to_numpy()
    assert (gains[:7] > 0.5).all() and (np.abs(gains[7:]) < 0.5).all()


def test_defences_cost_accuracy_on_the_same_forecasts():
    Y = simulate_var(var10_3_coefs(), 5000, random_state=6)
    clean = defence_comparison(Y, 3, 3500, "none", 0.0)
    for defence, strength in (("laplace", 0.6), ("gaussian", 0.6), ("uniform", 0.6), ("naive_laplace", 0.6),
                              ("coef_noise", 0.5), ("message_noise", 0.5)):
        ev = defence_comparison(Y, 3, 3500, defence, strength, params={"max_iter": 40}, random_state=0)
        np.testing.assert_array_equal(ev.target_rows, clean.target_rows)
        assert ev.table["mae_var"].mean() > clean.table["mae_var"].mean(), defence
    ortho = defence_comparison(Y, 3, 3500, "orthogonal_rows", 1.0, random_state=0)
    np.testing.assert_allclose(ortho.var_pred, clean.var_pred, atol=1e-9)
    post = defence_comparison(Y, 3, 3500, "post_multiplication", 1.0, random_state=0)
    np.testing.assert_allclose(post.var_pred, clean.var_pred, atol=1e-9)
    sweep = noise_sweep(Y, 3, 3500, "laplace", [0.0, 0.3, 1.0], random_state=0, public_range=(-6.0, 6.0),
                        declared_public=True)
    assert list(sweep["b"]) == [0.0, 0.3, 1.0]
    assert sweep["median_mae_gain_pct"].iloc[0] > sweep["median_mae_gain_pct"].iloc[-1]
    assert np.isinf(sweep["eps_per_value"].iloc[0]) and sweep["eps_per_value"].iloc[1] == pytest.approx(40.0)
    assert sweep["eps_per_series"].iloc[1] == pytest.approx(40.0 * len(Y))
    # labels from each fit's own ledger: b = 0 is no privacy; a known noise seed is never "proven"
    assert list(sweep["status"]) == ["no privacy", "not proven", "not proven"]
    fresh = noise_sweep(Y, 3, 3500, "laplace", [0.0, 0.3], public_range=(-6.0, 6.0), declared_public=True)
    assert list(fresh["status"]) == ["no privacy", "proven"]
    undeclared = noise_sweep(Y, 3, 3500, "laplace", [0.3], public_range=(-6.0, 6.0))
    assert list(undeclared["status"]) == ["not proven"]
    assert list(noise_sweep(Y, 3, 3500, "uniform", [0.3], public_range=(-6.0, 6.0), declared_public=True)["status"]) \
        == ["no privacy"]


def test_solar_sample_protocol():
    from engine.data.samples import make_solar

    b = make_solar(n_sites=6, end="2011-05-31 23:00", random_state=1)
    sp = prepare_solar(b.y, b.daylight, train_end="2011-04-15")
    assert sp.score_mask.any() and sp.fit_mask[:sp.train_end].sum() > 500
    ev = evaluate_forecasts(sp.Y, (1, 2, 24), sp.train_end, test_rows=sp.test_rows, score_mask=sp.score_mask,
                            fit_mask=sp.fit_mask, owner_names=sp.sites)
    assert ev.median_mae_gain > 0
    # default daylight from the file's zeros (the sample CSV holds 0 exactly at night)
    sp2 = prepare_solar(b.y, None, train_end="2011-04-15")
    assert (sp2.daylight == (b.y.to_numpy() > 0)).all()


# ----------------------------------------------------------------------------- validation
def test_bad_input_gives_clear_errors(var22):
    with pytest.raises(ValueError, match="penalty"):
        CollaborativeVAR(2, penalty="l1").fit(var22)
    with pytest.raises(ValueError, match="rho"):
        CollaborativeVAR(2, solver="admm", rho=0).fit(var22)
    with pytest.raises(ValueError, match="lags"):
        CollaborativeVAR(0).fit(var22)
    with pytest.raises(ValueError, match="cannot identify"):
        CollaborativeVAR(3).fit(np.random.default_rng(0).standard_normal((9, 3)))
    bad = var22.copy()
    bad[5, 1] = np.nan
    with pytest.raises(ValueError):
        CollaborativeVAR(2).fit(bad)
    const = var22.copy()
    const[:, 1] = 1.0
    with pytest.raises(ValueError, match="constant"):
        CollaborativeVAR(2).fit(const)
    with pytest.raises(ValueError, match="keep_values"):
        owner_attack(CollaborativeVAR(2, solver="admm", max_iter=3, tol=None).fit(var22))
    assert CollaborativeVAR(2, rho=3.0).get_params()["rho"] == 3.0


def test_dataframe_names_become_owner_names(var22):
    df = pd.DataFrame(var22, columns=["plant A", "plant B"])
    m = CollaborativeVAR(2, solver="admm", tol=None, max_iter=3, keep_values=3).fit(df)
    assert m.owner_names_ == ["plant A", "plant B"]
    assert owner_attack(m, "plant B").victims == ["plant A"]


# ----------------------------------------------------------------------------- page
@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_page_renders_fits_and_attacks():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "var_admm.py"), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    assert at.title[0].value == "VAR-ADMM"
    # lazy tabs: only the open tab computes; each is opened as a click on it does, and the page's texts, metrics
    # and tab charts are collected over the runs
    charts, labels, text = 0, set(), ""
    for tab in ("Forecasts", "Skill", "Convergence", "Messages", "Attack", "Accuracy vs privacy"):
        charts += charts_in(open_tab(at, "var_admm_tabs", tab))
        labels |= {m.label for m in at.metric}
        text += " ".join(m.value for m in at.markdown) + " ".join(w.value for w in at.warning) + " ".join(
            i.value for i in at.info)
    assert charts >= 5
    assert {"ADMM iterations", "max |B_ADMM − B_central|", "Median MAE gain over local AR"} <= labels
    assert "not differentially private" in text or "not DP" in text
    assert "ADMM scheme that ran: anderson" in text
    # switch the attacker to the central node of the Y-free variant: still renders
    open_tab(at, "var_admm_tabs", "Attack")
    at.selectbox(key="var_admm_attacker").set_value("central node (Y-free variant)").run()
    assert not at.exception, at.exception
