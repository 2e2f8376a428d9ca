"""Data intake: hostile files must be rejected with specific messages, valid ones read exactly.

Corpus: ``tests/data/hostile`` (rejected files, plus ``tricky_*`` files that must still parse) and
``tests/data/good``. Large and binary-workbook cases are generated in ``tmp_path`` at run time.
Row convention checked here: "data row N" is 1-based below the header; "(line L)" is the
file line with the header on line 1, "(sheet row L)" the XLSX row.
"""
from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.data import (
    MAX_COLUMNS,
    MAX_UPLOAD_MB,
    DataError,
    TimeSeriesData,
    TwoViewData,
    check_constant_columns,
    check_duplicate_columns,
    check_finite_array,
    check_matching_rows,
    check_min_rows,
    check_usable,
    load_table,
    load_timeseries,
    load_two_view_files,
    require_numeric,
    timeseries_from_frame,
)
from workbooks import workbook_bytes

HERE = Path(__file__).resolve().parent
BAD = HERE / "data" / "hostile"  # the hostile-input corpus (issue #10)
GOOD = HERE / "data" / "good"
CORN = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "corn"


class Upload:
    """What Streamlit's UploadedFile offers: .name, .size, .getvalue(), .read()."""

    def __init__(self, name: str, data: bytes, size: int | None = None):
        self.name = name
        self._buf = io.BytesIO(data)
        self.size = len(data) if size is None else size
        self.reads = 0

    def getvalue(self) -> bytes:
        self.reads += 1
        return self._buf.getvalue()

    def read(self) -> bytes:
        self.reads += 1
        return self._buf.read()


# ------------------------------------------------------------------------------------------
# Rejected corpus: (case id, loader call, words the message must contain, expected attributes)

def _table(f):
    return lambda: load_table(BAD / f)


def _usable(f, kind, folder=BAD):
    """What a page does with an upload: read it, then check it can serve the page's kind of analysis."""
    return lambda: check_usable(load_table(folder / f), f, kind)


def _numeric(f, columns, folder=BAD):
    """What a method's frame adapter does with the columns the user chose."""
    return lambda: require_numeric(load_table(folder / f), columns, f)


