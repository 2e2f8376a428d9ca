"""Review N3: a row whose spread underflows (``[5e-324, 0, ...]``, a 1e-300 tail, a constant row) must not
make a fit raise where the data without it fit. One definition of a flat row (``engine.data.preprocess.
flat_rows``) serves every row-wise step; each method is fitted with and without such a row (a test per method).
"""
from __future__ import annotations

import numpy as np
import pytest
from chemotools.scatter import StandardNormalVariate

from engine.data.preprocess import FLAT_RELATIVE_SPREAD, flat_rows, make_chain
from engine.data.sample_generators import make_nir_spectra
from engine.methods.dp_cca.public import PublicDPCCA, rowwise_transform
from engine.methods.dp_pcr.estimator import DPPCR
from engine.methods.edpls import EDPLS, make_strict_edpls
from engine.methods.edpls.basis import rowwise_chain
from engine.methods.edpls.pipeline import preprocess
from engine.methods.pca_gauss import PCAGauss

M = 40


def _odd_rows() -> dict:
    spike = np.zeros(M)
    spike[0] = 5e-324  # spread underflows: chemotools' SNV divides by a zero std
    tail = np.full(M, 1e-300)
    tail[-8:] = 3e-300  # a 1e-300 tail: (x - mean)^2 underflows
    return {"subnormal spike": spike, "1e-300 tail": tail, "constant": np.full(M, 0.7), "zeros": np.zeros(M)}


ODD = _odd_rows()


@pytest.fixture(scope="module")
def spectra():
    d = make_nir_spectra(n_samples=120, n_channels=M, random_state=4)
    return d.X, d.Y[:, 0]


def _with(X, y, row):
    return np.vstack([X, row]), np.append(y, y.mean())


def test_one_definition_of_a_flat_row():
    rows = np.vstack([ODD["constant"], ODD["zeros"], ODD["subnormal spike"], ODD["1e-300 tail"],
                      np.linspace(1.0, 1.0 + 1e-14, M), np.linspace(1.0, 1.0 + 1e-9, M), np.arange(M) ** 2.0])
    assert flat_rows(rows).tolist() == [True, True, False, False, True, False, False]
    # the rule is per row and scale-free: it does not depend on the other rows, nor on the row's magnitude
    normal = rows[[0, 4, 5, 6]]
    assert flat_rows(rows[[4]]).tolist() == [True]
    assert flat_rows(normal * 1e-200).tolist() == flat_rows(normal * 1e200).tolist() == [True, True, False, False]
    assert FLAT_RELATIVE_SPREAD == 1e-12
    # the SNV of every step: equal to chemotools' on ordinary rows, no NaN on the odd ones (flat rows -> 0)
    X = np.random.default_rng(0).normal(size=(6, M)) + 3.0
    np.testing.assert_allclose(make_chain("snv").fit(X).transform(X), StandardNormalVariate().fit(X).transform(X),
                               rtol=1e-12, atol=1e-12)  # the same formula on the row scaled by max|x|: a few u
    out = make_chain("snv+sg1").fit(X).transform(rows)
    assert np.isfinite(out).all() and not out[[0, 1, 4]].any()
    np.testing.assert_allclose(make_chain("snv").fit(X).transform(ODD["subnormal spike"][None]),
                               make_chain("snv").fit(X).transform(np.eye(M)[:1]))  # SNV is scale-free
    assert np.isfinite(rowwise_chain("snv+sg1", M).transform(rows)).all()


@pytest.mark.parametrize("odd", list(ODD))
def test_strict_edpls(spectra, odd):
    X, y = spectra
    make_strict_edpls(1.0, 1e-5, y_range=(float(y.min()), float(y.max())), random_state=0).fit(X, y)
    model = make_strict_edpls(1.0, 1e-5, y_range=(float(y.min()), float(y.max())), random_state=0).fit(*_with(X, y,
                                                                                                             ODD[odd]))
    assert np.isfinite(model.coef_).all()


@pytest.mark.parametrize("odd", list(ODD))
def test_edpls_pipeline_with_snv(spectra, odd):
    X, y = spectra
    Xo, yo = _with(X, y, ODD[odd])
    Z = preprocess(Xo, "snv+sg1", np.arange(len(yo)))
    assert np.isfinite(Z).all()
    model = EDPLS(n_components=2, epsilon=1.0, random_state=0).fit(Z, yo)
    assert np.isfinite(model.coef_).all()


@pytest.mark.parametrize("odd", list(ODD))
def test_public_dp_cca_with_snv(spectra, odd):
    X, _ = spectra
    rng = np.random.default_rng(1)
    Y = X[:, :6] @ rng.normal(size=(6, 3)) + 0.1 * rng.normal(size=(len(X), 3))
    Xo = np.vstack([X, ODD[odd]])
    Yo = np.vstack([Y, Y.mean(axis=0)])
    assert np.isfinite(rowwise_transform(Xo, "snv")).all()
    model = PublicDPCCA(X[:40], Y[:40], n_components=2, epsilon=1.0, x_chain="snv+sg1", random_state=0)
    model.fit(Xo[40:], Yo[40:])
    assert np.isfinite(model.transform(Xo[40:])[0]).all()


@pytest.mark.parametrize("odd", list(ODD))
def test_dp_pcr(spectra, odd):
    """DP-PCR has no row-wise preprocessing (rows are clipped by norm): an odd row fits as any other."""
    X, y = spectra
    model = DPPCR(2, epsilon=1.0, x_bound=float(np.sqrt(M)), y_bound=50.0, random_state=0).fit(*_with(X, y, ODD[odd]))
    assert np.isfinite(model.coef_).all()


@pytest.mark.parametrize("odd", list(ODD))
def test_pca_gauss(spectra, odd):
    """PCA-Gauss has no row-wise preprocessing (every entry is clipped to the public box)."""
    X, _ = spectra
    model = PCAGauss(n_components=2, pca_source="analyze_gauss", mode="strict", bounds=(-2.0, 2.0), delta=1e-6,
                     epsilon=2.0, random_state=0).fit(np.vstack([X, ODD[odd]]))
    assert np.isfinite(model.components_).all()
