"""VAR-ADMM noise defence as a release (issue #15, item 4): clipping inside the release, fresh noise, status from
explicit declarations, per-value against per-series ε, the shareable release and the owner's workbook, and the
end-to-end audit of the page's pipeline.

Oracles: ``np.clip`` (the clipping), the noise drawn alone with the same seed (noise added once, after clipping),
the exact Gaussian composition of T releases from a plain ledger (GDP total), the PLD accountant on a plain
ledger (the closed-form single-release ε), the black-box auditor (``epsilon_lower_bound``) on the real pipeline.
"""
from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from downloads import file_of, recorded_downloads
from engine.methods.var_admm import (
    NO_DEFENCE_REASON,
    RANGE_NOT_DECLARED,
    RELEASE_FORMAT,
    CollaborativeVAR,
    add_noise,
    calibrated_noise_scale,
    defence_comparison,
    defence_ledger,
    model_from_release,
    noise_defence,
    owner_sheets,
    pipeline_audit_case,
    release_refusal,
    shareable_release,
    simulate_var,
    to_json,
    var22_coefs,
)
from engine.methods.var_admm.audit_case import var_admm_case
from engine.privacy import SEED_KNOWN_CAVEAT, PrivacyLedger, Release
from engine.privacy.audit import run_case
from engine.release.manifest import release_problems
from engine.release.workbook import PRIVATE_NOTICE
from ui.exports import LABELS

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "pages" / "var_admm.py")
SEED = 2024


def kw_panel(T: int = 400, seed: int = 1) -> np.ndarray:
    """Two owners' output in kW (rated 88 kW): values far outside a range declared as [0, 1]."""
    Y = simulate_var(var22_coefs(), T, random_state=seed)
    return 44.0 + 20.0 * Y  # about 0..88


# ----------------------------------------------------------------------------- clipping and fresh noise
def test_add_noise_clips_inside_the_release_then_adds_the_noise_once():
    Y = kw_panel(50)
    out = add_noise(Y, "laplace", 0.5, 7, public_range=(0.0, 1.0))
    noise = add_noise(np.zeros_like(Y), "laplace", 0.5, 7)  # the same draws, alone
    np.testing.assert_allclose(out, np.clip(Y, 0.0, 1.0) + noise, atol=1e-12)
    assert np.abs(Y).max() > 50  # the data really are in kW
    np.testing.assert_array_equal(add_noise(Y, "gaussian", 0.0, public_range=(0.0, 1.0)), np.clip(Y, 0.0, 1.0))
    with pytest.raises(ValueError, match="lo < hi"):
        add_noise(Y, "laplace", 1.0, public_range=(1.0, 1.0))


def test_fresh_noise_by_default_and_a_known_seed_is_not_proven():
    Y = kw_panel(60)
    a, b = add_noise(Y, "laplace", 1.0), add_noise(Y, "laplace", 1.0)
    assert not np.allclose(a, b)
    fresh = noise_defence(Y, "laplace", 1.0, public_range=(0.0, 88.0), declared_public=True)
    assert fresh.defence.status == "proven" and fresh.defence.proven
    seeded = noise_defence(Y, "laplace", 1.0, public_range=(0.0, 88.0), declared_public=True, random_state=3)
    assert seeded.defence.status == "not proven"
    assert SEED_KNOWN_CAVEAT in seeded.defence.ledger.caveats and SEED_KNOWN_CAVEAT in seeded.defence.per_value.caveats
    # the engine's default pipeline (defence, then the VAR) differs between two runs
    kw = dict(public_range=(0.0, 88.0), declared_public=True)
    one = defence_comparison(Y, 2, 40, "laplace", 5.0, **kw)
    two = defence_comparison(Y, 2, 40, "laplace", 5.0, **kw)
    assert not np.allclose(one.var_pred, two.var_pred)
    assert one.release.defence.proven and two.release.defence.proven


# ----------------------------------------------------------------------------- the ledger
def test_status_comes_from_explicit_declarations_only():
    T, n = 500, 3
    declared = defence_ledger("laplace", 2.0, (0.0, 2.0), True, T, n, seed_known=False)
    assert declared.status == "proven"
    undeclared = defence_ledger("laplace", 2.0, (0.0, 2.0), False, T, n, seed_known=False)
    assert undeclared.status == "not proven" and undeclared.reasons_not_proven() == [RANGE_NOT_DECLARED]
    assert "not declared public" in undeclared.headline()
    # the same numbers either way: the declaration decides the status, nothing else does
    assert undeclared.eps_per_value == declared.eps_per_value == pytest.approx(1.0)
    assert defence_ledger("laplace", 2.0, None, True, T, n, False).status == "no privacy"  # no clipping: ε = ∞
    assert defence_ledger("uniform", 2.0, (0.0, 2.0), True, T, n, False).status == "no privacy"
    assert defence_ledger("laplace", 0.0, (0.0, 2.0), True, T, n, False).status == "no privacy"
    assert math.isinf(defence_ledger("uniform", 2.0, (0.0, 2.0), True, T, n, False).eps_per_value)


