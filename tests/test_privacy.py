"""Calibration, mechanisms, clipping and accounting against closed forms and independent oracles.

Oracles: Balle & Wang's Theorem 8 evaluated in 60-digit arithmetic (mpmath), diPLSlib's
``calibrateAnalyticGaussianMechanism`` (the edPLS authors' code), diffprivlib's published value
for (1, 1e-5, 1) (the package no longer imports with scikit-learn >= 1.8), OpenDP's Gaussian
(zCDP) and Laplace maps, and Google's dp-accounting PLD accountant.
"""
import math
import warnings

import mpmath as mp
import numpy as np
import pytest

from engine.privacy import (
    AnalyzeGauss,
    GaussianMechanism,
    LaplaceMechanism,
    PrivacyLedger,
    Release,
    UnprovenCalibrationWarning,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    clip_abs,
    clip_rows_l2,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_sigmas_for_budget,
    laplace_scale,
    sample_gaussian_vector,
    sample_symmetric_gaussian,
    zcdp_rho,
    zcdp_to_epsilon,
)

EPS_GRID = np.geomspace(0.01, 20, 13)
DELTA_GRID = np.geomspace(1e-10, 0.1, 10)


def thm8_delta_mp(sigma, eps, sens=1.0):
    """Balle & Wang Theorem 8 left-hand side, 60 significant digits."""
    mp.mp.dps = 60
    s, e, d = mp.mpf(sigma), mp.mpf(eps), mp.mpf(sens)
    a, b = d / (2 * s), e * s / d
    return mp.ncdf(a - b) - mp.e**e * mp.ncdf(-a - b)


# ---------------------------------------------------------------- analytic Gaussian
@pytest.mark.parametrize("eps", EPS_GRID)
def test_analytic_sigma_meets_theorem8_with_equality(eps):
    for delta in DELTA_GRID:
        sigma = analytic_gaussian_sigma(eps, delta)
        got = float(thm8_delta_mp(sigma, eps))
        assert got == pytest.approx(delta, rel=1e-6), (eps, delta)
        # And it is the smallest such sigma: 0.1% less noise breaks the condition.
        assert float(thm8_delta_mp(sigma * 0.999, eps)) > delta


def test_analytic_sigma_known_value_diffprivlib_and_diplslib():
    # diffprivlib GaussianAnalytic(epsilon=1, delta=1e-5, sensitivity=1)._scale and the
    # diPLSlib doctest both print 3.730631634944469.
    assert analytic_gaussian_sigma(1.0, 1e-5, 1.0) == pytest.approx(3.730631634944, rel=1e-9)


def test_analytic_sigma_equals_diplslib_where_its_tolerance_allows():
    from diPLSlib.utils.misc import calibrateAnalyticGaussianMechanism

    # diPLSlib stops at |B - delta| <= 1e-12 (absolute), so it is exact only for delta >> 1e-12.
    for eps in EPS_GRID:
        for delta in np.geomspace(1e-4, 0.1, 6):
            ours = analytic_gaussian_sigma(eps, delta, 2.5)
            theirs = calibrateAnalyticGaussianMechanism(eps, delta, 2.5)
            assert ours == pytest.approx(theirs, rel=1e-6), (eps, delta)


# The spec's table (edpls.md section 4.2), 6 significant digits, for eps <= 10.
SPEC_TABLE = {
    0.01: [9.54182, 1.87788, 1.38476, 1.11625, 0.569379, 0.350097],
    0.05: [4.48734, 1.33278, 1.02933, 0.854704, 0.472129, 0.304367],
    0.001: [17.4044, 2.57466, 1.83443, 1.44524, 0.689842, 0.40606],
}


@pytest.mark.parametrize("delta", sorted(SPEC_TABLE))
def test_analytic_sigma_matches_spec_table(delta):
    for eps, want in zip([0.1, 1, 1.5, 2, 5, 10], SPEC_TABLE[delta]):
        assert analytic_gaussian_sigma(eps, delta) == pytest.approx(want, rel=1e-5)


def test_large_epsilon_is_exact_where_erf_based_code_over_noises():
    from diPLSlib.utils.misc import calibrateAnalyticGaussianMechanism

    for eps in (100.0, 250.0, 700.0):
        ours = analytic_gaussian_sigma(eps, 0.01)
        assert float(thm8_delta_mp(ours, eps)) == pytest.approx(0.01, rel=1e-6)
        if eps < 700:  # e^700 overflows neither; erf loses precision near 1 at large eps
            theirs = calibrateAnalyticGaussianMechanism(eps, 0.01, 1.0)
            assert theirs > ours and float(thm8_delta_mp(theirs, eps)) < 0.0095