REJECTED = [
    ("empty", _table("empty.csv"), ["empty.csv", "empty"], {}),
    ("blank_lines", _table("blank_lines.csv"), ["blank_lines.csv", "empty"], {}),
    ("header_only", _table("header_only.csv"), ["header_only.csv", "no data rows"], {}),
    ("one_row", _usable("one_row.csv", "spectra"), ["one_row.csv", "at least 5 data rows", "has 1"], {}),
    ("nan_cell", _table("nan_cell.csv"), ["nan_cell.csv", "column 'oil'", "data row 3", "line 4", "'NaN'"],
     {"row": 3, "column": "oil", "line": 4}),
    ("empty_cell", _table("empty_cell.csv"), ["empty_cell.csv", "column '1102'", "data row 4", "empty"],
     {"row": 4, "column": "1102"}),
    ("inf_cell", _table("inf_cell.csv"), ["inf_cell.csv", "column '1104'", "data row 5", "'inf'", "infinite"],
     {"row": 5, "column": "1104"}),
    ("text_in_numeric", _table("text_in_numeric.csv"),
     ["text_in_numeric.csv", "column 'oil', data row 7 (line 8): 'n/a' is not a number"],
     {"row": 7, "column": "oil", "line": 8}),
    ("duplicate_headers", _table("duplicate_headers.csv"), ["duplicate_headers.csv", "'a'", "columns 2 and 4"],
     {"column": "a"}),
    ("ragged_row", _table("ragged_row.csv"), ["ragged_row.csv", "data row 3", "line 4", "4 fields", "3 columns"],
     {"row": 3}),
    ("short_row", _table("short_row.csv"), ["short_row.csv", "data row 4", "2 fields", "3 columns"], {"row": 4}),
    ("unclosed_quote", _table("unclosed_quote.csv"), ["unclosed_quote.csv", "data row 2", "quote"], {"row": 2}),
    ("binary_png", _table("binary_png.csv"), ["binary_png.csv", "looks like a binary file, not a CSV/TSV"], {}),
    ("control_chars", _table("control_chars.csv"), ["control_chars.csv", "looks like a binary file"], {}),
    ("unsupported_ext", _table("data.json"), ["data.json", "'.json'", "not supported"], {}),
    ("old_xls", _table("old_excel.xls"), ["old_excel.xls", "'.xls'", "save it as .xlsx"], {}),
    ("csv_named_xlsx", _table("not_a_workbook.xlsx"), ["not_a_workbook.xlsx", "not a valid .xlsx"], {}),
    ("unnamed_column", _table("unnamed_column.csv"), ["unnamed_column.csv", "column 1 has no name", "data row 1"],
     {"row": 1}),
    ("empty_named_column", _table("empty_named_column.csv"), ["empty_named_column.csv", "column 'b'", "no values"],
     {"column": "b"}),
    ("decimal_comma_in_tab_file", _table("decimal_comma_tab.tsv"),
     ["decimal_comma_tab.tsv", "column 'a'", "data row 1", "'1,5'", "semicolon"], {"row": 1, "column": "a"}),
    ("mismatched_pair", lambda: load_two_view_files(BAD / "mismatch_x.csv", BAD / "mismatch_y.csv"),
     ["mismatch_x.csv", "5 data rows", "mismatch_y.csv", "has 4"], {}),
    ("constant_channel", _usable("constant_column.csv", "spectra"),
     ["constant_column.csv", "'1104'", "same value in every row"], {"column": "1104"}),
    ("duplicate_columns", _usable("duplicate_columns.csv", "two_views"),
     ["duplicate_columns.csv", "identical contents", "'x1' and 'x3'"], {"column": "x3"}),
    ("long_duplicates", lambda: load_timeseries(BAD / "long_duplicates.csv"),
     ["long_duplicates.csv", "site 'B'", "2024-01-01 01:00", "data row 5", "data row 8"], {"row": 8}),
    ("long_missing_time", lambda: load_timeseries(BAD / "long_missing_time.csv"),
     ["long_missing_time.csv", "site 'C'", "1 of 4 times", "2024-01-01 02:00"], {"column": "C"}),
    ("unparseable_time", lambda: load_timeseries(BAD / "unparseable_time.csv"),
     ["unparseable_time.csv", "column 'time'", "data row 4", "line 5", "'2024-13-45'"], {"row": 4, "column": "time"}),
    ("duplicate_timestamp", lambda: load_timeseries(BAD / "duplicate_timestamp.csv"),
     ["duplicate_timestamp.csv", "2024-01-02", "twice", "data row 2", "data row 4"], {"row": 4, "column": "time"}),
    ("missing_response", _numeric("spectra.csv", ["Oil"], GOOD),
     ["spectra.csv", "'Oil' not found", "Did you mean 'oil'"], {"column": "Oil"}),
    ("text_response", _numeric("spectra.csv", ["sample"], GOOD),
     ["spectra.csv", "'sample'", "text"], {"column": "sample"}),
]


@pytest.mark.parametrize("case, call, words, attrs", REJECTED, ids=[c[0] for c in REJECTED])
def test_hostile_file_is_rejected_with_a_specific_message(case, call, words, attrs):
    with pytest.raises(DataError) as info:
        call()
    msg = str(info.value)
    for w in words:
        assert w in msg, f"{case}: {w!r} not in {msg!r}"
    for key, value in attrs.items():
        assert getattr(info.value, key) == value, (case, key, msg)
    assert info.value.file is not None and info.value.file in msg


def test_rejected_corpus_is_large_enough():
    files = {p.name for p in BAD.iterdir() if not p.name.startswith("tricky_")}
    assert len(REJECTED) >= 20 and len(files) >= 20


def test_data_error_is_a_value_error_with_location():
    err = DataError("x.csv: boom", file="x.csv", row=3, column="a")
    assert isinstance(err, ValueError)
    assert (err.file, err.row, err.column, str(err)) == ("x.csv", 3, "a", "x.csv: boom")


# ------------------------------------------------------------------------------------------
# Hostile but valid: must parse, with the right values

def test_semicolon_with_decimal_commas_parses_as_decimals():
    df = load_table(BAD / "tricky_semicolon_decimal_comma.csv")
    assert list(df.columns) == ["probe", "Feuchte", "Öl", "Protein"]
    np.testing.assert_array_equal(df["Feuchte"].to_numpy(), [10.45, 10.41, 9.73])
    np.testing.assert_array_equal(df["Öl"].to_numpy(), [3.687, 3.72, 3.699])
    np.testing.assert_array_equal(df["Protein"].to_numpy(), [8.75, -8.66, 12.0])
    assert df["Feuchte"].dtype == np.float64
    assert list(df["probe"]) == ["p1", "p2", "p3"]


