"""The data flow a user expects (issue #19), under Streamlit's AppTest: the chosen data follow the user to every
page that can use it, a lab export's response and X columns default sensibly, rows with missing values are
dropped only on request, and X and Y can come as two files on edPLS."""
from __future__ import annotations

import functools
import operator
import threading
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest, local_script_runner

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 180
PROPS = ["moisture", "oil", "protein", "starch"]


def lab_export_bytes(n: int = 40, m: int = 30, missing=((3, "1108"), (8, "1130"))) -> bytes:
    """sample_id first, wavelengths 1100, 1102, ..., the four properties last; ``missing``: (data row, column)
    cells left empty."""
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(n, 2))
    X = 0.3 + 0.05 * scores @ rng.normal(size=(2, m)) + 0.002 * rng.normal(size=(n, m))
    df = pd.DataFrame(X.round(5), columns=[str(1100 + 2 * j) for j in range(m)])
    df.insert(0, "sample_id", np.arange(1, n + 1))
    for j, p in enumerate(PROPS):
        df[p] = (10 + scores[:, j % 2] + 0.1 * rng.normal(size=n)).round(3)
    df = df.astype(object)
    for row, col in missing:
        df.loc[row - 1, col] = ""
    return df.to_csv(index=False).encode()


def _home() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    return at


def _captions(at) -> str:
    return " | ".join(c.value for c in at.caption)


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_upload_on_home_follows_to_edpls_with_property_defaults():
    at = _home()
    at.radio(key="home_data_source").set_value("Upload a file").run()
    at.file_uploader(key="home_data_upload").set_value(("lab.csv", lab_export_bytes(), "text/csv")).run()
    # refused for its missing cells (file, row, column named) unless the rows are dropped on request
    errors = " ".join(e.value for e in at.error)
    assert "lab.csv" in errors and "'1108'" in errors and "data row 3" in errors
    assert at.session_state["pl_dataset"].name != "lab.csv"
    box = at.checkbox(key="home_data_dropna_lab.csv")
    assert box.label == "Drop rows with missing values (2 rows)" and box.value is False
    box.check().run()
    assert not at.exception
    ds = at.session_state["pl_dataset"]
    assert ds.name == "lab.csv" and ds.df.shape == (38, 35)
    assert "Left out: 2 data rows (3, 8)" in _captions(at)

    at.switch_page("pages/edpls.py").run()
    assert not at.exception, at.exception
    assert at.radio(key="edpls_data_source").value == "Upload a file"  # not replaced by the sample set
    assert at.session_state["pl_dataset"].name == "lab.csv"
    assert at.checkbox(key="edpls_data_dropna_lab.csv").value is True
    assert at.selectbox(key="edpls_response_upload_lab.csv").value == "moisture"
    assert at.select_slider(key="edpls_xrange_edpls_upload_lab.csv_moisture").value == ("1100", "1158")
    assert "Left out of X: sample_id, oil, protein, starch" in _captions(at)
    # strict mode: no range of y is read off the upload, the page asks for the public one
    assert any("Enter the public range of y" in i.value for i in at.info)

    # unticked: the engine's refusal again, and no fit
    at.checkbox(key="edpls_data_dropna_lab.csv").uncheck().run()
    assert not at.exception
    assert any("'1108'" in e.value and "data row 3" in e.value for e in at.error)
    assert not at.get("plotly_chart")


def _held(*args, **kwargs) -> None:
    """Stands for a slow part of Home above its data picker: it waits until the run is stopped."""
    from ui.jobs_view import stop_check

    for _ in range(1200):
        stop_check()
        time.sleep(0.05)


