"""Every catalogue audit drives the shipped release, and planted bugs live in production (issue 28, items 1-2).

Item 1: for every catalogue target and mode, the production path of its release (the object or function the
estimator's own ``fit`` draws through) is replaced by one that raises; the audit must then raise, and so must a
small production fit (proof that the replaced path is the one ``fit`` uses). A case that rebuilt its release
from lower-level pieces would run on unchanged and fail here.

Item 2: ``planted_bug`` is consulted where every release draws its noise. Oracles: the releases' own noise law
(a quarter of the noise is a quarter of the spread), and the audit's verdict at the page's default trials (a
release with a quarter of its noise has a true epsilon well above its claim).
"""
from __future__ import annotations

import numpy as np
import pytest

from engine.methods import tukey_em
from engine.methods.adassp import AdaSSP
from engine.methods.audit_catalog import AUDIT_TARGETS, DEFAULT_TRIALS, make_case, plants_bugs
from engine.methods.dp_cca import DPCCA
from engine.methods.dp_pcr import DPPCR
from engine.methods.edpls import EDPLS
from engine.methods.edpls.prepared import _Prepared
from engine.methods.edpls.recommended import StrictEDPLS, make_strict_edpls
from engine.methods.pca_gauss import PCAGauss
from engine.methods.var_admm import defence
from engine.privacy import GaussianMechanism, LaplaceMechanism
from engine.privacy.audit import AUDIT_CONFIDENCE, planted_bug, run_case
from engine.privacy.ranges import RANGE_RELEASE


class _Production(Exception):
    """Raised by a replaced production path."""


def _raise(*args, **kwargs):
    raise _Production("the production release path was called")


def _data(m=8, n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = np.cumsum(rng.normal(size=(n, m)), axis=1) / m
    return X, np.clip(X[:, 0] + 0.1 * rng.normal(size=n), -1.0, 1.0)


def _fit_edpls(mode):
    X, y = _data(3)
    params = dict(x_bound=3.0, y_bound=1.0) if mode == "strict" else {}
    return lambda: EDPLS(1, 1.0, 1e-5, mode=mode, **params).fit(X, y)


def _fit_recommended():
    X, y = _data(8, n=600)  # enough rows that the fit refines its declared range (with 60 it keeps it as is)
    make_strict_edpls(1.0, 1e-5, y_range=(-1.0, 1.0)).fit(X, y)


def _fit_dp_pcr():
    X, y = _data(3)
    DPPCR(1, 1.0, 1e-5, x_bound=3.0, y_bound=1.0).fit(X, y)


def _fit_pca_gauss():
    X, _ = _data(2)
    PCAGauss(2, 1.0, mode="strict", pca_source="laplace", bounds=(-5.0, 5.0)).fit(X)


def _fit_dp_cca(mode):
    X, y = _data(4)
    params = dict(x_bound=3.0, y_bound=3.0) if mode == "strict" else {}
    return lambda: DPCCA(1, 1.0, 1e-5, mode=mode, **params).fit(X[:, :2], X[:, 2:])


def _fit_var_defence():
    defence.noise_defence(np.random.default_rng(0).uniform(0, 1, (6, 2)), "laplace", 1.0, public_range=(0.0, 1.0))


def _fit_tukey_em():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 1))
    tukey_em.TukeyEM(1.0, 1e-5, n_models=300).fit(x, 2.0 * x[:, 0] + 0.1 * rng.normal(size=600))


def _mechanism_fit(mech):
    return lambda: mech.randomise(np.zeros(3))