@pytest.mark.parametrize("fname", ["tricky_tab_in_csv.csv", "tricky_comma_in_tsv.tsv"])
def test_wrong_delimiter_for_extension_still_parses(fname):
    df = load_table(BAD / fname)
    assert list(df.columns) == ["a", "b", "c"]
    np.testing.assert_array_equal(df.to_numpy(), [[1.5, 2, 3], [4, 5.25, 6]])


def test_utf8_bom_is_removed_from_first_header():
    df = load_table(BAD / "tricky_bom.csv")
    assert list(df.columns) == ["oil", "protein"]
    np.testing.assert_array_equal(df["oil"], [3.5, 3.6])


def test_latin1_header_with_semicolons_and_decimal_comma():
    raw = (BAD / "tricky_latin1_header.csv").read_bytes()
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")  # the fixture really is not UTF-8
    df = load_table(BAD / "tricky_latin1_header.csv")
    assert list(df.columns) == ["Feuchtigkeit_%", "Größe_µm", "Kalibriert_é"]
    np.testing.assert_array_equal(df.to_numpy(), [[1.5, 2, 3], [4, 5.25, 6]])


def test_crlf_trailing_delimiters_and_blank_line():
    df = load_table(BAD / "tricky_crlf_trailing_delimiters.csv")
    assert list(df.columns) == ["a", "b", "c"]
    np.testing.assert_array_equal(df.to_numpy(), [[1, 2, 3], [4, 5, 6]])


def test_quoted_fields_with_delimiters_and_quotes():
    df = load_table(BAD / "tricky_quoted_fields.csv")
    assert list(df["name"]) == ["Smith, J.", 'say "hi"']
    np.testing.assert_array_equal(df["value"], [1.5, 2.5])


def test_utf16_tab_text_as_excel_saves_it():
    df = load_table(BAD / "tricky_utf16_excel_unicode_text.txt")
    assert list(df["site"]) == ["Nord", "Süd"]
    np.testing.assert_array_equal(df["power"], [1.5, 2.5])


def test_spaces_around_names_and_values_are_ignored():
    df = load_table(BAD / "tricky_spaces.csv")
    assert list(df.columns) == ["a", "b"]
    np.testing.assert_array_equal(df.to_numpy(), [[1, 2], [3, 4]])


# ------------------------------------------------------------------------------------------
# Good files

def test_good_spectra_single_file():
    df = load_table(GOOD / "spectra.csv")
    assert list(df.columns) == ["sample", "1100", "1102", "1104", "1106", "1108", "moisture", "oil"]
    assert df.shape == (8, 8)
    assert list(df["sample"]) == [f"c{i}" for i in range(1, 9)]
    raw = pd.read_csv(GOOD / "spectra.csv")
    channels = ["1100", "1102", "1104", "1106", "1108"]
    np.testing.assert_array_equal(df[channels].to_numpy(), raw[channels].to_numpy())
    np.testing.assert_array_equal(require_numeric(df, ["moisture", "oil"], "spectra.csv").to_numpy(),
                                  raw[["moisture", "oil"]].to_numpy())


def test_good_wide_timeseries_is_sorted_by_time():
    ts = load_timeseries(GOOD / "timeseries_wide.csv")
    assert isinstance(ts, TimeSeriesData)
    assert ts.layout == "wide" and ts.time_column == "time" and ts.sites == ["A", "B", "C"]
    assert isinstance(ts.Y.index, pd.DatetimeIndex) and ts.Y.index.is_monotonic_increasing
    assert ts.Y.shape == (4, 3)
    np.testing.assert_array_equal(ts.Y["A"], [0.10, 0.20, 0.30, 0.35])


def test_good_long_timeseries_is_pivoted():
    ts = load_timeseries(GOOD / "timeseries_long.csv")
    assert ts.layout == "long" and ts.sites == ["north", "south"]
    assert ts.Y.shape == (4, 2)
    assert ts.Y.index[0] == pd.Timestamp("2024-05-01 00:00")
    np.testing.assert_allclose(ts.Y["north"], [1.0, 1.5, 2.0, 2.5])
    np.testing.assert_allclose(ts.Y["south"], [2.0, 2.6, 3.4, 4.4])
    wide = load_timeseries(GOOD / "timeseries_long.csv", layout="long", time_column="timestamp",
                           site_column="site", value_column="power")
    pd.testing.assert_frame_equal(wide.Y, ts.Y)


