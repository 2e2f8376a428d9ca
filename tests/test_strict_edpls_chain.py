"""The recommended strict edPLS's preprocessing chain (issue #30 item 5): "msc_public" and "sg2" steps, steps that
learn from private rows refused by name, the chain (and its public reference) in the release."""
from __future__ import annotations

import json

import numpy as np
import pytest
from chemotools.derivative import SavitzkyGolay
from chemotools.scatter import MultiplicativeScatterCorrection

from engine.data.sample_generators import make_nir_spectra
from engine.methods.edpls import make_strict_edpls
from engine.methods.edpls.recommended_release import estimator_from_release, shareable_release, to_json

DELTA = 1e-5
Y_RANGE = (7.0, 23.0)


@pytest.fixture(scope="module")
def nir():
    return make_nir_spectra(n_samples=300, random_state=11).X, make_nir_spectra(n_samples=600, random_state=12)


def test_msc_public_then_sg2_is_chemotools_on_the_public_reference(nir):
    pub, a = nir
    m = make_strict_edpls(1.0, DELTA, y_range=Y_RANGE, X_public=pub, preprocessing=["msc_public", "sg2"],
                          random_state=0).fit(a.X, a.Y[:, 0])
    # the oracle: chemotools' MSC with the mean of the public spectra as its reference, then SG's 2nd derivative
    msc = MultiplicativeScatterCorrection(reference=pub.mean(axis=0)).fit(pub)
    sg2 = SavitzkyGolay(window_length=11, polyorder=2, deriv=2).fit(pub)
    want = sg2.transform(msc.transform(a.X[:50]))
    scale = np.abs(want).max()
    # error analysis: a 2 x 2 least-squares solve per row and an 11-tap filter, both O(m u) relative
    np.testing.assert_allclose(m.preprocess_.transform(a.X[:50]), want, atol=1e-10 * scale)
    np.testing.assert_array_equal(m.msc_spectrum_, pub.mean(axis=0))
    assert m.choices_["chain"] == "msc_public+sg2"


def test_the_chain_and_its_reference_travel_in_the_release(nir):
    pub, a = nir
    m = make_strict_edpls(1.0, DELTA, y_range=Y_RANGE, X_public=pub, preprocessing="msc_public+sg2",
                          random_state=1).fit(a.X, a.Y[:, 0])
    rel = shareable_release(m)
    prov = {e["field"]: e["provenance"] for e in rel["manifest"]}
    assert prov["msc_spectrum_"] == "public" and rel["fields"]["preprocessing"] == "msc_public+sg2"
    np.testing.assert_array_equal(rel["fields"]["msc_spectrum_"], pub.mean(axis=0))
    text = to_json(m)
    back = estimator_from_release(json.loads(text))
    np.testing.assert_allclose(back.predict(a.X[:20]), m.predict(a.X[:20]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("chain", "named"), [("msc", "'msc'"), (["snv", "autoscale"], "'autoscale'"),
                                               ("center+sg1", "'center'")])
def test_a_step_that_learns_from_private_rows_is_refused_by_name(nir, chain, named):
    pub, a = nir
    with pytest.raises(ValueError, match=f"step {named} is refused in strict mode: it learns"):
        make_strict_edpls(1.0, DELTA, y_range=Y_RANGE, X_public=pub, preprocessing=chain).fit(a.X[:50], a.Y[:50, 0])


def test_msc_public_needs_a_declared_reference_and_comes_first(nir):
    pub, a = nir
    with pytest.raises(ValueError, match="'msc_public' needs a declared-public reference"):
        make_strict_edpls(1.0, DELTA, y_range=Y_RANGE, preprocessing="msc_public+sg2").fit(a.X[:50], a.Y[:50, 0])
    with pytest.raises(ValueError, match="'msc_public' must come first"):
        make_strict_edpls(1.0, DELTA, y_range=Y_RANGE, X_public=pub, preprocessing="snv+msc_public").fit(
            a.X[:50], a.Y[:50, 0])


def test_default_chain_is_unchanged(nir):
    """The default "snv+sg1" builds no reference: the release carries none (fits stay as they were)."""
    pub, a = nir
    m = make_strict_edpls(1.0, DELTA, y_range=Y_RANGE, X_public=pub, random_state=2).fit(a.X, a.Y[:, 0])
    assert not hasattr(m, "msc_spectrum_") and "msc_spectrum_" not in to_json(m)