def test_per_value_and_per_series_epsilon_are_stated_as_such():
    T = 2880
    led = defence_ledger("laplace", 1.2, (0.0, 1.2), True, T, 8, seed_known=False)
    assert led.eps_per_value == pytest.approx(1.0) and led.eps_per_series == pytest.approx(T)
    # the fit's ledger is one owner's whole series: its total is T·Δ/b, never the per-value 1
    assert led.ledger is led.per_series
    assert led.ledger.total("basic")[0] == pytest.approx(T)
    eps_pld = led.ledger.total("pld", 1e-5)[0]
    assert eps_pld == pytest.approx(T, rel=1e-6)
    head = led.headline()
    assert "ε = 1 per value (event level" in head and f"ε = {T} for one owner's whole series ({T} values" in head
    frame = led.to_frame()
    assert list(frame["epsilon"]) == pytest.approx([1.0, T]) and list(frame["status"]) == ["proven", "proven"]
    # Gaussian: the series composes to one Gaussian with sensitivity Δ√T (oracle: T releases, exact GDP total)
    sigma, delta = 3.0, 1e-5
    g = defence_ledger("gaussian", sigma, (0.0, 1.0), True, 50, 2, False, delta=delta)
    plain = PrivacyLedger()
    for _ in range(50):
        plain.add(Release.gaussian(name="one value", sigma=sigma, sensitivity=1.0, delta=delta))
    assert g.eps_per_series == pytest.approx(plain.total("gdp", delta)[0], rel=1e-6)
    assert g.eps_per_value == pytest.approx(plain.entries[0].epsilon)


@pytest.mark.parametrize("law, b", [("laplace", 0.7), ("gaussian", 2.5)])
def test_closed_form_total_equals_the_pld_accountant(law, b):
    led = defence_ledger(law, b, (0.0, 1.0), True, 4, 2, False).ledger
    plain = PrivacyLedger(entries=list(led.entries))  # the numerical accountant on the same release
    exact, numerical = led.total("pld", 1e-5)[0], plain.total("pld", 1e-5)[0]
    # the accountant's discretisation is pessimistic: the exact value is at most its number, and close to it
    assert exact <= numerical * (1 + 1e-9) and exact == pytest.approx(numerical, rel=1e-5)


def test_naive_design_counts_every_copy():
    Y = kw_panel(300)
    ev = defence_comparison(Y, 2, 200, "naive_laplace", 88.0, public_range=(0.0, 88.0), declared_public=True)
    led = ev.release.defence
    assert led.copies == 2 + 2 and led.eps_per_value == pytest.approx(4.0)  # p + 1 design copies + noisy inputs
    ev = defence_comparison(Y, 2, 200, "naive_laplace", 88.0, public_range=(0.0, 88.0), declared_public=True,
                            eval_inputs="clean")
    assert ev.release.defence.copies == 3


# ----------------------------------------------------------------------------- the shareable release
def _fit_release(Y, seed, declared=True, with_model=True):
    rel = noise_defence(Y, "laplace", 0.5, public_range=(0.0, 1.0), declared_public=declared, random_state=seed)
    model = CollaborativeVAR(2, trend="c").fit(rel.noisy[:300]) if with_model else None
    return rel, model


def test_neighbour_release_differs_only_in_dp_fields():
    Y = kw_panel(400) / 88.0  # the owners' output in [0, 1]
    Y_nb = Y.copy()
    Y_nb[123, 0] = 0.97  # one value replaced (event-level neighbour)
    releases = []
    for data in (Y, Y_nb):
        rel, model = _fit_release(data, seed=11)  # the same known noise: only the data differ
        releases.append(shareable_release(rel, owner_names=["north", "south"], lags=2, model=model))
    a, b = releases
    prov = {m["field"]: m["provenance"] for m in a["manifest"]}
    assert prov == {m["field"]: m["provenance"] for m in b["manifest"]}
    changed = {k for k in a["fields"] if a["fields"][k] != b["fields"][k]}
    assert changed and {prov[k] for k in changed} == {"dp"}, changed
    assert {"noisy_series", "coefs_", "intercept_"} >= changed
    assert all(a["fields"][k] == b["fields"][k] for k, p in prov.items() if p == "public")
    assert a["ledger"] == b["ledger"]


