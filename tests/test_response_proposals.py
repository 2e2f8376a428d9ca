"""The response a page proposes for an upload (issue #31): a column named like a response (``y``, ``target``,
``response``) comes first, edPLS, DP-PCR and P3LS propose the same one for the same file, and a spectra file
without any response stops the page with a message saying how to add one (it once pre-filled the first
wavelength as "the response" and fitted it)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from engine.data.columns import response_candidates

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 180


@pytest.mark.parametrize("name", ["y", "Y", "target", "response", "Response", "label", "y_true", "outcome", "KPI"])
def test_a_column_named_like_the_response_is_proposed_first(name):
    df = pd.DataFrame(np.arange(24, dtype=float).reshape(4, 6), columns=["x1", "x2", name, "x3", "x4", "x5"])
    assert response_candidates(df)[0] == name
    # the rest keep their file order
    assert response_candidates(df)[1:] == ["x1", "x2", "x3", "x4", "x5"]


@pytest.mark.parametrize("name", ["yield", "y2", "years", "my_target"])
def test_names_that_only_contain_such_a_word_keep_their_place(name):
    df = pd.DataFrame(np.ones((3, 3)), columns=["a", name, "b"])
    assert response_candidates(df) == ["a", name, "b"]


def test_a_column_outside_the_prefix_groups_comes_before_the_groups():
    """A process table of two companies' variables (``lief_*``, ``werk_*``) and one quality column: the quality
    column is proposed (P3LS's parties are the prefix groups), whatever its place in the file."""
    df = pd.DataFrame(np.ones((3, 5)), columns=["lief_Feuchte", "Qualität", "lief_Größe", "werk_Temp", "werk_Druck"])
    assert response_candidates(df)[0] == "Qualität"
    assert response_candidates(df)[1:] == ["lief_Feuchte", "lief_Größe", "werk_Temp", "werk_Druck"]


def test_declared_responses_still_come_first():
    df = pd.DataFrame(np.ones((3, 3)), columns=["oil", "y", "moisture"])
    assert response_candidates(df, declared=("moisture",)) == ["moisture", "y", "oil"]


def _table(columns, n=40, seed=0) -> bytes:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.normal(size=(n, len(columns))), columns=columns).to_csv(index=False).encode()


def _upload_on_home(name: str, data: bytes) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.radio(key="home_data_source").set_value("Upload a file").run()
    at.file_uploader(key="home_data_upload").set_value((name, data, "text/csv")).run()
    assert not at.exception, at.exception
    return at


def test_edpls_dp_pcr_and_p3ls_propose_y_for_the_same_file():
    at = _upload_on_home("process.csv", _table(["x1", "x2", "x3", "x4", "x5", "y"]))
    assert at.session_state["pl_dataset"].name == "process.csv"
    at.switch_page("pages/edpls.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="edpls_response_upload_process.csv").value == "y"
    at.switch_page("pages/dp_pcr.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="dp_pcr_response_upload_process.csv").value == "y"
    at.switch_page("pages/p3ls.py").run()
    assert not at.exception, at.exception
    assert at.multiselect(key="p3ls_responses_process.csv").value == ["y"]


def test_spectra_without_a_response_stop_with_a_message():
    waves = [str(1100 + 2 * j) for j in range(12)]
    at = AppTest.from_file(str(ROOT / "pages" / "edpls.py"), default_timeout=TIMEOUT)
    at.run()
    at.radio(key="edpls_data_source").set_value("Upload a file").run()
    at.file_uploader(key="edpls_data_upload").set_value(("spectra.csv", _table(waves), "text/csv")).run()
    assert not at.exception, at.exception
    errors = " ".join(e.value for e in at.error)
    assert "spectra.csv" in errors and "no response column" in errors and "X and Y as two files" in errors
    assert not at.get("plotly_chart")  # nothing was fitted on a wavelength taken for the response
    assert at.session_state["pl_dataset"].name == "spectra.csv"  # the upload is kept
