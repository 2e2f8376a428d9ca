"""P3LS on its page and under hostile input (the protocol and oracle tests are in tests/test_p3ls.py)."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.methods.p3ls import (
    P3LS,
    P3LSRegressor,
)
from tab_helpers import charts_in, open_tab, tab_block

ROOT = Path(__file__).resolve().parents[1]
TIGHT = {"tol": 1e-25, "max_iter": 100_000}  # NIPALS run to convergence: an oracle to ~1e-14


# ----------------------------------------------------------------------------- page
@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_page_runs_the_federation_on_sample_data():
    from streamlit.testing.v1 import AppTest

    if not (ROOT / "sample_data" / "value_chain.csv").exists():
        pytest.skip("sample_data/value_chain.csv not generated yet")
    at = AppTest.from_file(str(ROOT / "pages" / "p3ls.py"), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["Max |B_P3LS − B_central|"]) < 1e-9
    assert float(metrics["Test R² P3LS (federated)"]) > float(metrics["Test R² local (LC alone)"])
    # lazy tabs: the first tab only on load; each chart tab draws its chart once opened
    assert charts_in(tab_block(at, "Messages")) >= 1  # the message sequence
    assert charts_in(tab_block(at, "Choice of k")) == 0  # a hidden tab computes nothing
    for label in ("Error per KPI", "Coefficients per party", "Contribution", "Choice of k"):
        assert charts_in(open_tab(at, "p3ls_tabs", label)) >= 1, label
    at.session_state["p3ls_tabs"] = "Messages"
    at.run()
    text = " ".join(x.value for x in at.info) + " ".join(x.value for x in at.warning)
    assert "not differential privacy" in text
    assert not [w for w in at.number_input if "ε" in str(w.label)]  # no budget picker on this page
    # the seed box fixes the split only; the masks are fresh (issue #15)
    labels = [str(w.label) for w in at.number_input]
    assert any(label.startswith("Split seed") for label in labels) and not any("mask" in x.lower() for x in labels)


def test_page_exports_no_shareable_model_and_an_owners_workbook():
    from streamlit.testing.v1 import AppTest

    from engine.methods.p3ls import NO_RELEASE_REASON
    from engine.release.manifest import release_problems
    from engine.release.workbook import PRIVATE_NOTICE
    from test_exports import file_of, recorded_downloads, standalone, text_of

    if not (ROOT / "sample_data" / "value_chain.csv").exists():
        pytest.skip("sample_data/value_chain.csv not generated yet")
    with recorded_downloads() as seen:
        at = AppTest.from_file(str(ROOT / "pages" / "p3ls.py"), default_timeout=60)
        at.run()
        assert not at.exception, at.exception
        labels = {b.proto.label for b in at.get("download_button")}
        assert labels == {"Run report (HTML, shareable)", "Owner's workbook (XLSX, private)",
                          "Fingerprint key (TXT, private, keep apart)"}
        assert any(c.value == f"No shareable model: {NO_RELEASE_REASON}" for c in at.caption)
        report = at.session_state["export_report_p3ls"]
        page_html = file_of(at, seen, "p3ls_export_report").decode("utf-8")
        workbook = file_of(at, seen, "p3ls_export_workbook")
    assert report.status == "no privacy" and release_problems(page_html) == []
    assert "split seed" in report.parameters and "split seed" not in page_html.lower()
    visible = text_of(page_html)
    rows = report.parameters["rows (training / validation / test)"]
    for n in [report.data.shape[0], *map(int, rows.split(" / "))]:  # no exact row count of any part
        assert not standalone(str(n), visible), n
    assert "P3LS (federated)" not in page_html and "Equivalence" not in page_html  # headline results: owner only
    sheets = pd.read_excel(io.BytesIO(workbook), sheet_name=None)
    assert list(sheets)[0] == "PRIVATE read me"
    assert all(str(sheets[s].columns[0]).startswith(PRIVATE_NOTICE) for s in list(sheets)[1:])
    results = sheets["results per model (test rows"]
    assert "P3LS" in results.astype(str).to_numpy().ravel().tolist()


def test_page_reports_a_bad_split_without_crashing():
    from streamlit.testing.v1 import AppTest

    rng = np.random.default_rng(1)
    df = pd.DataFrame(rng.standard_normal((40, 5)), columns=["a_1", "a_2", "b_1", "b_2", "kpi_1"])
    at = AppTest.from_file(str(ROOT / "pages" / "p3ls.py"), default_timeout=60)
    at.run()
    at.radio(key="p3ls_data_source").set_value("Upload a file").run()
    at.file_uploader(key="p3ls_data_upload").set_value(("mine.csv", df.to_csv(index=False).encode(), "text/csv")).run()
    assert not at.exception, at.exception
    assert at.metric, "the upload split by prefix should run"
    at.radio(key="p3ls_split_mode").set_value("Choose columns per party").run()
    at.multiselect(key="p3ls_party_0_mine.csv").set_value([]).run()
    assert not at.exception
    assert any("no columns" in e.value for e in at.error)


# --------------------------------------------------------------------------- hostile input (issue #16)
def _process_frames(seed=3, n=40):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5)) * [1.0, 2.0, 3.0, 0.5, 4.0] + 10.0
    y = X @ rng.standard_normal(5) + 0.1 * rng.standard_normal(n)
    return pd.DataFrame(X, columns=["temp", "flow", "press", "ph", "rpm"]), pd.Series(y, name="purity")


@pytest.mark.parametrize("kind", ["nan", "text", "huge", "constant", "duplicate"])
def test_hostile_blocks_and_table_are_named_value_errors(kind):
    X, y = _process_frames()
    X = X.astype(object) if kind == "text" else X.copy()
    if kind == "nan":
        X.iloc[7, 3] = np.nan
    elif kind == "text":
        X.iloc[7, 3] = "sensor off"
    elif kind == "huge":
        X.iloc[7, 3] = -1e300
    elif kind == "constant":
        X["ph"] = 7.0
    else:
        X["ph"] = X["temp"]  # the same variable at two parties
    cause = {"nan": "NaN", "text": "non-numeric", "huge": "overflows", "constant": "constant",
             "duplicate": "identical"}[kind]
    with pytest.raises(ValueError, match=f"column 'ph'.*{cause}|{cause}.*column 'ph'|'temp'.*'ph'.*{cause}"):
        P3LS(2, random_state=0).fit([X[["temp", "flow"]], X[["press", "ph", "rpm"]]], y)
    with pytest.raises(ValueError, match=f"X column 'ph'.*{cause}|X column 'temp' and column 'ph'.*{cause}"):
        P3LSRegressor(2, column_split=[2, 3], random_state=0).fit(X, y)


def test_constant_response_and_nan_in_new_rows_are_named():
    X, y = _process_frames()
    with pytest.raises(ValueError, match="Y 'purity' is constant"):
        P3LS(2, random_state=0).fit([X.iloc[:, :2], X.iloc[:, 2:]], pd.Series(np.full(len(y), 3.5), name="purity"))
    model = P3LSRegressor(2, column_split=2, random_state=0).fit(X, y)
    Xn = X.iloc[:3].copy()
    Xn.iloc[1, 4] = np.inf
    with pytest.raises(ValueError, match="X column 'rpm' has \\+inf in row 1"):
        model.predict(Xn)


@pytest.mark.parametrize("c", [1e-150, 1e150])
def test_standardisation_is_exact_at_the_issue_scales(c):
    """Columns are first divided by a power of two: the same fit in units x 1e-150 and x 1e150 (the issue's
    range); beyond it the column checks refuse with overflow / underflow (test_properties)."""
    X, y = _process_frames()
    base = P3LS(2, random_state=0).fit([X.iloc[:, :2], X.iloc[:, 2:]], y)
    ours = P3LS(2, random_state=0).fit([X.iloc[:, :2] * c, X.iloc[:, 2:] * c], y)
    np.testing.assert_allclose(ours.coef_ * c, base.coef_, rtol=1e-12)
    np.testing.assert_allclose(ours.predict([X.iloc[:, :2] * c, X.iloc[:, 2:] * c]), base.predict(
        [X.iloc[:, :2], X.iloc[:, 2:]]), rtol=1e-12)
