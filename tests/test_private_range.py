"""StrictEDPLS with no bound to guess (issue #30): y_range=None buys a private range of y from a budget share."""
from __future__ import annotations

import numpy as np
import pytest

from engine.data.sample_generators import make_nir_spectra
from engine.methods.edpls import make_strict_edpls
from engine.privacy.ranges import LOG_GRID, RANGE_RELEASE, private_range


def test_private_range_covers_the_bulk_and_is_a_grid_interval():
    rng = np.random.default_rng(0)
    y = rng.normal(10.2, 0.4, size=5000)
    (lo, hi), sigma, facts = private_range(y, 0.1, 1e-6, rng)
    assert sigma > 0 and lo < hi
    # a dense response: the second half zooms into the first half's window (equal bins between log-grid edges)
    assert "zoomed" in facts["how"]
    assert lo <= np.quantile(y, 0.05) and hi >= np.quantile(y, 0.95)
    assert hi - lo < 2.5  # tighter than the log grid's windows (a documented-wide range: 7-23 %)
    (lo, hi), _, _ = private_range(y, 0.1, 1e-6, rng, zoom=False)  # one draw: edges of the log grid
    assert lo in LOG_GRID and hi in LOG_GRID and lo <= np.quantile(y, 0.05) and hi >= np.quantile(y, 0.95)
    assert private_range(y, np.inf, 1e-6, rng)[0] == (y.min(), y.max())


def test_the_two_halves_compose_to_the_whole_and_the_zoom_narrows_a_dense_response():
    """The halves' Gaussian-DP mu compose to the whole's (closed form mu^2 = mu_1^2 + mu_2^2: sigma_half =
    sqrt(2) sigma, to the calibration's bisection tolerance; the ledger's exact total and dp-accounting's PLD
    accountant agree with the single release's epsilon), and corn-starch-like data (60 rows, sd 0.8 around 65,
    which the log grid puts in [56.2, 75.0]) get a range a third as wide or less that still holds the bulk."""
    import dp_accounting

    from engine.privacy.ledger import PrivacyLedger
    from engine.privacy.mechanisms import GaussianMechanism
    from engine.privacy.ranges import RANGE_RELEASE_2, ZOOM_RELEASE, half_mechanism

    whole = GaussianMechanism(1.6, 8e-6, 1.0, "analytic")
    half = half_mechanism(whole)
    assert half.sigma == pytest.approx(np.sqrt(2.0) * whole.sigma, rel=1e-9) and half.delta == 4e-6
    pld = dp_accounting.pld.PLDAccountant()
    pld.compose(dp_accounting.GaussianDpEvent(half.sigma), 2)
    assert pld.get_epsilon(8e-6) == pytest.approx(1.6, rel=2e-3)  # the PLD's discretisation error
    assert half_mechanism(GaussianMechanism(0.5, 1e-6, 1.0, "classic")) is None
    rng = np.random.default_rng(7)
    widths, held = [], []
    for _ in range(50):
        y = rng.normal(64.7, 0.8, size=60)
        led = PrivacyLedger()
        (lo, hi), _, _ = private_range(y, 1.6, 8e-6, np.random.default_rng(rng.integers(1 << 32)), ledger=led,
                                       mechanism=whole)
        names = [r.name for r in led.entries]
        assert names[0] == RANGE_RELEASE and names[1] in (ZOOM_RELEASE, RANGE_RELEASE_2) and len(names) == 2
        assert led.total("gdp", 8e-6)[0] == pytest.approx(1.6, rel=1e-9)
        widths.append(hi - lo)
        held.append(np.mean((y >= lo) & (y <= hi)))
    assert np.median(widths) <= (75.0 - 56.2) / 3, widths
    assert np.median(held) >= 0.9, held


