"""Strict DP-CCA with a public centre and bounds from declared-public rows (engine.methods.dp_cca.public).

Oracles: closed forms (column means, numpy's quantile of the centred row norms), the row-wise property
(each output row is a function of its own input row), and the rule "nothing private sets a public quantity":
replacing every private row changes no public number.
"""
import math

import numpy as np
import pytest

from engine.data.samples import make_two_views
from engine.methods.dp_cca import DPCCA
from engine.methods.dp_cca.public import PublicDPCCA, public_setting, rowwise_transform
from engine.methods.dp_cca.sensitivity import release_sensitivity


@pytest.fixture(scope="module")
def views():
    tv = make_two_views(n_samples=1600, dx=6, dy=4, random_state=1)
    return tv.X[:300], tv.Y[:300], tv.X[300:1100], tv.Y[300:1100], tv.X[1100:], tv.Y[1100:]


def test_setting_is_the_closed_form_of_the_public_rows(views):
    Xp, Yp = views[0], views[1]
    s = public_setting(Xp, Yp, quantile=0.9)
    np.testing.assert_allclose(s.x_center, Xp.mean(0), rtol=1e-12)
    np.testing.assert_allclose(s.y_center, Yp.mean(0), rtol=1e-12)
    assert s.x_bound == pytest.approx(np.quantile(np.linalg.norm(Xp - Xp.mean(0), axis=1), 0.9), rel=1e-12)
    assert s.y_bound == pytest.approx(np.quantile(np.linalg.norm(Yp - Yp.mean(0), axis=1), 0.9), rel=1e-12)
    top = public_setting(Xp, Yp, quantile=1.0)
    assert top.x_bound == pytest.approx(np.linalg.norm(Xp - Xp.mean(0), axis=1).max(), rel=1e-12)
    assert s.n_public == 300 and "300 declared-public rows" in s.describe()


def test_private_rows_change_nothing_public(views):
    Xp, Yp, Xa, Ya, Xb, Yb = views
    a = PublicDPCCA(Xp, Yp, n_components=2, epsilon=1.0, random_state=0).fit(Xa, Ya)
    b = PublicDPCCA(Xp, Yp, n_components=2, epsilon=1.0, random_state=0).fit(5.0 * Xb[:400] + 3.0, -Yb[:400])
    for name in ("x_center", "y_center", "x_bound", "y_bound"):
        np.testing.assert_array_equal(getattr(a.public_setting_, name), getattr(b.public_setting_, name))
        np.testing.assert_array_equal(getattr(a.dpcca_, name), getattr(b.dpcca_, name))
    # and the public rows do set them (the check above could not pass by ignoring every input)
    c = PublicDPCCA(Xp[:150] + 1.0, Yp[:150], n_components=2, epsilon=1.0, random_state=0).fit(Xa, Ya)
    assert not np.allclose(c.public_setting_.x_center, a.public_setting_.x_center)
    assert c.public_setting_.x_bound != a.public_setting_.x_bound


def test_fit_is_strict_dpcca_with_the_public_setting(views):
    Xp, Yp, Xa, Ya, Xt, Yt = views
    m = PublicDPCCA(Xp, Yp, n_components=2, epsilon=2.0, random_state=3).fit(Xa, Ya)
    ref = DPCCA(2, 2.0, 1e-5, mode="strict", random_state=3, **m.public_setting_.params()).fit(Xa, Ya)
    np.testing.assert_array_equal(m.x_weights_, ref.x_weights_)
    # per-view bounds with a public centre: sqrt(3/2) (rows scaled by 1/sqrt(2)); private centring: sqrt(32/27)
    assert m.dpcca_.sensitivity_ == pytest.approx(math.sqrt(1.5))
    assert release_sensitivity("per_view", "private") == pytest.approx(math.sqrt(32 / 27))
    fresh = PublicDPCCA(Xp, Yp, n_components=2, epsilon=2.0).fit(Xa, Ya)
    assert len(fresh.privacy_ledger_) == 1 and fresh.privacy_ledger_.status == "proven"
    assert m.score(Xt, Yt) == pytest.approx(float(m.held_out_correlations(Xt, Yt).sum()))
    assert m.transform(Xt).shape == (len(Xt), 2)


def test_rowwise_only_and_rows_independent():
    rng = np.random.default_rng(0)
    S = 0.5 + np.cumsum(rng.normal(0, 0.01, size=(12, 60)), axis=1)
    for chain in ("snv", "sg1", "snv+sg1", "detrend"):
        whole = rowwise_transform(S, chain, bands=6)
        one_by_one = np.vstack([rowwise_transform(S[i:i + 1], chain, bands=6) for i in range(len(S))])
        np.testing.assert_allclose(whole, one_by_one, rtol=1e-12, atol=1e-14)
    for chain in ("msc", "center", "autoscale", "snv+center", "nosuch"):
        with pytest.raises(ValueError, match="learns from the rows"):
            rowwise_transform(S, chain)
    with pytest.raises(ValueError, match="quantile"):
        public_setting(S, S[:, :3], quantile=0.0)
