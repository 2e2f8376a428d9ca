"""VAR-ADMM's method contract: compare(...) -> Comparison, the registry's audit cases, the shared pieces."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.federation.messages import MessageLog
from engine.methods.audit_catalog import make_case
from engine.methods.contract import Comparison
from engine.methods.var_admm import (
    CollaborativeVAR,
    compare,
    simulate_var,
    var22_coefs,
    var_admm_case,
    var_forecasts,
)
from engine.methods.var_admm.audit_case import gaussian_case, laplace_case, uniform_case
from engine.privacy import SEED_KNOWN_CAVEAT
from engine.privacy.wording import ledger_text


@pytest.fixture(scope="module")
def panel():
    Y = simulate_var(var22_coefs(), 400, random_state=3)
    return pd.DataFrame(Y, columns=["north", "south"])


def test_compare_returns_the_contract(panel):
    train, test = panel.iloc[:300], panel.iloc[300:]
    c = compare(train, test, epsilon=1.0, delta=1e-5, public_range=(-8.0, 8.0), declared_public=True, lags=2)
    assert isinstance(c, Comparison)
    assert set(c.headline) == {"forecast RMSE (private)", "forecast RMSE (non-private)", "epsilon per value",
                               "epsilon per series"}
    assert all(isinstance(v, float) for v in c.headline.values())
    assert c.headline["epsilon per value"] == pytest.approx(1.0)
    assert c.headline["epsilon per series"] == pytest.approx(300.0)
    assert c.status == "proven"
    assert c.guarantee == ledger_text(c.ledger, None)
    assert list(c.private.feature_names_in_) == ["north", "south"]
    # the reference is the noise-free collaborative VAR on the training rows, scored on the test rows
    ref = CollaborativeVAR(2).fit(train)
    np.testing.assert_array_equal(c.reference.coefs_, ref.coefs_)
    Y = panel.to_numpy()
    rows = np.arange(300, 400)
    rmse = float(np.sqrt(np.mean((var_forecasts(ref, Y, rows) - Y[rows]) ** 2)))
    assert c.headline["forecast RMSE (non-private)"] == rmse
    assert not np.array_equal(c.private.coefs_, ref.coefs_)  # fitted on the noisy values


def test_compare_without_noise_equals_the_reference(panel):
    train, test = panel.iloc[:300], panel.iloc[300:]
    c = compare(train, test, epsilon=np.inf, delta=1e-5, public_range=(-100.0, 100.0), declared_public=True)
    np.testing.assert_array_equal(c.private.coefs_, c.reference.coefs_)
    assert c.headline["forecast RMSE (private)"] == c.headline["forecast RMSE (non-private)"]
    assert c.status == "no privacy"


def test_compare_status_follows_the_declarations(panel):
    train, test = panel.iloc[:300].to_numpy(), panel.iloc[300:].to_numpy()
    kw = dict(epsilon=2.0, delta=1e-5, public_range=(-8.0, 8.0), law="gaussian")
    assert compare(train, test, declared_public=False, **kw).status == "not proven"
    seeded = compare(train, test, declared_public=True, random_state=0, **kw)
    assert seeded.status == "not proven" and SEED_KNOWN_CAVEAT in seeded.ledger.reasons_not_proven()
    again = compare(train, test, declared_public=True, random_state=0, **kw)
    assert again.headline == seeded.headline  # a known seed reproduces the draw
    assert compare(train, test, declared_public=True, mode="paper", **kw).status == "no privacy"


def test_compare_refuses_what_it_cannot_calibrate(panel):
    train, test = panel.iloc[:300], panel.iloc[300:]
    with pytest.raises(ValueError, match="public_range"):
        compare(train, test, epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="law"):
        compare(train, test, epsilon=1.0, delta=1e-5, public_range=(0, 1), law="uniform")
    with pytest.raises(ValueError, match="mode"):
        compare(train, test, epsilon=1.0, delta=1e-5, public_range=(0, 1), mode="loose")
    with pytest.raises(ValueError, match="series"):
        compare(train, test.iloc[:, :1], epsilon=1.0, delta=1e-5, public_range=(0, 1))


def test_registry_audit_cases_match_the_catalogue():
    for make, law in ((laplace_case, "laplace"), (gaussian_case, "gaussian")):
        case, ref = make("strict", 1.0, 1e-5), var_admm_case(law, 1.0, 1e-5)
        assert (case.name, case.mode, case.claimed_eps) == (ref.name, ref.mode, ref.claimed_eps)
    assert uniform_case().mode == "paper"
    # planted bugs are the catalogue's (planted in production by planted_bug), not the case's
    assert make_case("var_admm_laplace", bug="noise_halved").bug == "noise_halved"
    with pytest.raises(ValueError, match="mode"):
        laplace_case("paper")


def test_the_admm_log_is_the_federation_log(panel):
    m = CollaborativeVAR(1, solver="admm", tol=None, max_iter=3).fit(panel.iloc[:100])
    assert isinstance(m.trace_.log, MessageLog)
    frame = m.trace_.log.to_frame(max_step=2)
    assert "iteration" in frame.columns and frame.loc[frame["phase"] == "iteration", "iteration"].max() == 2