def test_private_range_grows_into_thin_tails_and_not_into_empty_bins():
    """A response spread thinly over many bins (like scikit-learn's diabetes: 354 rows over 25-346) keeps its
    tails: without the growth the finest passing level held only the densest stretch (here, at epsilon = 1, a
    median of 86 % of the rows inside the range over 20 draws; with it 97 %, the fewest 93 %; inside
    StrictEDPLS on diabetes [115, 274] clipped 28 % of the rows). Oracle: the rows themselves; a response at one
    value never grows into the empty bins around it: its zoomed range is one zoom bin widened by ``ZOOM_MARGIN``
    on each side unless a growth step passed an empty window (probability <= 1 % per step, so over 200 draws
    the expected number of grown ranges is <= 2 in all; the test allows 10), and a false step widens the range by
    at most 8 bins, so no range here exceeds a factor 10."""
    from engine.privacy.ranges import ZOOM_BINS, ZOOM_MARGIN

    rng = np.random.default_rng(1)
    y = np.exp(rng.uniform(np.log(25.0), np.log(346.0), size=354))  # about 12 rows per 15 % bin
    covered = []
    for _ in range(20):
        (lo, hi), _, facts = private_range(y, 1.0, 1e-6, np.random.default_rng(rng.integers(1 << 32)))
        covered.append(np.mean((y >= lo) & (y <= hi)))
    assert np.median(covered) >= 0.92, covered
    one_value = np.full(2000, 10.2)
    k = np.searchsorted(LOG_GRID, 10.2) - 1  # its log bin; the zoom grid spans it and one bin on each side
    zoom_bin = (LOG_GRID[k + 2] - LOG_GRID[k - 1]) / ZOOM_BINS
    grown = 0
    for _ in range(200):
        (lo, hi), _, facts = private_range(one_value, 1.0, 1e-6, np.random.default_rng(rng.integers(1 << 32)))
        assert lo <= 10.2 <= hi and hi / lo <= 10.0, (lo, hi)
        assert "zoomed" in facts["how"]
        grown += (hi - lo) > (1 + 2 * ZOOM_MARGIN) * zoom_bin * (1 + 1e-9)
    assert grown <= 10


def test_strict_edpls_drops_slopes_that_fail_the_gain_test_and_keeps_useful_ones():
    """A response unrelated to the spectra gets slopes 0 (the private mean of y) in most fits: the noisy slopes
    would only add noise. A response the spectra predict keeps its slopes. The rule reads the noisy moments and
    public sigmas only (a Stein estimate of the gain, ``recommended._estimated_gain``)."""
    pub = make_nir_spectra(n_samples=200, random_state=1).X
    data = make_nir_spectra(n_samples=300, random_state=2)
    unrelated = np.random.default_rng(3).permutation(data.Y[:, 0])
    zero = [not np.any(make_strict_edpls(1.0, 1e-5, y_range=(7.0, 23.0), X_public=pub, random_state=s)
                       .fit(data.X, unrelated).coef_) for s in range(10)]
    assert sum(zero) >= 7, zero
    big = make_nir_spectra(n_samples=3000, random_state=4)
    kept = make_strict_edpls(1.0, 1e-5, y_range=(7.0, 23.0), X_public=pub, random_state=5, estimator="moments")
    kept.fit(big.X, big.Y[:, 0])
    assert np.any(kept.coef_) and "gain" not in kept.choices_["model"]


def test_strict_edpls_without_y_range_records_the_range_in_choices_and_ledger():
    pub = make_nir_spectra(n_samples=200, random_state=1).X
    data = make_nir_spectra(n_samples=3000, random_state=2)
    model = make_strict_edpls(1.0, 1e-5, X_public=pub, random_state=0).fit(data.X, data.Y[:, 0])
    names = [r.name for r in model.privacy_ledger_.entries]
    assert names[:2] == ["count n", RANGE_RELEASE] and len(names) in (4, 5)  # the range in two halves
    led = model.privacy_ledger_
    assert led.accountant == "gdp" and led.total("gdp", 1e-5)[0] == pytest.approx(1.0, rel=1e-9)
    assert model.choices_["y_source"].startswith("private range")
    lo, hi = model.y_range_
    assert model.choices_["y_center"] == pytest.approx((lo + hi) / 2)
    # at epsilon = inf: no bound needed, no ledger
    free = make_strict_edpls(np.inf, 1e-5, X_public=pub).fit(data.X, data.Y[:, 0])
    assert len(free.privacy_ledger_) == 0 and free.y_range_ == (data.Y[:, 0].min(), data.Y[:, 0].max())


