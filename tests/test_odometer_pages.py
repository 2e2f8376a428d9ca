"""Issue 31 item 5 across pages: the session's privacy odometer composes every release on one data set, whatever
the page (a regression fit on edPLS and a PCA-Gauss release of synthetic rows), under AppTest.

Oracles, not the ledger's code: the closed-form composition of Gaussian mechanisms (Dong, Roth & Su 2019:
mu = sqrt(sum (Delta_i / sigma_i)^2), its ε at δ by Balle & Wang's curve solved with scipy) when every release is
Gaussian, else dp-accounting's privacy loss distributions built here release by release. edPLS counts one row
added or removed, PCA-Gauss one row replaced: both hold for one row replaced once an add/remove release's
sensitivity is doubled (a replacement is a removal and an addition), which the oracle does by hand.
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.privacy.ledger import Neighbouring
from tests.test_session_flow import gaussian_epsilon_oracle

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 300
ODOMETER = "Privacy spent on this data set"


def mechanisms(ledgers) -> list[tuple[str, float, float, float]]:
    """(mechanism, sensitivity for one row replaced, noise scale, δ) of every noisy release."""
    out = []
    for led in ledgers:
        factor = 2.0 if led.neighbouring is Neighbouring.ADD_REMOVE else 1.0
        for r in led.entries:
            assert r.mechanism in ("gaussian", "laplace"), r.mechanism
            if r.sensitivity > 0:
                out.append((r.mechanism, factor * r.sensitivity, r.scale, r.delta))
    return out


def epsilon_oracle(ledgers) -> float:
    """ε of the composition at δ = the sum of the releases' δ (the odometer's δ; 0 for Laplace releases only)."""
    rel = mechanisms(ledgers)
    delta = sum(d for *_, d in rel)
    if all(m == "laplace" for m, *_ in rel):  # pure ε-DP: the privacy loss is at most the sum of Delta_i / b_i
        return sum(s / b for _, s, b, _ in rel)
    if all(m == "gaussian" for m, *_ in rel):
        return gaussian_epsilon_oracle(math.sqrt(sum((s / z) ** 2 for _, s, z, _ in rel)), delta)
    from dp_accounting.pld import privacy_loss_distribution as pld

    dists = [pld.from_gaussian_mechanism(z, sensitivity=s) if m == "gaussian" else
             pld.from_laplace_mechanism(z, sensitivity=s) for m, s, z, _ in rel]
    total = dists[0]
    for d in dists[1:]:
        total = total.compose(d)
    return float(total.get_epsilon_for_delta(delta))


def shown_epsilon(at: AppTest) -> float:
    return float(next(m for m in at.metric if m.label == ODOMETER).value.removeprefix("ε = "))


def ledgers_on(runs: dict, data_set: str) -> list:
    return [x for r in runs.values() if r["data set"] == data_set for x in [r["ledger"], *r["companion_ledgers"]]]


def test_odometer_composes_edpls_and_pca_gauss_on_one_data_set_and_not_another():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/edpls.py").run()
    assert not at.exception, at.exception
    (fit,) = at.session_state["pl_runs"].values()
    nir = fit["data set"]
    alone = shown_epsilon(at)
    # PCA-Gauss opens on a scikit-learn data set: a release on other rows, not composed with the edPLS fit
    at.switch_page("pages/pca_gauss.py").run()
    assert not at.exception, at.exception
    runs = at.session_state["pl_runs"]
    assert len(runs) == 2
    other = list(runs.values())[1]
    assert other["page"] == "PCA-Gauss" and other["data set"] != nir
    assert shown_epsilon(at) == pytest.approx(epsilon_oracle([other["ledger"]]), rel=5e-3)
    assert next(m for m in at.metric if m.label == "Fits on this data set").value == "1"
    # the same rows as the edPLS fit: the picker keeps the data set chosen on edPLS
    at.radio(key="pg_data_kind").set_value("Sample data or upload").run()
    assert not at.exception, at.exception
    runs = at.session_state["pl_runs"]
    assert len(runs) == 3
    release = list(runs.values())[2]
    assert release["page"] == "PCA-Gauss" and release["data set"] == nir and release["rmsep"] is None
    assert release["ledger"].neighbouring is Neighbouring.REPLACE_ONE and fit["ledger"].neighbouring is \
        Neighbouring.ADD_REMOVE
    want = epsilon_oracle(ledgers_on(runs, nir))
    both = shown_epsilon(at)
    assert both == pytest.approx(want, rel=5e-3)  # 3 significant digits on the tile; PLD discretisation < 1e-3
    assert both > alone
    assert next(m for m in at.metric if m.label == "Fits on this data set").value == "2"
    assert any("composed for one row replaced" in c.value for c in at.caption)
    # the history lists the releases without regression metrics
    history = next(d.value for d in at.dataframe if "RMSEP" in d.value.columns and "Run" in d.value.columns)
    assert list(history["Page"]) == ["edPLS", "PCA-Gauss", "PCA-Gauss"]
    assert not math.isnan(list(history["RMSEP"])[0]) and math.isnan(list(history["RMSEP"])[2])
    # "compare selected" with a release that has no curve: side by side, "—" where it has no RMSEP, no overlay
    at.multiselect(key="pca_gauss_compare_runs").set_value([1, 3]).run()
    assert not at.exception, at.exception
    side = next(d.value for d in at.dataframe if list(d.value.columns) == ["Run 1", "Run 3"])
    assert side.loc["RMSEP", "Run 3"] == "—" and side.loc["RMSEP", "Run 1"] != "—"
    assert not [c for c in at.get("plotly_chart") if c.key == "pca_gauss_compare_chart"]
    # a rerun (the cached release) adds nothing
    at.run()
    assert not at.exception, at.exception
    assert len(at.session_state["pl_runs"]) == 3 and shown_epsilon(at) == both
    # back on edPLS, the same total: every page shows the composition of every release on the data set
    at.switch_page("pages/edpls.py").run()
    assert not at.exception, at.exception
    assert len(at.session_state["pl_runs"]) == 3 and shown_epsilon(at) == both


def test_dp_cca_counts_its_release_on_the_nir_sample_and_not_a_simulation():
    at = AppTest.from_file(str(ROOT / "pages" / "dp_cca.py"), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    runs = at.session_state["pl_runs"] if "pl_runs" in at.session_state else {}
    assert not runs  # simulated views are not the user's rows: nothing recorded
    assert not [m for m in at.metric if m.label == ODOMETER]
    at.radio(key="dp_cca_source").set_value("instruments").run()
    assert not at.exception, at.exception
    (run,) = at.session_state["pl_runs"].values()
    assert run["page"] == "DP-CCA" and run["data set"] == "sample: NIR spectra (synthetic)"
    assert shown_epsilon(at) == pytest.approx(epsilon_oracle([run["ledger"]]), rel=5e-3)
    at.run()
    assert len(at.session_state["pl_runs"]) == 1


def test_under_replace_one_doubles_each_add_remove_sensitivity():
    """Oracles: Balle & Wang's Gaussian curve at twice the sensitivity (scipy), Laplace's 2 Delta / b, and group
    privacy of two for an (ε, δ) record: (2ε, (1 + e^ε) δ)."""
    from engine.privacy.ledger import PrivacyLedger, Release, under_replace_one

    led = PrivacyLedger(entries=[
        Release.gaussian(name="g", sigma=3.0, sensitivity=1.5, delta=1e-6),
        Release(name="l", mechanism="laplace", sensitivity=2.0, scale=4.0, epsilon=0.5, delta=0.0),
        Release(name="e", mechanism="exponential", sensitivity=1.0, scale=1.0, epsilon=0.3, delta=1e-7)])
    out = under_replace_one(led)
    assert out.neighbouring is Neighbouring.REPLACE_ONE and led.neighbouring is Neighbouring.ADD_REMOVE
    g, lap, e = out.entries
    assert g.sensitivity == 3.0 and g.scale == 3.0
    assert g.epsilon == pytest.approx(gaussian_epsilon_oracle(1.0, 1e-6), rel=1e-6)  # mu = 3 / 3
    assert (lap.sensitivity, lap.epsilon) == (4.0, 1.0)
    assert e.epsilon == pytest.approx(0.6) and e.delta == pytest.approx((1 + math.exp(0.3)) * 1e-7)
    assert under_replace_one(out) is out