def _left_mid_read(monkeypatch, tmp_path, data: bytes, hold_home: bool = False) -> AppTest:
    """Home, with ``data`` uploaded as lab.csv and the run reading it stopped once it waits on the read, begun and
    held, as the browser's click on a page link stops it: at the wait's stop check. The read goes on once
    ``tmp_path``/go exists."""
    from tests.jobs_helpers import gated_parse
    from ui import jobs_view
    from ui.runtime import jobs

    (tmp_path / "go").unlink(missing_ok=True)
    (tmp_path / "started").unlink(missing_ok=True)
    monkeypatch.setattr("ui.upload_read._LOADS", OrderedDict())  # not read by an earlier test
    monkeypatch.setattr(jobs, "parse_upload", functools.partial(gated_parse, str(tmp_path)))
    jobs.run(operator.add, 1, 2)  # the forkserver is up (its first start is slow on a loaded machine)
    submitted = []

    def submit(*args, _submit=jobs.RUNNER.submit, **kwargs):
        submitted.append(_submit(*args, **kwargs))
        return submitted[-1]

    monkeypatch.setattr(jobs.RUNNER, "submit", submit)
    at = _home()
    at.radio(key="home_data_source").set_value("Upload a file").run()
    at.file_uploader(key="home_data_upload").set_value(("lab.csv", data, "text/csv"))
    if hold_home:  # the run the upload causes is stopped before it reaches the data picker
        monkeypatch.setattr("ui.home.demo.guided_demo", _held)
    held = threading.Event()

    def stop_check(_check=jobs_view.stop_check) -> None:  # the run waits (on the read, or in _held) on a read begun
        if submitted and (tmp_path / "started").exists():
            held.set()
        _check()

    monkeypatch.setattr(jobs_view, "stop_check", stop_check)
    with monkeypatch.context() as m:
        m.setattr(local_script_runner, "require_widgets_deltas", functools.partial(_stopped_once_held, held))
        with pytest.raises(RuntimeError, match="stopped while it waited"):
            at.run(timeout=60)
    assert [j.label for j in submitted] == ["Reading lab.csv"]  # the page was left while the file was being read
    return at


def _stopped_once_held(held: threading.Event, runner, timeout: float) -> None:
    """AppTest's wait for a run (``local_script_runner.require_widgets_deltas``), ended the way a click on a page
    link ends it: stopped at the run's stop check as soon as it waits (``held``), instead of after a fixed timeout
    (four of these runs held for 10 s each made the slowest test of the suite's non-browser tests). A run that
    finishes without waiting returns, and the caller's ``pytest.raises`` fails."""
    deadline = time.monotonic() + timeout
    while not runner.script_stopped():
        if held.wait(0.005) or time.monotonic() > deadline:
            runner.request_stop()
            runner.join()
            raise RuntimeError("the run was stopped while it waited" if held.is_set() else
                               f"the run neither finished nor waited within {timeout} s")


@pytest.mark.slow  # the upload and a page flow under AppTest: 1-4 s
def test_an_upload_still_being_read_follows_a_page_link(monkeypatch, tmp_path):
    """Issue 31 item 7: a lab export uploaded on Home and followed at once by a click on the edPLS card is waited
    for and used there, not silently replaced by the sample set Home had chosen."""
    at = _left_mid_read(monkeypatch, tmp_path, lab_export_bytes(missing=()))
    assert at.session_state["pl_dataset"].origin == "sample"
    (tmp_path / "go").touch()
    at.switch_page("pages/edpls.py").run()
    assert not at.exception, at.exception
    ds = at.session_state["pl_dataset"]
    assert ds.name == "lab.csv" and ds.origin == "upload" and ds.df.shape == (40, 35)
    assert at.radio(key="edpls_data_source").value == "Upload a file"
    assert at.selectbox(key="edpls_response_upload_lab.csv").value == "moisture"
    assert "**lab.csv**: 40 rows" in " ".join(m.value for m in at.markdown)


@pytest.mark.slow  # the upload and a page flow under AppTest: 1-4 s
def test_a_page_link_clicked_before_home_reaches_the_upload_keeps_it(monkeypatch, tmp_path):
    """The click stops the run the upload causes above Home's data picker: the read started by the uploader's
    on_change is kept, and edPLS uses the file."""
    at = _left_mid_read(monkeypatch, tmp_path, lab_export_bytes(missing=()), hold_home=True)
    assert at.session_state["pl_dataset"].origin == "sample"
    (tmp_path / "go").touch()
    at.switch_page("pages/edpls.py").run()
    assert not at.exception, at.exception
    assert at.session_state["pl_dataset"].name == "lab.csv"
    assert at.radio(key="edpls_data_source").value == "Upload a file"