def test_auto_estimator_choice_depends_on_noisy_quantities_only():
    # replace every private row (same count): with the same noise seed, the noisy count and hence every public
    # choice (estimator, released dimension, model count) are unchanged
    pub = make_nir_spectra(n_samples=200, random_state=1).X
    a = make_nir_spectra(n_samples=6000, random_state=2)
    b = make_nir_spectra(n_samples=6000, random_state=9)
    fits = [make_strict_edpls(1.0, 1e-5, y_range=(7.0, 23.0), X_public=pub, random_state=4).fit(d.X, d.Y[:, 0])
            for d in (a, b)]
    keys = ("d", "d_why", "n_hat", "k")
    assert [f.choices_[k] for k in keys for f in fits[:1]] == [fits[1].choices_[k] for k in keys]
    assert fits[0].choices_["d_why"].startswith("TukeyEM")
    assert fits[0].choices_["tukey"]["m"] == fits[1].choices_["tukey"]["m"]
    assert [r.name for r in fits[0].privacy_ledger_.entries] == [r.name for r in fits[1].privacy_ledger_.entries]
    assert fits[0].privacy_ledger_.total("basic") == pytest.approx((1.0, 1e-5))
    # fewer rows: the moments path, chosen from the same noisy count
    small = make_strict_edpls(1.0, 1e-5, y_range=(7.0, 23.0), X_public=pub, random_state=4).fit(a.X[:2000],
                                                                                                a.Y[:2000, 0])
    assert small.choices_["d_why"].startswith("axes") or small.choices_["d"] == 0


def test_preprocessing_chain_as_a_list_is_part_of_the_release_and_learning_steps_are_refused():
    from engine.methods.edpls.recommended_release import estimator_from_release, to_json

    pub = make_nir_spectra(n_samples=200, random_state=1).X
    data = make_nir_spectra(n_samples=1500, random_state=2)
    a = make_strict_edpls(1.0, 1e-5, y_range=(7.0, 23.0), X_public=pub, preprocessing=["snv", "sg1"],
                          random_state=0).fit(data.X, data.Y[:, 0])
    b = make_strict_edpls(1.0, 1e-5, y_range=(7.0, 23.0), X_public=pub, preprocessing="snv+sg1",
                          random_state=0).fit(data.X, data.Y[:, 0])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.choices_["chain"] == "snv+sg1"
    back = estimator_from_release(to_json(a))
    np.testing.assert_allclose(back.predict(data.X[:5]), a.predict(data.X[:5]), rtol=1e-12)
    with pytest.raises(ValueError, match="'msc' is refused in strict mode"):
        make_strict_edpls(1.0, 1e-5, X_public=pub, preprocessing=["msc", "sg1"]).fit(data.X, data.Y[:, 0])


def test_a_refit_that_draws_no_histogram_keeps_no_stale_range_and_every_path_spends_the_whole_budget():
    """A refit that draws no histogram (``refine_y_range=False``: the declared range as is) shows no range from
    the fit before. A declared range is refined whatever the count (60 rows included), and the releases spend
    the whole budget under the fit's accountant: on the moments path the histogram's two halves (exact under
    Gaussian DP), on the TukeyEM path one draw (its share is the one the fit calibrated with, basic
    composition)."""
    from engine.privacy.ranges import RANGE_RELEASE_2, ZOOM_RELEASE

    pub = make_nir_spectra(n_samples=200, random_state=1).X
    data = make_nir_spectra(n_samples=1500, random_state=2)
    est = make_strict_edpls(1.0, 1e-5, y_range=(7.0, 23.0), X_public=pub, random_state=0)
    est.fit(data.X, data.Y[:, 0])
    assert est.y_range_ is not None and RANGE_RELEASE in [r.name for r in est.privacy_ledger_.entries]
    est.set_params(refine_y_range=False).fit(data.X[:60], data.Y[:60, 0])
    assert est.y_range_ is None and est.choices_["y_source"].startswith("midpoint and half-width of y_range")
    assert RANGE_RELEASE not in [r.name for r in est.privacy_ledger_.entries]
    for estimator, halves in (("moments", 1), ("tukey", 0)):
        m = make_strict_edpls(1.0, 1e-5, y_range=(7.0, 23.0), X_public=pub, random_state=0, estimator=estimator)
        led = m.fit(data.X[:60], data.Y[:60, 0]).privacy_ledger_
        names = [r.name for r in led.entries]
        assert names.count(RANGE_RELEASE) == 1 and len(set(names) & {RANGE_RELEASE_2, ZOOM_RELEASE}) == halves
        assert m.y_range_ is not None and 7.0 <= m.y_range_[0] < m.y_range_[1] <= 23.0
        total = led.total(led.accountant, 1e-5)[0] if led.accountant != "basic" else led.total("basic")[0]
        assert total == pytest.approx(1.0, rel=1e-9), (estimator, led.accountant, total)


