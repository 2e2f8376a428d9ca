"""Hostile uploads through the pages (issue #10): every file of ``tests/data/hostile`` and three
large ones generated here (a million columns, a file over the upload limit, a workbook with
several sheets; never committed) goes through each page's data picker under Streamlit's AppTest,
after a valid data set was selected.

For every case: no exception; a rejected file gets an error naming the file (and the row and
column where the engine gives them) while the previous data stay selected in
``st.session_state["pl_dataset"]`` and the page keeps its charts; a file the page can use
(``tricky_*`` files on the home page, small valid tables where they fit) is loaded with the
engine's values. Pages start from a small valid upload where their sample data are slow to fit,
so the runs stay short. The home page gets the whole corpus; each method page gets every case its
own checks decide (the well-formed tables, the tricky files, one row, the multi-sheet workbook)
and a sample of the format refusals, which go through the same picker code as on the home page;
``PRIVALAB_HOSTILE_FULL=1`` runs the whole corpus through every page.
"""
from __future__ import annotations

import io
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from bombs import BOMBS
from engine.data import MAX_UPLOAD_MB, DataError, load_table
from engine.methods import registry
from workbooks import workbook_bytes

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "data" / "hostile"
TIMEOUT = 120
XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

# ------------------------------------------------------------------------------------ the corpus
# Files every page refuses (load_table or the generic check refuses them), with words the message needs.
TABLE_WORDS = {
    "binary_png.csv": ["looks like a binary file"],
    "blank_lines.csv": ["empty"],
    "control_chars.csv": ["looks like a binary file"],
    "data.json": ["'.json'", "not supported"],
    "decimal_comma_tab.tsv": ["'1,5'", "semicolon"],
    "duplicate_headers.csv": ["duplicate column names", "'a'", "columns 2 and 4"],
    "empty.csv": ["the file is empty"],
    "empty_cell.csv": ["the cell is empty"],
    "empty_named_column.csv": ["no values"],
    "header_only.csv": ["no data rows"],
    "inf_cell.csv": ["'inf'", "infinite"],
    "nan_cell.csv": ["'NaN'"],
    "not_a_workbook.xlsx": ["not a valid .xlsx workbook"],
    "old_excel.xls": ["'.xls'", "save it as .xlsx"],
    "one_row.csv": ["has 1"],
    "ragged_row.csv": ["4 fields", "3 columns"],
    "short_row.csv": ["2 fields", "3 columns"],
    "text_in_numeric.csv": ["'n/a' is not a number"],
    "unclosed_quote.csv": ["quote"],
    "unnamed_column.csv": ["column 1 has no name"],
    "wide_1e6.csv": ["1,000,000 columns"],
    "over_limit.csv": [f"the limit is {MAX_UPLOAD_MB} MB"],
}
# Generated bombs (tests/bombs.py, issue #20): zip, XLSX, very long line, 10^7 tiny rows (10^6 columns: wide_1e6.csv)
GENERATED_BOMBS = {n: w for n, (_, w) in BOMBS.items() if n != "columns_1e6.csv"}
TABLE_WORDS.update(GENERATED_BOMBS)
MULTI_SHEET = "multi_sheet.xlsx"
# Format refusals also run through every method page (the rest only with PRIVALAB_HOSTILE_FULL=1).
ON_EVERY_PAGE = {"binary_png.csv", "nan_cell.csv", "text_in_numeric.csv", "duplicate_headers.csv", "one_row.csv",
                 "inf_cell.csv"}