def test_release_is_clean_and_holds_no_private_value():
    Y = kw_panel(400)  # kW against a range declared in [0, 1]
    rel, model = _fit_release(Y, seed=None)
    assert rel.n_outside > 0 and rel.defence.status == "proven"
    data = shareable_release(rel, owner_names=["north", "south"], lags=2, model=model,
                             calibration="calibrated from ε and the declared range")
    text = to_json(data)
    assert release_problems(text) == [] and release_problems(data) == []
    assert data["format"] == RELEASE_FORMAT and data["ledger_totals"]["status"] == "proven"
    # no clean value, no observed extreme, no count of clipped values
    for v in (Y[5, 0], Y[77, 1], Y.max(), Y.min()):
        assert repr(float(v)) not in text and f"{v:.6g}" not in text
    assert "outside" not in text  # no count of clipped values, as a field or as a number of its own:
    assert not re.search(rf"(?<![\d.e-]){rel.n_outside}(?![\d.])", text)
    noisy = np.asarray(data["fields"]["noisy_series"])
    assert noisy.shape == Y.shape and np.allclose(noisy, rel.noisy)
    # the guarantee states both units, the ledger total is the whole series
    assert "per value (event level" in data["guarantee"] and "whole series" in data["guarantee"]
    assert data["ledger_totals"]["basic"][0] == pytest.approx(400 * 2.0)
    # the coefficients are a working model (post-processing of the noisy series)
    back = model_from_release(text)
    np.testing.assert_allclose(back.forecast(rel.noisy[:300], 3), model.forecast(rel.noisy[:300], 3), atol=1e-12)
    with pytest.raises(TypeError, match="not shareable"):
        to_json(model)


def test_no_release_without_a_declared_range_or_a_dp_defence():
    Y = kw_panel(200)
    rel, _ = _fit_release(Y, seed=None, declared=False, with_model=False)
    assert rel.defence.status == "not proven"
    assert "not declared public" in release_refusal(rel)
    with pytest.raises(ValueError, match="not declared public"):
        shareable_release(rel, owner_names=["a", "b"], lags=2)
    assert release_refusal(None) == NO_DEFENCE_REASON == ("no noise defence ran: the coefficients are not "
                                                          "differentially private")
    uniform = noise_defence(Y, "uniform", 0.5, public_range=(0.0, 1.0), declared_public=True)
    assert release_refusal(uniform).startswith(NO_DEFENCE_REASON)
    # the owner's sheets hold the range and the exact clipped count instead
    sheets = owner_sheets(release=rel, Y=Y, owner_names=["a", "b"])
    defence = sheets["noise defence"]
    assert defence["range declared public"] is False and defence["range the values were clipped into"] == [0.0, 1.0]
    assert defence["values outside the range before clipping (exact, private)"] == int(np.sum((Y < 0) | (Y > 1)))
    assert sheets["observed range (private)"]["max"].tolist() == pytest.approx(Y.max(axis=0))


# ----------------------------------------------------------------------------- end-to-end audit
@pytest.mark.parametrize("law", ["laplace", "gaussian"])
def test_pipeline_audit_stays_below_the_per_value_claim(law):
    # a kW panel against the declared range [0, 1]: the worst neighbour moves one value from 89 to -88
    case = pipeline_audit_case(law, 1.0, 1e-5, public_range=(0.0, 1.0))
    assert case.expect == "holds" and case.claimed_eps == pytest.approx(1.0, rel=1e-6)
    assert np.abs(case.D).max() > 80
    r = run_case(case, 60_000, SEED)
    assert r["eps_lb"] < r["claimed_eps"], r
    assert r["eps_lb"] > 0.3  # the audit has power: the clipped change is the whole range


def test_pipeline_audit_after_centring_holds():
    r = run_case(pipeline_audit_case("laplace", 1.0, stage="centred"), 40_000, SEED)
    assert r["eps_lb"] < r["claimed_eps"], r