def test_analytic_sigma_linear_in_sensitivity_and_monotone():
    base = analytic_gaussian_sigma(0.7, 1e-6, 1.0)
    for sens in (1e-3, 0.5, 3.0, 1e4):
        assert analytic_gaussian_sigma(0.7, 1e-6, sens) == pytest.approx(sens * base, rel=1e-9)
    sig = [analytic_gaussian_sigma(e, 1e-5) for e in (0.1, 0.5, 1, 2, 8)]
    assert all(a > b for a, b in zip(sig, sig[1:]))
    assert analytic_gaussian_sigma(1.0, 1e-5, 0.0) == 0.0


def test_analytic_beats_classic_where_classic_is_valid():
    for eps in (0.05, 0.3, 1.0):
        for delta in (1e-8, 1e-5, 1e-2):
            assert analytic_gaussian_sigma(eps, delta) < classic_gaussian_sigma(eps, delta)


def test_gaussian_epsilon_inverts_calibration():
    for eps in (0.05, 1.0, 7.0, 300.0):
        sigma = analytic_gaussian_sigma(eps, 1e-6, 2.0)
        assert gaussian_epsilon(sigma, 1e-6, 2.0) == pytest.approx(eps, rel=1e-8)
        assert gaussian_delta(sigma, eps, 2.0) == pytest.approx(1e-6, rel=1e-6)


@pytest.mark.parametrize("bad", [(0, 1e-5), (-1, 1e-5), (1, 0), (1, 1), (math.inf, 1e-5), (math.nan, 1e-5)])
def test_calibration_rejects_bad_budgets(bad):
    with pytest.raises(ValueError):
        analytic_gaussian_sigma(*bad)


# ---------------------------------------------------------------- classic Gaussian, Laplace
def test_classic_sigma_closed_form_and_refusal_above_one():
    assert classic_gaussian_sigma(0.5, 1e-5, 2.0) == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5)
    assert classic_gaussian_sigma(1.0, 0.01) == pytest.approx(3.10751, rel=1e-5)  # spec table
    with pytest.raises(ValueError, match="proven only for epsilon <= 1"):
        classic_gaussian_sigma(2.0, 1e-5)
    with pytest.warns(UnprovenCalibrationWarning):
        assert classic_gaussian_sigma(2.0, 0.01, allow_large_epsilon=True) == pytest.approx(1.55376, rel=1e-5)


def test_laplace_scale_matches_opendp():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    for eps, sens in ((0.5, 1.0), (2.0, 3.0)):
        b = laplace_scale(eps, sens)
        assert b == pytest.approx(sens / eps)
        meas = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=b)
        assert meas.map(sens) == pytest.approx(eps, rel=1e-9)


def test_zcdp_rho_matches_opendp_gaussian():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    for sigma, sens in ((2.0, 1.0), (0.7, 3.0)):
        meas = dp.m.make_gaussian(
            dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float), scale=sigma
        )
        assert zcdp_rho(sigma, sens) == pytest.approx(meas.map(sens), rel=1e-9)
        # Bun & Steinke's conversion is valid but looser than OpenDP's optimal one.
        opt = dp.c.make_zCDP_to_approxDP(meas).map(sens).epsilon(1e-5)
        assert zcdp_to_epsilon(zcdp_rho(sigma, sens), 1e-5) >= opt


# ---------------------------------------------------------------- samplers and mechanisms
def test_gaussian_noise_empirical_std_matches_sigma():
    mech = GaussianMechanism(1.0, 1e-5, 1.0)
    out = mech.randomise(np.zeros(1_000_000), random_state=7)
    # std of 1e6 normal draws has relative standard error 1/sqrt(2e6) ~ 7e-4.
    assert out.std() == pytest.approx(mech.sigma, rel=4e-3)
    assert abs(out.mean()) < 5 * mech.sigma / 1000


def test_laplace_noise_empirical_scale():
    mech = LaplaceMechanism(0.5, 2.0)
    out = mech.randomise(np.zeros(1_000_000), random_state=3)
    assert np.abs(out).mean() == pytest.approx(mech.scale, rel=5e-3)  # E|Lap(b)| = b