def test_long_timeseries_with_numeric_site_codes(tmp_path):
    p = tmp_path / "codes.csv"
    p.write_text("t,site,value\n" + "".join(f"{t},{s},{t * 10 + s}\n" for t in (2, 1, 3) for s in (101, 7)))
    ts = load_timeseries(p)
    assert ts.layout == "long" and ts.sites == ["101", "7"]
    assert list(ts.Y.index) == [1, 2, 3]
    np.testing.assert_array_equal(ts.Y["7"], [17, 27, 37])


def test_timeseries_without_time_column_keeps_file_order(tmp_path):
    p = tmp_path / "plain.csv"
    p.write_text("A,B\n1,5\n3,2\n2,4\n")
    ts = load_timeseries(p)
    assert isinstance(ts.Y.index, pd.RangeIndex) and ts.time_column is None
    np.testing.assert_array_equal(ts.Y["A"], [1, 3, 2])


@pytest.mark.parametrize("fname", ["timeseries_wide.csv", "timeseries_long.csv"])
def test_timeseries_from_a_loaded_table_equals_the_file_loader(fname):
    ts = load_timeseries(GOOD / fname)
    again = timeseries_from_frame(load_table(GOOD / fname), fname)
    pd.testing.assert_frame_equal(again.Y, ts.Y)
    assert (again.sites, again.layout, again.time_column, again.file) == (ts.sites, ts.layout, ts.time_column, fname)


def test_timeseries_from_a_loaded_table_names_rows_as_the_file_loader():
    for fname in ("duplicate_timestamp.csv", "long_duplicates.csv", "unparseable_time.csv"):
        with pytest.raises(DataError) as from_file:
            load_timeseries(BAD / fname)
        with pytest.raises(DataError) as from_frame:
            timeseries_from_frame(load_table(BAD / fname), fname)
        assert str(from_frame.value) == str(from_file.value)


def test_good_two_views_one_file_and_two_files(tmp_path):
    one = load_table(GOOD / "two_views.csv")
    raw = pd.read_csv(GOOD / "two_views.csv")
    np.testing.assert_array_equal(one[["y1", "y2"]].to_numpy(), raw[["y1", "y2"]].to_numpy())
    raw[["x1", "x2"]].to_csv(tmp_path / "x.csv", index=False)
    raw[["y1", "y2"]].to_csv(tmp_path / "y.tsv", index=False, sep="\t")
    w = load_two_view_files(tmp_path / "x.csv", tmp_path / "y.tsv")
    assert isinstance(w, TwoViewData) and w.X.shape == (10, 2) and w.Y.shape == (10, 2)
    pd.testing.assert_frame_equal(w.X, one[["x1", "x2"]])
    pd.testing.assert_frame_equal(w.Y, one[["y1", "y2"]])
    assert w.sources == ("x.csv", "y.tsv")
    raw[["y1"]].iloc[:9].to_csv(tmp_path / "y9.csv", index=False)
    with pytest.raises(DataError, match=r"x\.csv has 10 data rows but y9\.csv has 9"):
        load_two_view_files(tmp_path / "x.csv", tmp_path / "y9.csv")


def test_text_columns_are_kept_as_text():
    df = load_table(GOOD / "timeseries_long.csv")
    assert df.shape == (8, 3)
    assert not pd.api.types.is_numeric_dtype(df["site"])
    assert not pd.api.types.is_numeric_dtype(df["timestamp"])
    assert df["power"].dtype == np.float64


# ------------------------------------------------------------------------------------------
# Real data: corn (80 samples x 700 channels, 4 responses)

