"""Save and reopen a session (issue 31, item 6): choices round-trip; no private value is ever in the file."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from engine.data.sample_generators import make_nir_spectra
from ui.session_file import FORMAT, apply_session, session_json

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 120
RESPONSE_KEY = "edpls_response_sample_NIR spectra (synthetic)"
LOW_KEY = "edpls_y_low_sample_NIR spectra (synthetic)_moisture"


def _state(at: AppTest) -> dict:
    return dict(at.session_state._state.filtered_state)


def test_open_session_restores_the_saved_choices_in_a_new_session():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/calculator.py").run()
    at.number_input(key="calc_eps").set_value(0.5).run()  # the shared budget, through its widget
    assert at.session_state["pl_epsilon"] == 0.5
    choices = {"pl_mode": "paper", "edpls_chain": "snv", "edpls_k": 3, RESPONSE_KEY: "protein", LOW_KEY: 5.0,
               "edpls_xrange_edpls_sample_NIR spectra (synthetic)_moisture": ("1200", "2400")}
    for k, v in choices.items():
        at.session_state[k] = v
    at.run()
    text = session_json(_state(at))
    saved = json.loads(text)
    assert saved["format"] == FORMAT
    assert saved["settings"]["pl_epsilon"] == 0.5

    fresh = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    fresh.run()
    assert fresh.session_state["pl_epsilon"] == 1.0
    fresh.file_uploader(key="pl_session_upload").set_value(("mine.json", text.encode(), "application/json")).run()
    assert not fresh.exception
    assert fresh.session_state["pl_epsilon"] == 0.5
    for k, v in choices.items():
        assert fresh.session_state[k] == v, k
    assert any("settings restored" in s.value and "upload them again" in s.value for s in fresh.success)
    # the restored budget reaches a page's widget; the choices for a data set not loaded yet stay in the session
    fresh.switch_page("pages/calculator.py").run()
    assert not fresh.exception and fresh.number_input(key="calc_eps").value == 0.5
    assert fresh.session_state[LOW_KEY] == 5.0


def test_a_bad_session_file_is_refused_and_changes_nothing():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.file_uploader(key="pl_session_upload").set_value(("notes.json", b'{"a": 1}', "application/json")).run()
    assert not at.exception
    assert any("notes.json" in e.value and "not a PrivaLab session" in e.value for e in at.error)
    assert at.session_state["pl_epsilon"] == 1.0


def test_open_applies_only_whitelisted_plain_values():
    doc = {"format": FORMAT, "settings": {"pl_epsilon": 2.0, "pl_noise_key": "abc", "pl_dataset": "x",
                                          "edpls_fit_job": 1, "edpls_target": 0.3, "pl_delta": {"nested": 1}}}
    state: dict = {}
    assert apply_session(state, json.dumps(doc)) == 1
    assert state == {"pl_epsilon": 2.0}


def _numbers(text: str) -> set:
    """Every number in ``text`` as 6 significant digits."""
    return {f"{float(t):.6g}" for t in re.findall(r"-?\d+\.\d+(?:[eE][-+]?\d+)?|-?\d+[eE][-+]?\d+", text)}


def _distinctive(values) -> set:
    """Values with at least 5 significant digits (a round setting such as 1.0 or 100 could coincide)."""
    out = set()
    for v in np.ravel(values):
        s = f"{float(v):.6g}"
        if len(s.lstrip("-").replace(".", "").lstrip("0").split("e")[0]) >= 5:
            out.add(s)
    return out


def test_a_saved_file_holds_no_private_value():
    """A session that fitted a model on the data: the file holds none of the data's numbers, none of the fitted
    coefficients, no run metric, no noise key and no data frame."""
    from engine.methods.edpls.recommended import make_strict_edpls

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/edpls.py").run()  # the page fits its private model on the sample set
    assert not at.exception
    state = _state(at)
    df = state["pl_dataset"].df
    d = make_nir_spectra(n_samples=200, n_channels=40, random_state=3)
    est = make_strict_edpls(1.0, 1e-5, y_range=(0.0, 30.0)).fit(d.X, d.Y[:, 0])
    # what a fitting session also holds: a model, a run history with metrics, a noise key, raw bytes
    state.update({"edpls_model": est, "edpls_coef": list(est.coef_), "session_noise_key": "f" * 16,
                  "pl_runs": [{"method": "edPLS", "epsilon": 1.0, "status": "proven", "rmsep": 0.123456789,
                               "coef": list(est.coef_)}],
                  "edpls_upload_bytes": b"1,2,3", "edpls_response_target": list(d.Y[:5, 0]),
                  "pl_owner_secret": "k" * 32, "pl_cache_scope": "scope"})
    text = session_json(state)
    private = _distinctive(df.select_dtypes("number").to_numpy()) | _distinctive(est.coef_) | \
        _distinctive([est.intercept_, 0.123456789]) | _distinctive(d.Y[:5, 0])
    leaked = _numbers(text) & private
    assert not leaked, leaked
    for word in ("noise_key", "pl_dataset", "edpls_model", "bytes", "rmsep", "export_report", "edpls_target",
                 "owner_secret", "cache_scope"):
        assert word not in text, word
    saved = json.loads(text)
    assert saved["settings"]["pl_epsilon"] == 1.0 and saved["runs"] == [{"method": "edPLS", "epsilon": 1.0,
                                                                           "status": "proven"}]


def test_public_declarations_and_run_settings_travel_without_ledgers_or_metrics():
    """The "Public information" panel's declarations (ui.public_info: data key -> y range, x bound per width)
    and each run's settings go into the file; a run's ledger, metrics and curve never do, and an opened file's
    runs are listed apart from the history the odometer totals."""
    import json

    from engine.privacy import PrivacyLedger
    from ui.session_file import OPENED_RUNS, apply_session, session_json

    state = {"pl_public": {"sample_NIR_moisture": {"y_range": (0.0, 100.0), "x_bound": {700: 26.4}}},
             "pl_runs": {"abc": {"number": 1, "page": "edpls", "method": "edPLS recommended", "response": "moisture",
                                 "settings": {"chain": "snv+sg1", "n_components": 3}, "rmsep": 0.123456,
                                 "sigma_y": 0.987654, "epsilon": 1.0, "delta": 1e-5, "status": "proven",
                                 "ledger": PrivacyLedger(), "curve": None}}}
    doc = json.loads(session_json(state))
    assert doc["public"] == {"sample_NIR_moisture": {"y_range": [0.0, 100.0], "x_bound": {"700": 26.4}}}
    (run,) = doc["runs"]
    assert run["chain"] == "snv+sg1" and run["n_components"] == 3 and run["epsilon"] == 1.0
    text = json.dumps(doc)
    assert "0.123456" not in text and "0.987654" not in text and "ledger" not in text  # no metrics, no ledger
    fresh: dict = {}
    assert apply_session(fresh, json.dumps(doc)) >= 1
    assert fresh["pl_public"]["sample_NIR_moisture"] == {"y_range": (0.0, 100.0), "x_bound": {700: 26.4}}
    assert fresh[OPENED_RUNS][0]["chain"] == "snv+sg1" and "pl_runs" not in fresh