@pytest.mark.slow  # four uploads and page flows under AppTest: 4-10 s
def test_a_read_kept_across_a_rerun_is_not_read_twice_and_another_source_ends_it(monkeypatch, tmp_path):
    """The same page's next run waits on the kept read (the same job, finished, not cancelled); on the landing page a
    file refused for missing cells shows the refusal and the checkbox; choosing a sample set or removing the file
    mid-read ends it."""
    at = _left_mid_read(monkeypatch, tmp_path, lab_export_bytes())
    job = at.session_state["pl_dataset_reading"].job
    (tmp_path / "go").touch()
    at.run()
    assert not at.exception, at.exception
    assert job.state == "done" and "pl_dataset_reading" not in at.session_state
    assert at.checkbox(key="home_data_dropna_lab.csv").value is False  # refused for its missing cells, as before

    at = _left_mid_read(monkeypatch, tmp_path, lab_export_bytes(missing=((5, "1110"),)))  # another content
    (tmp_path / "go").touch()
    at.switch_page("pages/edpls.py").run()
    assert not at.exception, at.exception
    assert at.session_state["pl_dataset"].name == "lab.csv"
    assert at.checkbox(key="edpls_data_dropna_lab.csv").value is False
    assert any("'1110'" in e.value and "data row 5" in e.value for e in at.error)
    at.checkbox(key="edpls_data_dropna_lab.csv").check().run()
    assert at.session_state["pl_dataset"].df.shape == (39, 35)

    at = _left_mid_read(monkeypatch, tmp_path, lab_export_bytes(missing=((6, "1110"),)))
    job = at.session_state["pl_dataset_reading"].job
    at.radio(key="home_data_source").set_value("Sample data").run()
    assert job.wait(10) and job.state == "cancelled"
    at.switch_page("pages/edpls.py").run()
    assert at.session_state["pl_dataset"].origin == "sample"

    at = _left_mid_read(monkeypatch, tmp_path, lab_export_bytes(missing=((7, "1110"),)))
    job = at.session_state["pl_dataset_reading"].job
    at.file_uploader(key="home_data_upload").set_value(None).run()  # the file removed from the uploader
    assert job.wait(10) and job.state == "cancelled"
    at.switch_page("pages/edpls.py").run()
    assert at.session_state["pl_dataset"].origin == "sample"


def test_a_choice_that_does_not_suit_a_page_is_kept_for_the_others():
    at = _home()
    at.selectbox(key="home_data_sample").set_value("Solar PV, 44 sites (synthetic)").run()
    assert at.session_state["pl_dataset"].name == "Solar PV, 44 sites (synthetic)"
    at.switch_page("pages/dp_pcr.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="dp_pcr_data_sample").value == "NIR spectra (synthetic)"  # the page still works
    assert at.session_state["pl_dataset"].name == "Solar PV, 44 sites (synthetic)"  # and the choice is kept
    at.selectbox(key="dp_pcr_data_sample").set_value("Fermentation MIR spectra with glucose (chemotools)").run()
    assert not at.exception, at.exception
    assert at.session_state["pl_dataset"].name.startswith("Fermentation")  # an explicit pick replaces it
    assert at.selectbox(key="dp_pcr_response_sample_" + at.session_state["pl_dataset"].name).value == "glucose"


def test_x_and_y_as_two_files_on_edpls():
    rng = np.random.default_rng(1)
    n, m = 30, 12
    s = rng.normal(size=n)
    X = pd.DataFrame(0.3 + 0.05 * np.outer(s, rng.normal(size=m)) + 0.002 * rng.normal(size=(n, m)),
                     columns=[str(1100 + 2 * j) for j in range(m)])
    X.insert(0, "sample", [f"c{i:02d}" for i in range(n)])
    Y = pd.DataFrame({"sample": [f"c{i:02d}" for i in range(n)], "oil": 3 + s, "protein": 9 - s})
    Y = Y.iloc[rng.permutation(n)]  # another order: matched by the shared id
    at = AppTest.from_file(str(ROOT / "pages" / "edpls.py"), default_timeout=TIMEOUT)
    at.session_state["pl_mode"] = "paper"  # fits an upload without a declared y range
    at.run()
    at.radio(key="edpls_data_source").set_value("X and Y as two files").run()
    at.file_uploader(key="edpls_data_xfile").set_value(("spectra.csv", X.to_csv(index=False).encode(),
                                                        "text/csv")).run()
    at.file_uploader(key="edpls_data_yfile").set_value(("refs.csv", Y.to_csv(index=False).encode(),
                                                        "text/csv")).run()
    assert not at.exception, at.exception
    ds = at.session_state["pl_dataset"]
    assert ds.name == "spectra.csv + refs.csv" and ds.response_columns == ("oil", "protein")
    np.testing.assert_allclose(ds.df["oil"].to_numpy(), 3 + s)  # rows matched by id, not by order
    assert at.selectbox(key=f"edpls_response_upload_{ds.name}").value == "oil"
    assert at.get("plotly_chart"), [e.value for e in at.error]
    # ids that do not match: a message naming both files, the joined data stay selected
    Y2 = Y.assign(sample=[f"d{i:02d}" for i in range(n)])
    at.file_uploader(key="edpls_data_yfile").set_value(("refs2.csv", Y2.to_csv(index=False).encode(),
                                                        "text/csv")).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "spectra.csv" in errors and "refs2.csv" in errors and "'sample'" in errors
    assert at.session_state["pl_dataset"].name == "spectra.csv + refs.csv"
