"""Paper mode's RMSEP that rises with epsilon on corn: the algorithm, not our implementation.

Oracles: diPLSlib's ``edpls`` (the authors' code) with its calibration made to return sqrt(sigma), so that
it applies std sigma (it squares the calibrated value, spec Sec. 4.4): our ``noise_std="sigma"`` paper mode
must then give the very same coefficients from the same Generator, and the authors' code's own RMSEP curve
must rise the same way. Then ``paper_curve_diagnosis``'s mechanism: removing c's signal (same noise)
flattens the curve.
"""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.methods.edpls import EDPLS
from engine.methods.edpls.paper_notes import paper_curve_diagnosis, paper_curve_note

CORN = Path(__file__).resolve().parents[2] / "shared" / "data" / "corn"


@pytest.fixture(scope="module")
def corn_split():
    if not (CORN / "corn_m5spec.csv").exists():
        pytest.skip("corn data not present")
    X = pd.read_csv(CORN / "corn_m5spec.csv").to_numpy(dtype=float)
    y = pd.read_csv(CORN / "corn_propvals.csv")["Moisture"].to_numpy(dtype=float)
    idx = np.random.default_rng(0).permutation(80)
    return X, y, idx[:56], idx[56:]


@pytest.fixture
def diplslib_sigma(monkeypatch):
    """diPLSlib's edpls applying std sigma (not sigma^2): the calibration returns sqrt(sigma)."""
    F = pytest.importorskip("diPLSlib.functions")
    orig = F.calibrateAnalyticGaussianMechanism
    monkeypatch.setattr(F, "calibrateAnalyticGaussianMechanism",
                        lambda epsilon, delta, GS, tol=1e-12: np.sqrt(orig(epsilon, delta, GS, tol)))
    return F


@pytest.mark.parametrize("eps", [0.1, 10.0])
def test_sigma_mode_is_diplslib_with_std_sigma(corn_split, diplslib_sigma, eps):
    X, y, tr, _ = corn_split
    Xt, yt = X[tr], y[tr]
    theirs = diplslib_sigma.edpls(Xt - Xt.mean(0), (yt - yt.mean())[:, None], 5, eps, 0.01,
                                  rng=np.random.default_rng(7))
    ours = EDPLS(n_components=5, epsilon=eps, delta=0.01, ymax="signed", noise_std="sigma",
                 random_state=np.random.default_rng(7)).fit(Xt, yt)
    b = theirs[0].ravel()
    assert np.abs(ours.coef_ - b).max() <= 1e-6 * np.abs(b).max()
    np.testing.assert_allclose(ours.x_weights_, theirs[1], atol=1e-8)


def test_authors_code_rmsep_rises_with_epsilon_too(corn_split, diplslib_sigma):
    """The authors' code (std sigma) on the same split: median RMSEP at eps = 10 well above eps = 0.1."""
    X, y, tr, te = corn_split
    Xt, yt = X[tr], y[tr]
    mu, ym = Xt.mean(0), yt.mean()
    rng = np.random.default_rng(3)
    med = {}
    for eps in (0.1, 10.0):
        r = []
        for _ in range(60):
            b = diplslib_sigma.edpls(Xt - mu, (yt - ym)[:, None], 5, eps, 0.01, rng=rng)[0].ravel()
            r.append(np.sqrt(np.mean(((X[te] - mu) @ b + ym - y[te]) ** 2)))
        med[eps] = float(np.median(r))
    assert med[10.0] > 1.5 * med[0.1], med


def test_diagnosis_c_signal_drives_the_rise(corn_split):
    X, y, tr, te = corn_split
    d = paper_curve_diagnosis(X[tr], y[tr], X[te], y[te], [0.1, 10.0, 1000.0], 5, 150, random_state=2)
    lo, hi, top = d.iloc[0], d.iloc[1], d.iloc[2]
    assert hi["median"] > 1.5 * lo["median"]  # the rise
    assert hi["median_c_noise_only"] < 1.2 * lo["median_c_noise_only"]  # flat without c's signal
    assert hi["nsr_c1"] < 0.3 < 1.0 < lo["nsr_c1"]  # c accurate at eps 10, noise at 0.1
    assert hi["cos_w1"] < 3 * hi["cos_random"]  # weights still random directions at eps 10
    assert top["cos_w1"] > 0.3 and top["median"] < lo["median"]  # aligned weights: the curve falls
    note = paper_curve_note(d)
    assert note is not None and "not a bug" in note and f"{hi['median']:.3g}" in note


def test_note_none_when_curve_falls_and_strict_refused(corn_split):
    flat = pd.DataFrame({"epsilon": [0.1, 1.0, 10.0], "median": [0.5, 0.52, 0.3]})
    assert paper_curve_note(flat) is None
    X, y, tr, te = corn_split
    with pytest.raises(ValueError, match="paper-mode"):
        paper_curve_diagnosis(X[tr], y[tr], X[te], y[te], [1.0], 2, 5, mode="strict", x_bound=1.0, y_bound=1.0)