#: target -> mode -> ((owner, attribute) of the production path, a production fit that draws through it).
PRODUCTION = {
    "analytic_gaussian": {"strict": ((GaussianMechanism, "randomise"), _mechanism_fit(GaussianMechanism(1.0, 1e-5)))},
    "classic_gaussian": {"strict": ((GaussianMechanism, "randomise"),
                                    lambda: AdaSSP(1.0, 1e-5).fit(*_data(3)))},
    "laplace": {"strict": ((LaplaceMechanism, "randomise"), _mechanism_fit(LaplaceMechanism(1.0)))},
    "edpls": {"strict": ((_Prepared, "strict_release"), _fit_edpls("strict")),
              "paper": ((_Prepared, "_draw_paper"), _fit_edpls("paper"))},
    "edpls_recommended": {"strict": ((StrictEDPLS, "mechanisms"), _fit_recommended)},
    "edpls_recommended_cross": {"strict": ((StrictEDPLS, "mechanisms"), _fit_recommended)},
    "dp_pcr": {"strict": ((DPPCR, "_release"), _fit_dp_pcr)},
    "tukey_em": {"strict": ((tukey_em, "tukey_fit"), _fit_tukey_em)},
    "pca_gauss": {mode: ((LaplaceMechanism, "randomise"), _fit_pca_gauss) for mode in ("strict", "paper")},
    "dp_cca": {mode: ((DPCCA, "_draw"), _fit_dp_cca(mode)) for mode in ("strict", "paper")},
    **{f"var_admm_{law}": {mode: ((defence, "draw_noise"), _fit_var_defence)}
       for law, mode in (("laplace", "strict"), ("gaussian", "strict"), ("uniform", "paper"))},
}

CASES = [(target, mode) for target, (_, modes) in AUDIT_TARGETS.items() for mode in modes]


def test_every_catalogue_target_and_mode_names_its_production_path():
    assert {(t, m) for t, modes in PRODUCTION.items() for m in modes} == set(CASES)


@pytest.mark.parametrize("target, mode", CASES)
def test_audit_raises_when_the_production_path_raises(monkeypatch, target, mode):
    (owner, attribute), production_fit = PRODUCTION[target][mode]
    assert run_case(make_case(target, mode), n_trials=200, random_state=0)["trials"] == 200  # runs unpatched
    monkeypatch.setattr(owner, attribute, _raise)
    with pytest.raises(_Production):
        production_fit()  # the replaced path is the one the shipped fit draws through
    with pytest.raises(_Production):
        run_case(make_case(target, mode), n_trials=200, random_state=0)


@pytest.mark.slow  # 400 StrictEDPLS fits, 11 s (pytest --durations, load 7-15, 2026-11-27): out of the fast lane
def test_noise_scale_bug_quarters_the_spread_of_strict_edpls_coefficients():
    """200 StrictEDPLS fits with and without ``planted_bug("noise_scale", 0.25)``: the coefficients' spread
    shrinks 4x. The fit's post-processing is linear in the noise up to O(||E|| / lambda); ridge_scale = 16 makes
    lambda = 16 sigma sqrt(d), 16 times the spectral norm of the moment noise, so the ratio is 4 to a few per cent;
    with 200 fits per side a ratio of spreads has a sampling error of about 7 %: [3.4, 4.6] is 2 to 3 of it."""
    from engine.data.sample_generators import make_nir_spectra

    data = make_nir_spectra(n_samples=500, n_channels=40, random_state=2)
    X, y = data.X, data.Y[:, 0]

    def coefs(seed):
        rng = np.random.default_rng(seed)  # one generator, 200 successive fits: independent draws
        est = make_strict_edpls(1.0, 1e-5, y_range=(7.0, 13.0), n_components="ridge", ridge_scale=16.0,
                                random_state=rng)
        return np.array([est.fit(X, y).coef_ for _ in range(200)])

    real = coefs(1)
    with planted_bug("noise_scale", 0.25):
        bugged = coefs(2)
    ratio = np.sqrt(real.var(axis=0).sum() / bugged.var(axis=0).sum())
    assert 3.4 < ratio < 4.6, ratio


@pytest.mark.parametrize("kind", ["noise_scale", "sensitivity_scale"])
def test_planted_bug_scales_every_release_of_a_fit_and_ends_with_the_block(kind):
    X, y = _data(8, 300)
    # the declared range as is (no private refinement): sample_releases draws the count and the two moments
    est = make_strict_edpls(1.0, 1e-5, y_range=(-1.0, 1.0), refine_y_range=False)
    real = est.sample_releases(X, y, 4000, 0)
    with planted_bug(kind, 0.25):
        bugged = est.sample_releases(X, y, 4000, 0)
    after = est.sample_releases(X, y, 4000, 0)
    for key in ("count", "moments", "cross"):
        # same seed: bugged = exact + noise / 4 and real = exact + noise, so bugged - real / 4 = 3/4 exact is
        # the same for every replicate (up to rounding: values below 1e3, so 1e-9 is 1e4 ulps)
        resid = bugged[key] - 0.25 * real[key]
        np.testing.assert_allclose(resid, np.broadcast_to(resid[:1], resid.shape), rtol=0, atol=1e-9)
        assert real[key].std(axis=0).max() > 1.0  # there is noise to scale
        np.testing.assert_array_equal(after[key], real[key])
    assert len(est.fit(X, y).privacy_ledger_) == 3  # the ledger keeps its claim