FULL = os.environ.get("PRIVALAB_HOSTILE_FULL", "").strip() not in ("", "0", "false", "no")
# Well-formed tables: the home page takes them; a method page takes those it can use.
VALID_TABLES = {
    "constant_column.csv", "duplicate_columns.csv", "duplicate_timestamp.csv", "ids_x.csv", "ids_y.csv",
    "long_duplicates.csv", "long_missing_time.csv", "mismatch_x.csv", "mismatch_y.csv", "unparseable_time.csv",
}
TRICKY = {p.name for p in HOSTILE.glob("tricky_*")}
# Hostile but valid: exact values after loading (checked on the home page).
TRICKY_VALUES = {
    "tricky_semicolon_decimal_comma.csv": (["probe", "Feuchte", "Öl", "Protein"],
                                           {"Feuchte": [10.45, 10.41, 9.73], "Protein": [8.75, -8.66, 12.0]}),
    "tricky_latin1_header.csv": (["Feuchtigkeit_%", "Größe_µm", "Kalibriert_é"],
                                 {"Feuchtigkeit_%": [1.5, 4.0], "Größe_µm": [2.0, 5.25]}),
    "tricky_bom.csv": (["oil", "protein"], {"oil": [3.5, 3.6]}),
    "tricky_tab_in_csv.csv": (["a", "b", "c"], {"b": [2.0, 5.25]}),
    "tricky_comma_in_tsv.tsv": (["a", "b", "c"], {"a": [1.5, 4.0]}),
    "tricky_utf16_excel_unicode_text.txt": (["site", "power"], {"power": [1.5, 2.5]}),
    "tricky_crlf_trailing_delimiters.csv": (["a", "b", "c"], {"c": [3.0, 6.0]}),
    "tricky_quoted_fields.csv": (["name", "value"], {"value": [1.5, 2.5]}),
    "tricky_spaces.csv": (["a", "b"], {"a": [1.0, 3.0]}),
}


def _workbook(sheets: dict) -> bytes:
    return workbook_bytes(sheets)


MULTI_ROWS = [["id", "a", "b", "c"]] + [[f"s{i}", 0.5 * i, 1.0 + i * i, 3.0 - i] for i in range(6)]


@pytest.fixture(scope="module")
def corpus() -> dict:
    """name -> bytes: the committed files, then the generated ones (built in memory, never committed)."""
    files = {p.name: p.read_bytes() for p in sorted(HOSTILE.iterdir()) if p.is_file()}
    n = 1_000_000
    files["wide_1e6.csv"] = (",".join(f"c{i}" for i in range(n)) + "\n" + ",".join(["1"] * n) + "\n").encode()
    limit = MAX_UPLOAD_MB * 1024 * 1024
    files["over_limit.csv"] = b"a,b\n" + b"1,2\n" * (limit // 4 + 1)
    files[MULTI_SHEET] = _workbook({"Notes": [["note"], ["hello"]], "Data": MULTI_ROWS})
    files.update({n: BOMBS[n][0]() for n in GENERATED_BOMBS})
    assert len(files["over_limit.csv"]) > limit
    return files


def test_corpus_is_large_and_covers_the_issue(corpus):
    committed = {p.name for p in HOSTILE.iterdir()}
    assert len(committed) >= 30 and len(corpus) >= 40
    assert set(TABLE_WORDS) | VALID_TABLES | TRICKY | {MULTI_SHEET} == set(corpus)
    for needed in ("tricky_tab_in_csv.csv", "tricky_semicolon_decimal_comma.csv", "tricky_bom.csv",
                   "tricky_latin1_header.csv", "empty.csv", "header_only.csv", "one_row.csv", "nan_cell.csv",
                   "inf_cell.csv", "text_in_numeric.csv", "duplicate_headers.csv", "mismatch_x.csv",
                   "binary_png.csv"):
        assert needed in committed, needed
    # the generated ones stay out of the repository
    assert not {"wide_1e6.csv", "over_limit.csv", MULTI_SHEET, *GENERATED_BOMBS} & committed


# ------------------------------------------------------------------------------ small valid data
def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def _small_spectra(n: int = 30, m: int = 12) -> bytes:
    rng = np.random.default_rng(2)
    scores = rng.normal(size=(n, 2))
    X = scores @ rng.normal(size=(2, m)) * 0.1 + 0.5 + 0.01 * rng.normal(size=(n, m))
    frame = pd.DataFrame(X.round(5), columns=[str(1100 + 2 * j) for j in range(m)])
    frame["oil"] = (3 + scores[:, 0] + 0.05 * rng.normal(size=n)).round(4)
    return _csv(frame)


def _small_timeseries(n: int = 72) -> bytes:
    rng = np.random.default_rng(0)
    t = pd.date_range("2024-01-01", periods=n, freq="h")
    a = np.cumsum(rng.normal(size=n)) + 5
    b = 0.6 * np.roll(a, 1) + rng.normal(size=n)
    c = 0.3 * a + rng.normal(size=n)
    return _csv(pd.DataFrame({"time": t.strftime("%Y-%m-%d %H:%M"), "A": a, "B": b, "C": c}))


def _small_two_views(n: int = 80) -> bytes:
    rng = np.random.default_rng(1)
    z = rng.normal(size=(n, 2))
    x = np.c_[z, rng.normal(size=n)] + 0.3 * rng.normal(size=(n, 3))
    y = z @ np.array([[1.0, 0.5], [0.2, -1.0]]) + 0.3 * rng.normal(size=(n, 2))
    return _csv(pd.DataFrame(np.c_[x, y], columns=["x1", "x2", "x3", "y1", "y2"]))


def _small_process(n: int = 60) -> bytes:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, 4))
    kpi = X @ np.array([1.0, -0.5, 0.8, 0.3]) + 0.1 * rng.normal(size=n)
    frame = pd.DataFrame(X, columns=["sup_t1", "sup_t2", "mfg_p1", "mfg_p2"])
    frame["kpi"] = kpi
    return _csv(frame)