def test_symmetric_noise_is_symmetric_with_iid_upper_triangle():
    E = sample_symmetric_gaussian(0.5, 40, random_state=1, n_replicates=300)
    assert E.shape == (300, 40, 40)
    assert np.array_equal(E, np.swapaxes(E, 1, 2))
    iu = np.triu_indices(40)
    upper = E[:, iu[0], iu[1]].ravel()
    assert upper.std() == pytest.approx(0.5, rel=0.01)
    # Distinct upper entries are uncorrelated.
    assert abs(np.corrcoef(E[:, 0, 1], E[:, 0, 2])[0, 1]) < 0.2
    # Seeded: same seed, same draw.
    assert np.array_equal(sample_symmetric_gaussian(1.0, 5, 9), sample_symmetric_gaussian(1.0, 5, 9))
    assert sample_gaussian_vector(1.0, (3, 4), 0).shape == (3, 4)


def test_analyze_gauss_sensitivity_and_bound_check():
    ag = AnalyzeGauss(0.5, 1e-6)
    assert ag.sensitivity == 1.0 and ag.sigma == pytest.approx(analytic_gaussian_sigma(0.5, 1e-6))
    assert AnalyzeGauss(0.5, 1e-6, neighbouring="replace").sensitivity == pytest.approx(math.sqrt(2))
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(200, 6))
    with pytest.raises(ValueError, match="clip first"):
        ag.randomise(Z, 0)
    Zc, rep = clip_rows_l2(Z, 1.0)
    C = ag.randomise(Zc, 0, n_replicates=2000)
    resid = C - Zc.T @ Zc
    assert resid.std() == pytest.approx(ag.sigma, rel=0.02)
    # The worst-case neighbour really has the stated sensitivity: adding a unit row along e1
    # changes the upper triangle by exactly 1 in L2.
    z = np.zeros(6)
    z[0] = 1.0
    diff = np.outer(z, z)[np.triu_indices(6)]
    assert np.linalg.norm(diff) == pytest.approx(ag.sensitivity)


def test_classic_mechanism_refuses_large_epsilon():
    with pytest.raises(ValueError):
        GaussianMechanism(3.0, 1e-5, calibration="classic")
    with pytest.raises(ValueError):
        GaussianMechanism(1.0, 1e-5, calibration="nonsense")


# ---------------------------------------------------------------- clipping
def test_clip_rows_l2_counts_and_bounds():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0], [6.0, 8.0]])
    Xc, rep = clip_rows_l2(X, 1.0)
    assert rep.n_clipped == 2 and rep.n_rows == 4 and rep.max_norm_before == pytest.approx(10.0)
    assert np.allclose(np.linalg.norm(Xc, axis=1), [1.0, 0.5, 0.0, 1.0])
    assert np.allclose(Xc[0], [0.6, 0.8]) and np.array_equal(Xc[1], X[1])
    assert "2 of 4" in rep.describe()
    with pytest.raises(ValueError):
        clip_rows_l2(X, 0.0)


def test_clip_abs_counts():
    y, rep = clip_abs(np.array([-3.0, 0.5, 2.0, 1.0]), 1.0)
    assert np.array_equal(y, [-1.0, 0.5, 1.0, 1.0]) and rep.n_clipped == 2
    Y, rep2 = clip_abs(np.array([[0.1, 5.0], [0.1, 0.2]]), 1.0)
    assert rep2.n_clipped == 1 and Y.max() == 1.0


# ---------------------------------------------------------------- ledger and composition
def _ledger(sigmas, sens, delta_each=1e-6):
    return PrivacyLedger([Release.gaussian(name=f"r{i}", sigma=s, sensitivity=d, delta=delta_each)
                          for i, (s, d) in enumerate(zip(sigmas, sens))])


def test_basic_composition_closed_form():
    led = PrivacyLedger()
    for i in range(5):
        led.add(GaussianMechanism(0.4, 1e-6, 2.0).release(f"q{i}"))
    led.add(LaplaceMechanism(0.3).release("count"))
    eps, delta = led.total("basic")
    assert eps == pytest.approx(5 * 0.4 + 0.3) and delta == pytest.approx(5e-6)


def test_zcdp_composition_closed_form():
    sig, sens = [2.0, 3.0, 1.5], [1.0, 2.0, 0.5]
    led = _ledger(sig, sens)
    rho = sum(d**2 / (2 * s**2) for s, d in zip(sig, sens))
    eps, delta = led.total("zcdp", delta=1e-5)
    assert eps == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1e5)), rel=1e-12) and delta == 1e-5


