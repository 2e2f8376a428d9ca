"""Attack lab and guided demo under issue #15: fresh noise, labels from each fit's ledger, the two exports.

Oracles: the fits' own ledgers (``status``, ``reasons_not_proven``), ``engine.release.manifest.release_problems``
(64-hex tokens, seed keys, the word seed), pandas' XLSX reader for the owner's workbook, and the exact private
values of the run (bounds read off the rows) that must not reach a shareable file. The files are the ones a
click would give: the deferred download callables are recorded when Streamlit registers them.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from downloads import buttons, file_of, recorded_downloads
from engine.attacks.pls_subspace import split_parties
from engine.data.attack_sim import make_attack_spectra
from engine.methods.edpls import estimator_from_release
from engine.release.manifest import RELEASE_KIND, release_problems
from engine.release.workbook import PRIVATE_NOTICE
from ui.exports import LABELS

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 120
FITS = "attack_lab_private_fits"
README_SHEET = "PRIVATE read me"
#: The proven guarantee of a strict fit at the default budget, as the headline states it.
PROVEN = "(ε = 1, δ = 1e-5)-differential privacy per row (one row added or removed), proven"


def lab(**state) -> AppTest:
    """The attack lab with a small sweep (4 runs, ε ∈ {1, 100}) and the given session state."""
    at = AppTest.from_file(str(ROOT / "pages" / "attack_lab.py"), default_timeout=TIMEOUT)
    at.session_state["attack_reps"] = 4
    at.session_state["attack_grid"] = [1.0, 100.0]
    for k, v in state.items():
        at.session_state[k] = v
    return at


def private_outcome(at):
    """The private attack the page shows (its session store holds exactly one at these settings)."""
    fits = at.session_state[FITS]
    assert len(fits) == 1
    return next(iter(fits.values()))


def sweep_summary(at) -> pd.DataFrame:
    return at.session_state["attack_sweep_last"][1]


def verdicts(at) -> list[str]:
    return [s.value for s in list(at.success) + list(at.warning) if s.value.startswith("At ε")]


# ----------------------------------------------------------------------------------------- attack lab
def test_two_sessions_at_default_settings_draw_different_noise_and_a_rerun_keeps_it():
    one, two = lab(), lab()
    one.run()
    two.run()
    assert not one.exception and not two.exception, (one.exception, two.exception)
    a, b = private_outcome(one), private_outcome(two)
    assert a.status == b.status == "proven"  # default: strict mode, public bounds, fresh noise
    assert not np.array_equal(a.recovered["P"], b.recovered["P"])
    assert a.rmsep != b.rmsep
    sa, sb = sweep_summary(one), sweep_summary(two)
    strict = lambda s: s[s.setting == "strict"].correlation_mean.to_numpy()  # noqa: E731
    assert not np.array_equal(strict(sa), strict(sb))
    # a rerun of the same session (another widget) shows the same release, it does not draw a new one
    recovered = a.recovered["P"].copy()
    one.radio(key="attack_metric").set_value("hit").run()
    assert not one.exception
    np.testing.assert_array_equal(private_outcome(one).recovered["P"], recovered)
    # the "Seed" box seeds the simulated data only, and says so
    assert one.number_input(key="attack_seed").label == "Data seed"


def test_default_page_labels_come_from_the_ledgers_and_exports_are_clean():
    with recorded_downloads() as seen:
        at = lab()
        at.run()
        assert not at.exception, at.exception
        outcome = private_outcome(at)
        by_key = buttons(at)
        assert by_key["attack_lab_export_model"].proto.label == LABELS["model"]
        assert by_key["attack_lab_export_report"].proto.label == LABELS["report"]
        assert by_key["attack_lab_export_workbook"].proto.label == LABELS["workbook"]
        release_text = file_of(at, seen, "attack_lab_export_model", deferred=True).decode()
        report_html = file_of(at, seen, "attack_lab_export_report", deferred=True).decode()
        workbook = file_of(at, seen, "attack_lab_export_workbook", deferred=True)
    # labels: the model's guarantee, every sweep row and the verdict come from the fits' ledgers
    assert outcome.status == "proven" and outcome.ledger.status == "proven"
    markdown = " ".join(m.value for m in at.markdown)
    assert "(edPLS strict mode, ε = 1, proven):" in markdown and "differential privacy per row" in markdown
    s = sweep_summary(at)
    assert set(s[s.setting == "plain"].status) == {"no privacy"} and set(s[s.setting == "strict"].status) == {"proven"}
    assert not ((s.status == "proven") & ~np.isfinite(s.epsilon)).any()
    v = verdicts(at)
    assert v and "guarantee of these fits: proven" in v[0]
    if "no longer works" in v[0]:
        assert "RMSEP on held-out rows" in v[0] and "predicting the mean" in v[0]
    # the shareable release: edPLS's manifest release of the fit shown, nothing private in it
    assert release_problems(release_text) == []
    release = json.loads(release_text)
    assert release["kind"] == RELEASE_KIND and release["ledger_totals"]["status"] == "proven"
    assert {m["provenance"] for m in release["manifest"]} <= {"dp", "public"}
    rebuilt = estimator_from_release(release_text)  # the release is the very fit the page shows
    np.testing.assert_allclose(rebuilt.coef_, outcome.model.coef_)
    # the shareable report: clean, public parameters only, the fit's own status
    report = at.session_state["export_report_attack_lab"]
    assert report_html == report.to_html() and release_problems(report_html) == []
    assert report.status == "proven" and "<td>guarantee of this fit</td><td>proven</td>" in report_html
    assert not [k for k in report.public_parameters if "seed" in k.lower() or "random" in k.lower()]
    assert report.public_parameters["epsilon"] == 1.0
    # the owner's workbook: PRIVATE read-me first, then the attack results, reconstructions, plain model, sweep
    assert workbook[:2] == b"PK"
    sheets = pd.read_excel(io.BytesIO(workbook), sheet_name=None)
    names = list(sheets)
    assert names[0] == README_SHEET and PRIVATE_NOTICE.upper() in sheets[README_SHEET].iloc[:, 0].tolist()
    for name in ("attack at ε (your rows)", "reconstructions", "plain PLS model (no privacy)",
                 "sweep summary (your rows)", "ledger (exact)"):
        assert name in sheets, (name, names)
        assert str(sheets[name].columns[0]).startswith(PRIVATE_NOTICE)


def test_teaching_switch_reproduces_the_noise_and_nothing_is_proven_or_shareable():
    one, two = lab(pl_reproducible=True), lab(pl_reproducible=True)
    one.run()
    two.run()
    assert not one.exception and not two.exception
    a, b = private_outcome(one), private_outcome(two)
    np.testing.assert_array_equal(a.recovered["P"], b.recovered["P"])
    assert a.status == "not proven" and any("noise seed is known" in r for r in a.ledger.reasons_not_proven())
    assert "(edPLS strict mode, ε = 1, not proven):" in " ".join(m.value for m in one.markdown)
    s = sweep_summary(one)
    assert set(s[s.setting == "strict"].status) == {"not proven"}
    assert all("not proven (the noise seed is known" in v for v in verdicts(one))
    # a known seed makes the model replayable: not offered as shareable, and the page says why
    assert "attack_lab_export_model" not in buttons(one)
    assert any(c.value.startswith("No shareable model:") and "noise seed is known" in c.value for c in one.caption)
    report = one.session_state["export_report_attack_lab"]
    assert report.status == "not proven" and release_problems(report.to_html()) == []


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_own_data_with_bounds_read_off_the_rows_is_labelled_not_proven_and_keeps_them_private():
    with recorded_downloads() as seen:
        at = lab(attack_scenario="Own data", attack_lab_data_source="Upload a file")
        at.run()
        csv = make_attack_spectra(random_state=8).to_frame().to_csv(index=False).encode()
        at.file_uploader(key="attack_lab_data_upload").set_value(("two_labs.csv", csv, "text/csv")).run()
        at.radio(key="attack_split").set_value("By a column").run()
        at.selectbox(key="attack_party_col").set_value("party").run()
        assert not at.exception, at.exception
        outcome = private_outcome(at)
        report = at.session_state["export_report_attack_lab"]
        report_html = file_of(at, seen, "attack_lab_export_report", deferred=True).decode()
        release_text = (file_of(at, seen, "attack_lab_export_model", deferred=True).decode()
                        if "attack_lab_export_model" in buttons(at) else None)
        workbook = file_of(at, seen, "attack_lab_export_workbook", deferred=True)
        sheets = pd.read_excel(io.BytesIO(workbook), sheet_name=None)
    # the guarantee label is the fit's ledger: not proven, and the page never says proven beside it
    assert outcome.status == "not proven" and report.status == "not proven"
    # the private fit on the user's rows is a release: in the session's history and odometer, with its own ledger
    (run,) = [r for r in at.session_state["pl_runs"].values() if r["page"] == "Attack lab"]
    assert run["ledger"] == outcome.ledger and run["status"] == "not proven"
    assert run["data set"] == "upload: two_labs.csv"
    assert any(m.label == "Privacy spent on this data set" for m in at.metric)
    markdown = " ".join(m.value for m in at.markdown)
    assert "(edPLS strict mode, ε = 1, not proven):" in markdown and "**proven**" not in markdown
    assert ", proven):" not in markdown and ", proven.**" not in markdown
    assert "proven (ε, δ)-DP" not in markdown + " ".join(c.value for c in at.caption)
    assert all("guarantee of these fits: not proven" in v for v in verdicts(at))
    s = sweep_summary(at)
    assert set(s[s.setting == "strict"].status) == {"not proven"}
    # the exact bounds read off the rows are private: in the workbook, never in a shareable file
    df = make_attack_spectra(random_state=8).to_frame()
    own = split_parties(df, [c for c in df.columns if c.startswith("ch")], "y", by="column", group_column="party",
                        attacker_groups=[1])  # the page's split (independent oracle of the private maxima)
    assert not own.bounds_public
    for text in [report_html] + ([release_text] if release_text else []):
        assert release_problems(text) == []
        for value in (own.x_bound, own.y_bound):
            assert repr(value) not in text and f"{value:.6g}" not in text
    cells = sheets["bounds read off the rows"].iloc[1:3, 1].astype(float).tolist()
    assert cells == pytest.approx([own.x_bound, own.y_bound])
    assert "not proven" in report.guarantee


def test_paper_mode_is_not_proven_and_the_authors_variant_has_no_shareable_model():
    at = lab(pl_mode="paper")
    at.run()
    assert not at.exception, at.exception
    assert private_outcome(at).status == "not proven"
    s = sweep_summary(at)
    paper = s.setting.str.startswith("paper")
    assert paper.any() and set(s[paper].status) == {"not proven"}  # sensitivities from the data, row by row
    assert set(s[s.setting == "plain"].status) == {"no privacy"}
    assert set(s[s.setting == "strict"].status) == {"proven"}  # the same sweep's strict fits: public bounds
    assert "attack_lab_export_model" not in buttons(at)  # σ² as std: the noise reveals the private maxima
    assert any(c.value.startswith("No shareable model:") for c in at.caption)


# ----------------------------------------------------------------------------------------- guided demo
def _demo_story(**state):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    at.button(key="demo_run").click().run()
    assert not at.exception, at.exception
    return at, at.session_state["demo_story"]


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_demo_draws_fresh_noise_on_every_run_and_labels_it_proven():
    at, first = _demo_story()
    at.button(key="demo_run").click().run()
    assert not at.exception
    second = at.session_state["demo_story"]
    assert first.fresh_noise and second.fresh_noise
    assert first.step("protect").value("strict_corr") != second.step("protect").value("strict_corr")
    # the whole curve's means, not the median at ε = 1: that median can land on the same atom twice (the
    # centre of a privately chosen range, when James-Stein shrinks the mean all the way; see test_demo.py)
    assert not np.array_equal(first.step("cost").figure["curve"]["mean"], second.step("cost").figure["curve"]["mean"])
    captions = " ".join(c.value for c in at.caption)
    assert PROVEN in captions and "not proven" not in captions
    assert "fresh privacy noise" in captions


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_demo_with_the_teaching_switch_says_not_proven():
    at, story = _demo_story(pl_reproducible=True)
    assert not story.fresh_noise
    captions = " ".join(c.value for c in at.caption)
    assert "not proven: the noise seed is known" in captions and PROVEN not in captions
    assert story.step("protect").figure["status"] == "not proven"