def test_planted_bug_is_refused_when_misspelt():
    with pytest.raises(ValueError, match="kind"):
        with planted_bug("noise", 0.25):
            pass
    with pytest.raises(ValueError, match="factor"):
        with planted_bug("noise_scale", 0.0):
            pass


STRICT = [t for t in AUDIT_TARGETS if plants_bugs(t)]


#: the edPLS targets take 4-10 s each (pytest --durations, load 7-15, 2026-11-27):
#: out of the fast lane, the other targets stay in it
SLOW_TARGETS = {"edpls", "edpls_recommended", "edpls_recommended_cross"}


@pytest.mark.parametrize("target", [pytest.param(t, marks=pytest.mark.slow) if t in SLOW_TARGETS else t
                                    for t in STRICT])
def test_quartered_noise_is_caught_on_every_strict_target_at_default_trials(target):
    with planted_bug("noise_scale", 0.25):
        r = run_case(make_case(target), DEFAULT_TRIALS, 7, alpha=1 - AUDIT_CONFIDENCE)
    assert r["eps_lb"] > r["claimed_eps"], (target, r["eps_lb"], r["claimed_eps"])


def test_recommended_case_samples_the_private_range_through_the_shipped_code(monkeypatch):
    """The recommended fit refines its declared range privately by default: the catalogue case's draws include
    the range's histogram, drawn by ``StrictEDPLS.sample_releases`` from the fit's own ``range_input`` and
    release object. Replacing ``range_input`` (what the fit's histogram counts) breaks the fit and the audit."""
    case = make_case("edpls_recommended")
    out = case.release(case.D, np.random.default_rng(0), 5)
    # the audited data are big enough that the fit itself draws the histogram (its count's lower bound passes)
    fitted = make_strict_edpls(1.0, 1e-5, y_range=(-2.0, 2.0), random_state=0).fit(*case.D)
    assert RANGE_RELEASE in [r.name for r in fitted.privacy_ledger_.entries]
    # one calibration for the fit and the audit: the fit's for its noisy count, the audit's for D's count
    pub = fitted.public_setup(case.D[0].shape[1])
    cal = fitted.release_calibration(pub, fitted.choices_["n_hat"])
    assert {k: v["sigma"] for k, v in fitted.choices_["budget"].items()} == pytest.approx(
        {k: cal["sigmas"][k] for k in fitted.choices_["budget"]}, rel=1e-12)
    at_d = fitted.release_calibration(pub, float(len(case.D[1])))["sigmas"][RANGE_RELEASE]
    # the histogram in two halves (the fit's moments path): sqrt(2) sigma each, together the calibrated sigma
    assert f"sigma {at_d * 2 ** 0.5:.4g} each, together sigma {at_d:.4g})" in case.note
    est = make_strict_edpls(1.0, 1e-5, y_range=(-2.0, 2.0))
    sample = est.sample_releases(*case.D, 5, 0, range_bins=[0, 1], zoom_bins=[3])
    assert sample["range"].shape == (5, 2) and sample["zoom"].shape == (5, 1)
    d = sample["d"]
    # count + the one log bin and the one zoom bin the added row changes + the upper triangle of Z'Z + Z'y~
    assert out.shape == (5, 1 + 2 + (d + 1) * (d + 2) // 2 + d + 1)
    assert make_case("edpls_recommended").claimed_eps == 1.0
    r = run_case(make_case("edpls_recommended_cross"), n_trials=200, random_state=0)
    assert r["trials"] == 200
    monkeypatch.setattr(StrictEDPLS, "range_input", _raise)
    with pytest.raises(_Production):
        _fit_recommended()
    with pytest.raises(_Production):
        run_case(make_case("edpls_recommended"), n_trials=200, random_state=0)


def test_tukey_em_takes_no_planted_bug():
    with pytest.raises(ValueError, match="no planted bug"):
        make_case("tukey_em", "strict", 1.0, 1e-5, "noise_quartered")