@pytest.mark.parametrize("law, bug, trials", [
    ("laplace", "noise_halved", 60_000),
    ("gaussian", "noise_halved", 60_000),
    ("laplace", "no_clipping", 20_000),
    ("laplace", "private_centring", 20_000),
])
def test_pipeline_audit_catches_planted_bugs(law, bug, trials):
    r = run_case(pipeline_audit_case(law, 1.0, 1e-5, bug=bug), trials, SEED)
    assert r["expect"] == "violated" and r["eps_lb"] > r["claimed_eps"], r
    if bug in ("no_clipping", "private_centring"):  # the shipped pipeline: true ε ~ 177 per value, not 1
        assert r["eps_lb"] > 5.0, r


def test_catalogue_case_is_the_pipeline():
    case = var_admm_case("laplace", 1.0, value_range=1.2)
    assert case.name == "var_admm_laplace" and "clip to [0, 1.2]" in case.note
    assert np.asarray(case.D).ndim == 2 and (np.asarray(case.D) > 1.2).any()


# ----------------------------------------------------------------------------- the page
@pytest.fixture()
def deferred():
    """The callables or bytes behind download buttons (AppTest cannot click one)."""
    with recorded_downloads() as seen:
        yield seen


def _page():
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.run()
    assert not at.exception, at.exception
    return at


def _defended(at):
    return at.session_state["export_report_var_admm"].headline["median MAE gain with the defence (%)"]


def _declare_key(at):
    (key,) = [c.key for c in at.checkbox if c.key and c.key.startswith("var_admm_range_public_")]
    return key


def test_page_draws_fresh_noise_and_a_known_seed_is_not_proven():
    first, second = _page(), _page()
    assert _defended(first) != _defended(second)  # two sessions at the defaults: two fresh draws
    for at in (first, second):
        at.sidebar.checkbox(key="var_admm_repro").check().run()
        at.checkbox(key=_declare_key(at)).check().run()
        assert not at.exception, at.exception
    assert _defended(first) == _defended(second)  # the teaching switch's known seed reproduces the noise
    report = first.session_state["export_report_var_admm"]
    assert report.status == "not proven" and "noise seed is known" in report.guarantee


def test_page_declaration_release_and_workbook(deferred):
    at = _page()
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == [LABELS["report"], LABELS["workbook"], LABELS["fingerprint_key"]]  # undeclared: no model
    assert any("not declared public" in c.value for c in at.caption if c.value.startswith("No shareable model:"))
    report = at.session_state["export_report_var_admm"]
    assert report.ledger is None and "not proven" in report.guarantee
    assert release_problems(report.to_html()) == []
    # the user declares the sample set's documented rating [0, 1.2] public
    at.checkbox(key=_declare_key(at)).check().run()
    assert not at.exception, at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == [LABELS["model"], LABELS["report"], LABELS["workbook"], LABELS["fingerprint_key"]]
    report = at.session_state["export_report_var_admm"]
    assert report.status == "proven" and report.ledger.neighbouring == "replace"
    T = report.data.shape[0]
    assert report.ledger.total("basic")[0] == pytest.approx(T)  # the headline total is the whole series
    html = report.to_html()
    assert release_problems(html) == [] and "per value (event level" in html
    assert report.public_parameters["declared public range"] == [0.0, 1.2]
    text = file_of(at, deferred, "var_admm_export_model").decode("utf-8")
    assert release_problems(text) == []
    data = json.loads(text)
    assert data["format"] == RELEASE_FORMAT and data["ledger_totals"]["status"] == "proven"
    assert np.asarray(data["fields"]["noisy_series"]).shape == (T, len(report.data.columns))
    assert "coefs_" not in data["fields"]  # solar: the fitted daylight rows are read from the private series
    xlsx = file_of(at, deferred, "var_admm_export_workbook")
    sheets = pd.read_excel(io.BytesIO(xlsx), sheet_name=None)
    names = list(sheets)
    assert names[0] == "PRIVATE read me" and PRIVATE_NOTICE.upper() in sheets[names[0]].to_string().upper()
    assert {"reference VAR (non-private)", "skill on private rows", "noise defence",
            "observed range (private)"} <= set(names)
    # the range inputs drive the clipping: a range declared in [0, 0.5] clips the sample's daytime output
    at.number_input(key=[n.key for n in at.number_input if n.key.startswith("var_admm_range_")
                         and not n.key.startswith("var_admm_range_lo_")][0]).set_value(0.5).run()
    report = at.session_state["export_report_var_admm"]
    assert report.public_parameters["declared public range"] == [0.0, 0.5]
    b = calibrated_noise_scale("laplace", report.public_parameters["epsilon per value (event level)"], 1e-5, 0.5)
    assert report.public_parameters["noise scale b"] == pytest.approx(b)
    assert any("were clipped before the noise" in i.value for i in at.info)