def _small_table(n: int = 60) -> bytes:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(n, 3))
    return _csv(pd.DataFrame({"f1": X[:, 0], "f2": X[:, 1] + 0.5 * X[:, 0], "f3": X[:, 2], "y": X.sum(axis=1)}))


@dataclass
class PageSpec:
    file: str
    key: str
    valid: tuple | None  # (name, bytes) uploaded first; None: the page's sample data
    presets: dict = field(default_factory=dict)  # widget state set before the first run
    accepted: frozenset = frozenset()  # corpus files this page takes (run last)
    words: dict = field(default_factory=dict)  # kind-specific refusals: file -> words
    default_words: tuple = ("needs at least",)  # any other kind-specific refusal
    charts: bool = True


#: The small valid upload of each data kind (``MethodSpec.data_kind``), uploaded first on a method's page.
GOOD_UPLOADS = {"spectra": ("small_spectra.csv", _small_spectra), "table": ("small_table.csv", _small_table),
                "two_views": ("small_views.csv", _small_two_views),
                "party_blocks": ("small_chain.csv", _small_process),
                "panel": ("small_series.csv", _small_timeseries)}
_SPECTRA_WORDS = {"constant_column.csv": ["column has the same value", "'1104'"],
                  "ids_x.csv": ["at least 5 data rows", "has 4"],
                  "duplicate_timestamp.csv": ["at least 3 numeric columns", "has 2", "'time'"]}