@pytest.mark.parametrize("k,z", [(1, 3.0), (2, 3.0), (4, 8.0), (10, 5.0), (40, 20.0)])
def test_pld_total_is_at_most_basic_and_zcdp_and_matches_exact_gdp(k, z):
    led = _ledger([z] * k, [1.0] * k, delta_each=1e-6)
    basic_eps, basic_delta = led.total("basic")
    pld_eps, _ = led.total("pld", basic_delta)
    zcdp_eps, _ = led.total("zcdp", basic_delta)
    gdp_eps, _ = led.total("gdp", basic_delta)
    # PLD discretises the privacy loss pessimistically (interval 1e-4), so for a single
    # release it may exceed the exact value by a few parts in 1e9.
    assert pld_eps <= basic_eps * (1 + 1e-6)
    assert pld_eps <= zcdp_eps
    assert pld_eps == pytest.approx(gdp_eps, rel=1e-3)
    if k >= 4:
        assert pld_eps < 0.8 * basic_eps  # composition really is tighter


def test_ledger_with_laplace_uses_pld_and_refuses_gdp():
    led = _ledger([3.0, 3.0], [1.0, 1.0])
    led.add(LaplaceMechanism(0.5).release("count"))
    eps, _ = led.total("pld", 1e-5)
    assert eps < led.total("basic")[0]
    with pytest.raises(ValueError, match="Gaussian-only"):
        led.total("gdp", 1e-5)


def test_ledger_marks_data_dependent_sensitivity_as_unproven():
    led = _ledger([2.0], [1.0])
    assert led.proven
    led.add(Release.gaussian(name="w", sigma=0.5, sensitivity=1.0, delta=0.01, claimed_epsilon=1.0,
                             sensitivity_source="data"))
    assert not led.proven
    # A release whose applied std is smaller than calibrated really costs more than claimed.
    r = led.entries[-1]
    assert r.epsilon > r.claimed_epsilon
    assert set(led.to_frame().columns) >= {"name", "mechanism", "sensitivity", "scale", "epsilon", "delta"}


@pytest.mark.parametrize("method", ["gdp", "zcdp", "basic"])
def test_inverse_budget_meets_total(method):
    sens = np.array([1.0, 0.5, 2.0, 3.0])
    sig = gaussian_sigmas_for_budget(1.0, 1e-5, sens, method=method)
    if method == "basic":
        led = _ledger(sig, sens, delta_each=1e-5 / 4)
        eps, delta = led.total("basic")
        assert eps == pytest.approx(1.0, rel=1e-8) and delta == pytest.approx(1e-5)
    else:
        led = _ledger(sig, sens, delta_each=1e-5 / 4)
        if method == "gdp":  # exact: the composed Gaussian meets (1, 1e-5) with equality
            assert led.total("gdp", 1e-5)[0] == pytest.approx(1.0, rel=1e-8)
            assert led.total("pld", 1e-5)[0] == pytest.approx(1.0, rel=1e-4)
        else:
            assert led.total("zcdp", 1e-5)[0] == pytest.approx(1.0, rel=1e-10)
    # Equal shares: equal noise multipliers.
    assert np.allclose(sig / sens, (sig / sens)[0])


def test_inverse_gdp_is_tighter_than_zcdp_and_basic():
    sens = np.ones(8)
    g = gaussian_sigmas_for_budget(1.0, 1e-6, sens, "gdp")
    z = gaussian_sigmas_for_budget(1.0, 1e-6, sens, "zcdp")
    b = gaussian_sigmas_for_budget(1.0, 1e-6, sens, "basic")
    assert (g < z).all() and (g < b).all()
    # A single release under gdp is exactly the analytic Gaussian.
    assert gaussian_sigmas_for_budget(1.0, 1e-5, [1.0])[0] == pytest.approx(3.730631634944, rel=1e-9)
    w = gaussian_sigmas_for_budget(1.0, 1e-6, [1.0, 1.0], weights=[3, 1])
    assert w[0] < w[1]
    with pytest.raises(ValueError):
        gaussian_sigmas_for_budget(1.0, 1e-6, [1.0, -1.0])


def test_empty_ledger_and_bad_method():
    led = PrivacyLedger()
    assert led.total("pld") == (0.0, 0.0)
    with pytest.raises(ValueError):
        led.total("renyi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert led.summary()["n_releases"] == 0


def test_replace_one_ledger_is_not_double_counted_by_pld():
    # A replace-one Analyze-Gauss release records sensitivity sqrt(2) and is calibrated to
    # (eps, delta); its PLD total must be eps, not what REPLACE_ONE-on-top would give.
    ag = AnalyzeGauss(1.0, 1e-5, neighbouring="replace")
    led = PrivacyLedger([ag.release()], neighbouring="replace")
    assert led.total("pld", 1e-5)[0] == pytest.approx(1.0, rel=1e-4)
    led.add(LaplaceMechanism(0.5).release("count"))
    assert led.total("pld", 1e-5)[0] < 1.5 + 1e-6