@pytest.mark.skipif(not CORN.is_dir(), reason="shared corn data not present")
def test_corn_pair_loads_exactly():
    X = load_table(CORN / "corn_m5spec.csv")
    Y = load_table(CORN / "corn_propvals.csv")
    assert X.shape == (80, 700)
    assert Y.shape == (80, 4)
    assert list(Y.columns) == ["Moisture", "Oil", "Protein", "Starch"]
    axis = X.columns.astype(float)
    assert axis[0] == 1100 and axis[-1] == 2498 and np.all(np.diff(axis) == 2)
    raw = np.loadtxt(CORN / "corn_m5spec.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(X.to_numpy(), raw)


# ------------------------------------------------------------------------------------------
# Uploads

GOOD_BYTES = b"id,a,b,c\ns1,1.0,2.0,3.5\ns2,2.0,1.0,4.5\ns3,3.0,0.5,1.5\ns4,4.0,3.0,2.5\n"


def test_upload_object_loads_like_a_path():
    up = Upload("mine.csv", GOOD_BYTES)
    df = load_table(up)
    assert df.shape == (4, 4)
    np.testing.assert_array_equal(df["c"], [3.5, 4.5, 1.5, 2.5])


def test_upload_with_bad_cell_names_file_column_and_row():
    bad = b"id,a,b\ns1,1.0,2.0\ns2,n/a,1.0\ns3,3.0,0.5\ns4,4.0,3.0\ns5,5.0,2.0\n"
    with pytest.raises(DataError) as info:
        load_table(Upload("broken.csv", bad))
    assert "broken.csv: column 'a', data row 2 (line 3): 'n/a' is not a number" in str(info.value)


def test_name_overrides_upload_name_for_format_and_messages():
    up = Upload("blob.bin", b"x;y\n1,5;2\n")
    with pytest.raises(DataError, match="'.bin' files are not supported"):
        load_table(up)
    df = load_table(Upload("blob.bin", b"x;y\n1,5;2\n"), name="mine.csv")
    np.testing.assert_array_equal(df.to_numpy(), [[1.5, 2.0]])
    with pytest.raises(DataError, match="renamed.csv: the file is empty"):
        load_table(Upload("a.csv", b""), name="renamed.csv")


def test_upload_over_the_limit_is_rejected_before_reading():
    up = Upload("huge.csv", b"a\n1\n", size=(MAX_UPLOAD_MB + 3) * 1024 * 1024)
    with pytest.raises(DataError) as info:
        load_table(up)
    msg = str(info.value)
    assert "huge.csv" in msg and "53.0 MB" in msg and f"limit is {MAX_UPLOAD_MB} MB" in msg
    assert up.reads == 0


def test_upload_without_name_is_rejected():
    with pytest.raises(DataError, match="no file name"):
        load_table(io.BytesIO(GOOD_BYTES))


# ------------------------------------------------------------------------------------------
# XLSX (generated, never committed)

def _workbook(path, sheets):
    path.write_bytes(workbook_bytes(sheets))
    return path


SPECTRA_ROWS = [["id", 1100, 1102, "oil"]] + [[f"s{i}", 0.1 * i + 0.01, 0.2 + 0.05 * i * i, 3.0 + i] for i in range(4)]


def test_xlsx_with_two_sheets_needs_a_sheet(tmp_path):
    p = _workbook(tmp_path / "two.xlsx", {"Spectra": SPECTRA_ROWS, "Notes": [["note"], ["hello"]]})
    with pytest.raises(DataError) as info:
        load_table(p)
    msg = str(info.value)
    assert "two.xlsx" in msg and "2 sheets" in msg and "'Spectra'" in msg and "'Notes'" in msg
    df = load_table(p, sheet="Spectra")
    assert list(df.columns) == ["id", "1100", "1102", "oil"]
    np.testing.assert_array_equal(df["oil"], [3, 4, 5, 6])
    assert list(load_table(p, sheet=1)["note"]) == ["hello"]
    with pytest.raises(DataError, match="no sheet 'Data'"):
        load_table(p, sheet="Data")


def test_xlsx_bad_cell_names_sheet_row(tmp_path):
    rows = [row[:] for row in SPECTRA_ROWS]
    rows[3][3] = "n/a"
    p = _workbook(tmp_path / "one.xlsx", {"Sheet1": rows})
    with pytest.raises(DataError) as info:
        load_table(Upload("one.xlsx", p.read_bytes()))
    assert "one.xlsx: column 'oil', data row 3 (sheet row 4): 'n/a' is not a number" in str(info.value)


# ------------------------------------------------------------------------------------------
# Large inputs (generated at run time)

def test_file_over_the_size_limit_is_rejected(tmp_path):
    p = tmp_path / "big.csv"
    with open(p, "wb") as f:
        f.truncate((MAX_UPLOAD_MB + 1) * 1024 * 1024)  # sparse: no disk, no write time
    with pytest.raises(DataError) as info:
        load_table(p)
    msg = str(info.value)
    assert "big.csv" in msg and "51.0 MB" in msg and f"limit is {MAX_UPLOAD_MB} MB" in msg


def test_million_columns_rejected_quickly(tmp_path):
    n = 1_000_000
    p = tmp_path / "wide.csv"
    p.write_text(",".join(f"c{i}" for i in range(n)) + "\n" + ",".join(["1"] * n) + "\n" + ",".join(["2"] * n) + "\n")
    assert p.stat().st_size < MAX_UPLOAD_MB * 1024 * 1024
    t0 = time.perf_counter()
    with pytest.raises(DataError) as info:
        load_table(p)
    assert time.perf_counter() - t0 < 5
    msg = str(info.value)
    assert "wide.csv" in msg and "1,000,000 columns" in msg and f"{MAX_COLUMNS:,}" in msg


def test_wide_but_allowed_table_loads(tmp_path):
    m = 20_000
    p = tmp_path / "wide_ok.csv"
    rng = np.random.default_rng(1)
    vals = rng.random((3, m)).round(4)
    p.write_text(",".join(str(900 + i) for i in range(m)) + ",y\n"
                 + "".join(",".join(map(str, r)) + f",{k}\n" for k, r in enumerate(vals)))
    df = load_table(p)
    assert df.shape == (3, m + 1) and df.columns[-2] == str(900 + m - 1)
    np.testing.assert_array_equal(df.iloc[:, :m].to_numpy(), vals)


# ------------------------------------------------------------------------------------------
# validate.py

def test_validate_helpers():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [5.0, 5.0, 5.0], "c": [1.0, 2.0, 3.0], "t": ["x", "y", "z"]})
    out = require_numeric(df, ["a", "c"], "f.csv")
    assert out.shape == (3, 2) and out.dtypes.eq(np.float64).all()
    with pytest.raises(DataError, match="column 't' holds text"):
        require_numeric(df, ["a", "t"], "f.csv")
    with pytest.raises(DataError, match="'zz' not found"):
        require_numeric(df, ["zz"], "f.csv")
    with pytest.raises(DataError, match=r"f\.csv: PLS needs at least 5 data rows; the file has 3"):
        check_min_rows(3, 5, "f.csv", "PLS")
    check_min_rows(5, 5, "f.csv", "PLS")
    with pytest.raises(DataError, match="'b'"):
        check_constant_columns(df[["a", "b"]], "f.csv")
    check_constant_columns(df[["a", "c"]], "f.csv")
    with pytest.raises(DataError, match="'a' and 'c'"):
        check_duplicate_columns(df, "f.csv")
    check_duplicate_columns(df[["a", "b"]], "f.csv")
    with pytest.raises(DataError, match="x.csv has 3 data rows but y.csv has 4"):
        check_matching_rows(3, 4, "x.csv", "y.csv")
    check_matching_rows(4, 4, "x.csv", "y.csv")


def test_check_finite_array_names_row_and_column():
    a = np.ones((4, 3))
    check_finite_array(a, "f.csv")
    a[2, 1] = np.inf
    a[3, 0] = np.nan
    with pytest.raises(DataError) as info:
        check_finite_array(a, "f.csv", "X", columns=["p", "q", "r"])
    assert (info.value.row, info.value.column) == (3, "q")
    assert "infinite" in str(info.value) and "column 'q', data row 3" in str(info.value)
    with pytest.raises(DataError, match="NaN .* column 1, data row 2"):
        check_finite_array(np.array([1.0, np.nan]), "g.csv")


def test_engine_data_has_no_pickle_and_no_streamlit():
    root = Path(__file__).resolve().parents[1] / "engine" / "data"
    for name in ("__init__.py", "io.py", "readers.py", "frames.py", "timeseries.py", "two_views.py", "validate.py"):
        src = (root / name).read_text()
        for banned in ("import pickle", "read_pickle", "allow_pickle", "import streamlit", "from streamlit"):
            assert banned not in src, (name, banned)
    init = (root / "__init__.py").read_text()
    assert ".samples" not in init and "import samples" not in init