#: What a method's page needs beyond the spec the registry gives (presets, corpus files it takes, refusal words);
#: a method not listed here gets the defaults of ``PageSpec``.
OVERRIDES = {
    "edpls": dict(presets={"pl_mode": "paper"},  # paper mode fits an upload without a public |y| bound
                  accepted=frozenset({"duplicate_columns.csv", "mismatch_x.csv"}), words=_SPECTRA_WORDS),
    "dp_pcr": dict(presets={"dp_pcr_y_low_upload_small_spectra.csv_oil": 0.0,  # a declared public range
                            "dp_pcr_y_high_upload_small_spectra.csv_oil": 10.0},
                   accepted=frozenset({"duplicate_columns.csv", "mismatch_x.csv"}), words=_SPECTRA_WORDS),
    "var_admm": dict(words={"duplicate_timestamp.csv": ["column 'time'", "2024-01-02", "appears twice",
                                                        "data row 2", "data row 4"],
                            "unparseable_time.csv": ["column 'time'", "data row 4", "'2024-13-45'"],
                            "long_duplicates.csv": ["site 'B'", "two values", "data row 5", "data row 8"],
                            "long_missing_time.csv": ["site 'C'", "no value for 1 of 4 times"],
                            "constant_column.csv": ["same value in every row", "'1104'"],
                            "ids_y.csv": ["at least two series"], "mismatch_y.csv": ["at least two series"],
                            "mismatch_x.csv": ["at least 50 time steps"]},
                     default_words=("at least",)),
    "dp_cca": dict(presets={"dp_cca_source": "split"},
                   accepted=frozenset({"duplicate_timestamp.csv", "ids_x.csv", "mismatch_x.csv",
                                       "unparseable_time.csv", "tricky_semicolon_decimal_comma.csv"}),
                   words={"duplicate_columns.csv": ["identical contents", "'x1' and 'x3'"],
                          "constant_column.csv": ["same value in every row", "'1104'"]}),
    "p3ls": dict(accepted=frozenset({"duplicate_columns.csv", "mismatch_x.csv"}),
                 words={"constant_column.csv": ["same value in every row", "'1104'"]}),
    "pca_gauss": dict(presets={"pg_data_kind": "Sample data or upload"},
                      words={"ids_y.csv": ["two numeric feature columns"]},
                      default_words=("at least",)),
}


def hostile_specs() -> dict:
    """The home page and one spec per registered method (read from the registry when called): its page, its
    picker key (``MethodSpec.upload_key``) and the valid upload of its data kind, plus its ``OVERRIDES``."""
    pages = {"home": PageSpec("app.py", "home_data", ("good.csv", b"id,a,b,c\ns1,1.0,2.0,3.5\ns2,2.0,1.0,4.5\n"
                                                                b"s3,3.0,0.5,1.5\ns4,4.0,3.0,2.5\n"),
                              accepted=frozenset(VALID_TABLES | TRICKY), charts=False)}
    for spec in registry.METHODS:
        name, make = GOOD_UPLOADS[spec.data_kind]
        pages[spec.key] = PageSpec(spec.page, spec.upload_key, (name, make()), **OVERRIDES.get(spec.key, {}))
    return pages


PAGES = hostile_specs()


def test_every_registered_method_has_a_hostile_upload_spec():
    """A method added to the registry without a spec here would never meet the hostile corpus."""
    missing = [spec.key for spec in registry.METHODS if spec.key not in PAGES or PAGES[spec.key].file != spec.page]
    assert not missing, f"registered methods without a hostile-upload spec: {missing}"


def _errors(at) -> str:
    return " | ".join(e.value for e in at.error)


def _charts(at) -> int:
    return len(at.get("plotly_chart"))


def _dataset(at):
    return at.session_state["pl_dataset"] if "pl_dataset" in at.session_state else None


_ENGINE_ERRORS: dict = {}


def _engine_error(name: str, data: bytes) -> DataError | None:
    """What load_table says about the file (None: a valid table); computed once per file."""
    if name not in _ENGINE_ERRORS:
        try:
            load_table(io.BytesIO(data), name=name)
        except DataError as err:
            _ENGINE_ERRORS[name] = err
        else:
            _ENGINE_ERRORS[name] = None
    return _ENGINE_ERRORS[name]


def _mime(name: str) -> str:
    return XLSX_MIME if name.endswith(".xlsx") else "text/csv"


