"""OpenDP-backed noise samplers: checked against distribution facts, not against OpenDP itself.

The draws are fresh OS-entropy noise (no seed), so each tolerance is several standard errors wide.
"""
import numpy as np
import pytest

pytest.importorskip("opendp")
stats = pytest.importorskip("scipy.stats")

from engine.privacy.samplers import (  # noqa: E402
    opendp_gaussian_vector,
    opendp_laplace_vector,
    opendp_symmetric_gaussian,
)

N = 20_000  # std of the sample std is ~0.5% of sigma; of the mean absolute deviation ~0.7% of b


@pytest.mark.parametrize("sigma", [0.03, 1.0, 7.5])
def test_gaussian_std_matches_sigma(sigma):
    x = opendp_gaussian_vector(sigma, N)
    assert x.shape == (N,) and x.dtype == np.float64
    assert abs(x.std() / sigma - 1) < 0.03
    assert abs(x.mean()) < 5 * sigma / np.sqrt(N)
    # Shape of the distribution, not just its scale: Kolmogorov-Smirnov against N(0, sigma^2).
    assert stats.kstest(x / sigma, "norm").pvalue > 1e-4


def test_symmetric_gaussian_is_exactly_symmetric_with_sigma_entries():
    sigma, dim = 2.0, 150
    e = opendp_symmetric_gaussian(sigma, dim)
    assert e.shape == (dim, dim)
    assert np.array_equal(e, e.T)
    upper = e[np.triu_indices(dim)]  # 11,325 independent entries
    assert abs(upper.std() / sigma - 1) < 0.04
    assert abs(np.diag(e).std() / sigma - 1) < 0.25  # 150 diagonal draws


@pytest.mark.parametrize("b", [0.5, 3.0])
def test_laplace_mean_absolute_deviation_is_b(b):
    x = opendp_laplace_vector(b, N)
    assert x.shape == (N,)
    assert abs(np.abs(x).mean() / b - 1) < 0.03
    assert abs(x.std() / (np.sqrt(2) * b) - 1) < 0.05
    assert stats.kstest(x / b, "laplace").pvalue > 1e-4


def test_two_calls_draw_fresh_noise():
    a, b = opendp_gaussian_vector(1.0, 1000), opendp_gaussian_vector(1.0, 1000)
    assert not np.array_equal(a, b)
    assert len(np.intersect1d(a, b)) < 5
    m1, m2 = opendp_symmetric_gaussian(1.0, 20), opendp_symmetric_gaussian(1.0, 20)
    assert not np.array_equal(m1, m2)
    l1, l2 = opendp_laplace_vector(1.0, 1000), opendp_laplace_vector(1.0, 1000)
    assert not np.array_equal(l1, l2)


def test_edge_cases():
    assert np.array_equal(opendp_gaussian_vector(0.0, 4), np.zeros(4))
    assert opendp_gaussian_vector(1.0, 0).shape == (0,)
    assert opendp_symmetric_gaussian(1.0, 0).shape == (0, 0)
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            opendp_gaussian_vector(bad, 3)
        with pytest.raises(ValueError):
            opendp_laplace_vector(bad, 3)
    with pytest.raises(ValueError):
        opendp_symmetric_gaussian(1.0, -1)