def test_auto_takes_tukey_em_on_public_axes_only():
    """Without public spectra "auto" keeps the moments path however many rows (TukeyEM on the data-independent
    basis scattered from 0.3 to 5.9 sigma_y): the choice and its reason are in ``choices_["path"]``; with public
    spectra and the same rows it takes TukeyEM."""
    from engine.methods.edpls.recommended_evaluation import choice_rows

    data = make_nir_spectra(n_samples=6000, random_state=2)
    bare = make_strict_edpls(2.0, 1e-5, y_range=(7.0, 23.0), random_state=0).fit(data.X, data.Y[:, 0])
    assert bare.choices_["path"].startswith("moments path: TukeyEM is chosen on the principal axes of public")
    assert "TukeyEM" not in [r.name for r in bare.privacy_ledger_.entries][-1]
    assert {"what": "Path", "chose": "moment releases", "why": bare.choices_["path"]} in choice_rows(bare)
    pub = make_nir_spectra(n_samples=200, random_state=1).X
    public = make_strict_edpls(2.0, 1e-5, y_range=(7.0, 23.0), X_public=pub, random_state=0).fit(data.X,
                                                                                                 data.Y[:, 0])
    assert public.choices_["path"].startswith("TukeyEM on 5 public axes")


def test_the_zoom_decision_grows_past_a_stricter_threshold():
    """The first half's growth only decides whether the response is compact enough to zoom into, at
    ``ZOOM_GROW_RATE``: an empty 8-bin neighbour whose noisy sum passes the reading's growth threshold
    (``GROW_RATE``) but not that one grows the read range by 8 bins, and leaves the zoom decision's alone. (At
    ``GROW_RATE`` such a false step there skipped the zoom on the edPLS page's default sample, and the log-grid
    read that followed widened the range 15-fold: 1.5 sigma_y.) Closed forms: the thresholds are sigma sqrt(k)
    Phi^-1(1 - rate / 8)."""
    from scipy.stats import norm

    from engine.privacy.ranges import GROW_LEVELS, GROW_RATE, ZOOM_GROW_RATE, _occupied, window_threshold

    sigma, k = 1.0, 8
    z_read, z_zoom = (norm.isf(rate / (2 * len(GROW_LEVELS))) for rate in (GROW_RATE, ZOOM_GROW_RATE))
    assert z_read < z_zoom
    noisy = np.zeros(LOG_GRID.size - 1)
    j = int(np.searchsorted(LOG_GRID, 10.0)) - 1  # the bin just below 10 (its upper edge)
    noisy[j] = 1000.0
    noisy[j + 1:j + 1 + k] = sigma * np.sqrt(k) * (z_read + z_zoom) / 2 / k  # between the two thresholds
    cum = np.concatenate([[0.0], np.cumsum(noisy)])
    tau1 = window_threshold(sigma, 1)
    (lo, hi), how, _ = _occupied(cum, sigma, (1, 2), tau1)
    assert (lo, hi) == (j, j + 1 + k) and "grown by 0 bin(s) below and 8 above" in how
    (lo, hi), how, _ = _occupied(cum, sigma, (1, 2), tau1, grow_rate=ZOOM_GROW_RATE)
    assert (lo, hi) == (j, j + 1) and "grown" not in how