def _open(spec: PageSpec) -> AppTest:
    at = AppTest.from_file(str(ROOT / spec.file), default_timeout=TIMEOUT)
    for k, v in spec.presets.items():
        at.session_state[k] = v
    if spec.valid is not None:
        at.session_state[f"{spec.key}_source"] = "Upload a file"
    at.run()
    assert not at.exception, at.exception
    if spec.valid is None:
        at.radio(key=f"{spec.key}_source").set_value("Upload a file").run()
    else:
        name, data = spec.valid
        at.file_uploader(key=f"{spec.key}_upload").set_value((name, data, "text/csv")).run()
        assert not at.exception, at.exception
        assert _dataset(at).name == name, _errors(at)
    return at


def _accepted_failures(at, spec: PageSpec, name: str, data: bytes, now, baseline: set) -> list:
    """A usable file is taken as load_table reads it, and the page fits it or says what it needs."""
    where = f"{spec.file} / {name}"
    expected = load_table(io.BytesIO(data), name=name)
    if now is None or now.name != name:
        return [f"{where}: a usable file was not taken: {_errors(at)}"]
    pd.testing.assert_frame_equal(now.df, expected)
    if name in TRICKY_VALUES:
        columns, values = TRICKY_VALUES[name]
        assert list(now.df.columns) == columns, where
        for col, vals in values.items():
            np.testing.assert_array_equal(now.df[col].to_numpy(), vals, err_msg=where)
    if spec.charts:  # the page fits it or says what it needs: never silent
        # a chart, or a message the page did not show on the valid data (what the file lacks)
        new = [m.value for m in (*at.error, *at.warning, *at.info) if m.value not in baseline]
        assert _charts(at) or new, f"{where}: no result and no new message"
    return []


def _refusal_message(at, spec: PageSpec, name: str, data: bytes) -> tuple[str, list]:
    """The page's refusal text and the words it must hold (the file, and the engine's row and column)."""
    if name == MULTI_SHEET:
        text = " | ".join(w.value for w in at.warning)
        return text, [name, "2 sheets", "'Notes'", "'Data'", "choose the sheet"]
    text = _errors(at)
    words = [name, "Upload rejected"] + (TABLE_WORDS[name] if name in TABLE_WORDS
                                         else spec.words.get(name, list(spec.default_words)))
    err = _engine_error(name, data)
    if err is not None and name != "over_limit.csv":
        assert err.message in text, f"{spec.file} / {name}: the engine's message is not shown: {text}"
        if err.row is not None:
            words.append(f"data row {err.row}")
        if err.column is not None:
            words.append(f"'{err.column}'")
    return text, words


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
@pytest.mark.parametrize("page", list(PAGES))
def test_every_hostile_upload_keeps_the_page_and_its_data(page, corpus):
    spec = PAGES[page]
    t0 = time.perf_counter()
    at = _open(spec)
    previous = _dataset(at)
    assert previous is not None
    charts = _charts(at)
    if spec.charts:
        assert charts >= 1, f"{page}: no chart on the valid data: {_errors(at)}"
    # messages the page shows anyway (e.g. P3LS's "no privacy budget applies"): they do not count as an answer
    baseline = {m.value for m in (*at.error, *at.warning, *at.info)}
    cases = [n for n in corpus if FULL or page == "home" or n not in TABLE_WORDS or n in ON_EVERY_PAGE]
    order = [n for n in cases if n not in spec.accepted] + [n for n in cases if n in spec.accepted]
    failures = []
    for name in order:
        data = corpus[name]
        at.file_uploader(key=f"{spec.key}_upload").set_value((name, data, _mime(name))).run()
        where = f"{page} / {name}"
        if at.exception:
            failures.append(f"{where}: exception {at.exception[0].value[:300]}")
            continue
        now = _dataset(at)
        if name in spec.accepted:
            failures += _accepted_failures(at, spec, name, data, now, baseline)
            continue
        # refused: a message naming the file (and row/column), previous data and charts kept
        text, words = _refusal_message(at, spec, name, data)
        missing = [w for w in words if w not in text]
        if missing:
            failures.append(f"{where}: {missing} not in the message {text[:300]!r}")
        if now is None or now.name != previous.name:
            failures.append(f"{where}: the previous data ({previous.name}) are no longer selected")
        elif not any(f"Still using the previous data: {previous.name}" in i.value for i in at.info):
            failures.append(f"{where}: no note that the previous data are still used")
        if spec.charts and _charts(at) != charts:
            failures.append(f"{where}: {charts} charts before, {_charts(at)} after")
    assert not failures, "\n".join(failures)
    print(f"{page}: {len(order)} uploads in {time.perf_counter() - t0:.1f} s")


