"""Preprocessing chains (engine.data.preprocess) on the corn spectra, against independent oracles.

Oracles: scipy.signal.savgol_filter (Savitzky-Golay), scipy.signal.detrend (linear detrend),
numpy's difference matrix (airPLS penalty), the definitions of SNV and MSC written out in numpy.
"""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.signal import detrend, savgol_filter
from sklearn.base import clone

from engine.data.preprocess import CHAIN_INFO, CHAINS, AirPlsOrder, difference_penalty, make_chain

CORN = Path(__file__).resolve().parents[2] / "shared" / "data" / "corn"


@pytest.fixture(scope="module")
def corn():
    if not (CORN / "corn_m5spec.csv").exists():
        pytest.skip("corn data not present")
    X = pd.read_csv(CORN / "corn_m5spec.csv").to_numpy(dtype=float)
    return X[:56], X[56:]


ALL = list(CHAINS) + ["snv+sg1"]


@pytest.mark.parametrize("name", ALL)
def test_every_chain_runs_on_corn_and_preserves_shape(corn, name):
    train, test = corn
    pipe = make_chain(name).fit(train)
    for X in (train, test):
        Z = pipe.transform(X)
        assert Z.shape == X.shape
        assert np.all(np.isfinite(Z))
    # fitting twice on the same rows is deterministic
    np.testing.assert_array_equal(make_chain(name).fit(train).transform(test), pipe.transform(test))


def test_chain_info_covers_every_chain():
    assert set(CHAIN_INFO) == set(CHAINS)
    for info in CHAIN_INFO.values():
        assert isinstance(info["learns_from_data"], bool) and info["strict_note"]
    learners = {k for k, v in CHAIN_INFO.items() if v["learns_from_data"]}
    assert learners == {"msc", "center", "autoscale"}


def test_msc_reference_is_the_training_mean_only(corn):
    train, test = corn
    pipe = make_chain("msc").fit(train)
    ref = pipe.named_steps["msc"].reference_
    np.testing.assert_allclose(ref, train.mean(axis=0), rtol=0, atol=1e-14)
    assert not np.allclose(ref, np.vstack([train, test]).mean(axis=0))
    # oracle: x -> (x - a) / b with x = a + b ref by least squares
    A = np.column_stack([np.ones_like(ref), ref])
    coef, *_ = np.linalg.lstsq(A, test.T, rcond=None)
    np.testing.assert_allclose(pipe.transform(test), ((test.T - coef[0]) / coef[1]).T, rtol=1e-9, atol=1e-10)


def test_scalers_learn_from_training_rows_only(corn):
    train, test = corn
    auto = make_chain("autoscale").fit(train)
    np.testing.assert_allclose(auto.transform(test), (test - train.mean(0)) / train.std(0), rtol=1e-10)
    cen = make_chain("center").fit(train)
    np.testing.assert_allclose(cen.transform(test), test - train.mean(0), atol=1e-14)


def test_snv_matches_its_definition(corn):
    _, test = corn
    Z = make_chain("snv").fit(test).transform(test)
    ref = (test - test.mean(1, keepdims=True)) / test.std(1, keepdims=True)
    np.testing.assert_allclose(Z, ref, atol=1e-12)


@pytest.mark.parametrize("name, window, poly, deriv", [
    ("sg_smooth", 11, 2, 0), ("sg1", 5, 2, 1), ("sg2_nb", 25, 2, 2),
])
def test_savitzky_golay_equals_scipy_along_rows(corn, name, window, poly, deriv):
    train, test = corn
    Z = make_chain(name).fit(train).transform(test)
    ref = savgol_filter(test, window, poly, deriv=deriv, axis=1, mode="nearest")
    np.testing.assert_allclose(Z, ref, rtol=1e-10, atol=1e-13)
    # a row's output does not depend on the other rows
    np.testing.assert_allclose(make_chain(name).fit(train).transform(test[:1]), Z[:1], atol=1e-15)


def test_snv_then_sg1_is_the_composition(corn):
    train, test = corn
    snv = (test - test.mean(1, keepdims=True)) / test.std(1, keepdims=True)
    ref = savgol_filter(snv, 5, 2, deriv=1, axis=1, mode="nearest")
    np.testing.assert_allclose(make_chain("snv+sg1").fit(train).transform(test), ref, atol=1e-12)


def test_detrend_equals_scipy(corn):
    train, test = corn
    np.testing.assert_allclose(make_chain("detrend").fit(train).transform(test), detrend(test, axis=1, type="linear"),
                               atol=1e-10)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("N", [2, 3, 7, 50])
def test_difference_penalty_matches_numpy_difference_matrix(order, N):
    if N <= order or (order == 2 and N == 3):
        pytest.skip("too short (chemotools 0.5's own order-2 matrix is wrong for N = 3: main diagonal 1, 5, 1)")
    D = np.diff(np.eye(N), order, axis=0)
    DtD = D.T @ D
    np.testing.assert_allclose(difference_penalty(N, order, "sparse").toarray(), DtD)
    ab = difference_penalty(N, order, "banded")
    full = np.diag(ab[2]) + np.diag(ab[1, 1:], 1) + np.diag(ab[1, 1:], -1)
    if N > 2:
        full += np.diag(ab[0, 2:], 2) + np.diag(ab[0, 2:], -2)
    np.testing.assert_allclose(full, DtD)


def test_airpls_removes_a_baseline_and_is_row_wise():
    grid = np.arange(300.0)
    peaks = 3 * np.exp(-0.5 * ((grid - 100) / 4) ** 2) + 2 * np.exp(-0.5 * ((grid - 220) / 6) ** 2)
    baseline = 0.5 + 0.004 * grid
    X = np.vstack([peaks + baseline, 2 * peaks + 1.5 * baseline])
    pipe = make_chain("airpls").fit(X)
    Z = pipe.transform(X)
    assert Z.shape == X.shape
    # output is spectrum minus baseline: far from the peaks it is close to zero
    far = (np.abs(grid - 100) > 25) & (np.abs(grid - 220) > 30)
    # (the first-order penalty follows a sloped baseline less closely than the second-order one)
    assert np.abs(Z[:, far]).max() < 0.15 * np.abs(X[:, far]).max()
    assert Z[0, 100] == pytest.approx(3.0, abs=0.3) and Z[1, 100] == pytest.approx(6.0, abs=0.6)
    # no warm start: one row's output is the same alone or with others
    np.testing.assert_allclose(make_chain("airpls").fit(X[::-1]).transform(X[:1]), Z[:1], atol=1e-12)
    step = pipe.named_steps["airpls"]
    assert (step.lam, step.nr_iterations, step.diff_order, step.warm_start) == (100, 15, 1, False)


def test_airpls_order_params_clone_and_validate():
    a = AirPlsOrder(lam=100, nr_iterations=15, diff_order=2, warm_start=True)
    b = clone(a)
    assert b.get_params()["diff_order"] == 2 and b.get_params()["warm_start"] is True
    with pytest.raises(ValueError):
        AirPlsOrder(diff_order=3).fit(np.ones((2, 10)))


def test_make_chain_params_lists_and_errors():
    p = make_chain("sg1", sg__window_length=7)
    assert p.named_steps["sg"].window_length == 7
    from chemotools.scatter import StandardNormalVariate
    q = make_chain(["detrend", StandardNormalVariate(), ("last", make_chain("sg1").steps[0][1])])
    assert len(q.steps) == 3
    with pytest.raises(ValueError, match="unknown preprocessing chain"):
        make_chain("wavelets")