def test_multi_sheet_workbook_offers_a_sheet_choice(corpus):
    spec = PAGES["home"]
    at = _open(spec)
    at.file_uploader(key="home_data_upload").set_value((MULTI_SHEET, corpus[MULTI_SHEET], XLSX_MIME)).run()
    assert not at.exception and _dataset(at).name == "good.csv"
    at.selectbox(key=f"home_data_sheet_{MULTI_SHEET}").set_value("Data").run()
    assert not at.exception
    ds = _dataset(at)
    assert ds.name == f"{MULTI_SHEET} [Data]"
    assert list(ds.df.columns) == ["id", "a", "b", "c"]
    np.testing.assert_array_equal(ds.df["b"].to_numpy(), [1.0 + i * i for i in range(6)])
    at.selectbox(key=f"home_data_sheet_{MULTI_SHEET}").set_value("Notes").run()  # a sheet without numbers
    assert not at.exception
    assert "1 data row" in _errors(at) and _dataset(at).name == f"{MULTI_SHEET} [Data]"


def test_dp_cca_two_files_with_mismatched_rows_keep_the_previous_pair(corpus):
    at = AppTest.from_file(str(ROOT / "pages" / "dp_cca.py"), default_timeout=TIMEOUT)
    at.session_state["dp_cca_source"] = "files"
    at.run()
    frame = pd.read_csv(io.BytesIO(_small_two_views()))
    at.file_uploader(key="dp_cca_file_x").set_value(("views_x.csv", _csv(frame[["x1", "x2", "x3"]]), "text/csv"))
    at.file_uploader(key="dp_cca_file_y").set_value(("views_y.csv", _csv(frame[["y1", "y2"]]), "text/csv")).run()
    assert not at.exception, at.exception
    charts = _charts(at)
    assert charts >= 1, _errors(at)
    at.file_uploader(key="dp_cca_file_x").set_value(("mismatch_x.csv", corpus["mismatch_x.csv"], "text/csv"))
    at.file_uploader(key="dp_cca_file_y").set_value(("mismatch_y.csv", corpus["mismatch_y.csv"], "text/csv")).run()
    assert not at.exception, at.exception
    assert "mismatch_x.csv has 5 data rows but mismatch_y.csv has 4" in _errors(at)
    assert any("Still using the previous pair: views_x.csv + views_y.csv" in i.value for i in at.info)
    assert at.session_state["dp_cca_files_pair"][0] == "views_x.csv + views_y.csv"
    assert _charts(at) == charts


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_an_upload_from_home_that_does_not_fit_a_page_is_set_aside(corpus):
    at = _open(PAGES["home"])
    at.file_uploader(key="home_data_upload").set_value(("long_duplicates.csv", corpus["long_duplicates.csv"],
                                                        "text/csv")).run()
    assert _dataset(at).name == "long_duplicates.csv"
    at.switch_page("pages/p3ls.py").run()
    assert not at.exception, at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "long_duplicates.csv, chosen earlier, cannot be used on this page" in warnings
    assert "at least 5 data rows" in warnings or "numeric column" in warnings
    # the page works on its own sample set, and the upload stays chosen for the pages that can use it (issue #19)
    assert at.radio(key="p3ls_data_source").value == "Sample data" and _charts(at) >= 1
    assert _dataset(at).name == "long_duplicates.csv"
