"""engine.data.open_dataset / resolve_under_root: lazy Parquet and CSV sets, checked chunk by chunk.

Oracles: the same files read whole with pandas/pyarrow (values, row counts); hostile sets with the bad cell's
file, row and column known by construction.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.data import DataError, dataset_shape, open_dataset, resolve_under_root
from engine.data.large import dataset_source, preview_rows
from engine.release.manifest import release_problems

COLS = [f"x{j}" for j in range(20)]


def write_parquet_set(folder, n_files=4, rows=50, row_group=20, seed=0, edit=None):
    """``n_files`` Parquet files of ``rows`` rows (x0..x19 and 'protein'); ``edit(f, df)`` may alter file f."""
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    frames = []
    for f in range(n_files):
        df = pd.DataFrame(rng.normal(size=(rows, len(COLS))), columns=COLS)
        df["protein"] = rng.uniform(7, 10.5, rows)
        if edit is not None:
            df = edit(f, df)
        frames.append(df)
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), os.path.join(folder, f"part{f}.parquet"),
                       row_group_size=row_group)
    return frames


def write_csv_set(folder, n_files=3, rows=30, seed=1):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    frames = []
    for f in range(n_files):
        df = pd.DataFrame(rng.normal(size=(rows, 5)), columns=list("abcde"))
        df.to_csv(os.path.join(folder, f"f{f}.csv"), index=False)
        frames.append(df)
    return frames


def test_parquet_folder_is_lazy_and_equals_pandas(tmp_path):
    frames = write_parquet_set(tmp_path / "runs")
    ddf = open_dataset(tmp_path / "runs")
    assert isinstance(ddf, dd.DataFrame)
    assert ddf.npartitions == 4 * 3  # one per row group (20 + 20 + 10 rows)
    whole = pd.concat(frames, ignore_index=True)
    got = ddf.compute().reset_index(drop=True)
    np.testing.assert_array_equal(got.to_numpy(), whole.to_numpy())
    shape = dataset_shape(ddf)
    assert (shape.rows, shape.columns) == whole.shape
    assert shape.files == tuple(f"part{f}.parquet" for f in range(4))
    # shape from footers alone, without the check pass
    assert (dataset_shape(str(tmp_path / "runs")).rows, dataset_shape(str(tmp_path / "runs")).columns) == whole.shape


def test_nan_in_file_3_row_17_column_x12(tmp_path):
    def edit(f, df):
        if f == 2:  # the third file
            df.loc[16, "x12"] = np.nan  # data row 17
            df.loc[18, "x3"] = np.nan  # a later one in the same row group: not the first problem
        return df

    write_parquet_set(tmp_path / "runs", edit=edit)
    with pytest.raises(DataError) as err:
        open_dataset(str(tmp_path / "runs" / "*.parquet"))
    e = err.value
    assert (e.file, e.row, e.column) == ("part2.parquet", 17, "x12")
    assert "part2.parquet: column 'x12', data row 17" in str(e) and "empty" in str(e)
    assert "(1 more cell in numeric columns of this row group has a problem too)" in str(e)


def test_inf_in_a_later_row_group_names_the_file_row(tmp_path):
    def edit(f, df):
        if f == 1:
            df.loc[44, "protein"] = np.inf  # data row 45: third row group
        return df

    write_parquet_set(tmp_path / "runs", edit=edit)
    with pytest.raises(DataError, match=r"part1.parquet: column 'protein', data row 45: 'inf' is infinite") as err:
        open_dataset(tmp_path / "runs")
    assert err.value.row == 45


def test_a_selection_reads_only_its_columns(tmp_path, monkeypatch):
    """``ddf[cols]`` of an opened data set decodes only those columns (Parquet and CSV), in the asked order, and a
    fit's X and y selections are read together once per partition."""
    import engine.data.large as large
    from engine.privacy.chunked import _dask_partitions

    frames = write_parquet_set(tmp_path / "runs", n_files=2)
    write_csv_set(tmp_path / "csv", n_files=2)
    asked = []
    real, real_parquet = large._read_raw, large._parquet_columns

    def spy(part, nrows=None, columns=None):
        asked.append(None if columns is None else list(columns))
        return real(part, nrows, columns)

    def spy_parquet(part, columns):
        asked.append(list(columns))
        return real_parquet(part, columns)

    monkeypatch.setattr(large, "_read_raw", spy)
    monkeypatch.setattr(large, "_parquet_columns", spy_parquet)
    ddf = open_dataset(tmp_path / "runs", validate=False)
    asked.clear()
    got = ddf[["x3", "protein", "x1"]].compute(scheduler="sync").reset_index(drop=True)
    whole = pd.concat(frames, ignore_index=True)
    np.testing.assert_array_equal(got.to_numpy(), whole[["x3", "protein", "x1"]].to_numpy())
    assert asked and all(a is not None and sorted(a) == ["protein", "x1", "x3"] for a in asked)
    csv = open_dataset(str(tmp_path / "csv" / "*.csv"), validate=False)
    asked.clear()
    np.testing.assert_allclose(csv[["c", "a"]].compute(scheduler="sync").to_numpy(),
                               pd.concat([pd.read_csv(tmp_path / "csv" / f"f{f}.csv") for f in range(2)])[["c", "a"]])
    assert asked and all(sorted(a) == ["a", "c"] for a in asked)
    parts, n_x = _dask_partitions(ddf[COLS[:5]], ddf["protein"])
    assert n_x == 5 and len(parts) == ddf.npartitions  # one read per partition, partitions kept as they are
    asked.clear()
    first = parts[0].compute(scheduler="sync")
    assert list(first.columns) == [*COLS[:5], "protein"] and len(asked) == 1


def test_csv_glob_text_cell_names_file_row_line(tmp_path):
    frames = write_csv_set(tmp_path / "csv")
    ddf = open_dataset(str(tmp_path / "csv" / "*.csv"))
    np.testing.assert_allclose(ddf.compute().to_numpy(), pd.concat(frames).to_numpy())
    assert dataset_shape(ddf).rows == 90
    df = frames[1].astype(object)
    df.iloc[9, 2] = "abc"
    df.to_csv(tmp_path / "csv" / "f1.csv", index=False)
    with pytest.raises(DataError) as err:
        open_dataset(str(tmp_path / "csv" / "*.csv"))
    assert str(err.value).startswith("f1.csv: column 'c', data row 10 (line 11): 'abc' is not a number")
    assert (err.value.file, err.value.row, err.value.column, err.value.line) == ("f1.csv", 10, "c", 11)


def test_csv_empty_cell_and_extra_field(tmp_path):
    write_csv_set(tmp_path / "csv", n_files=2)
    with open(tmp_path / "csv" / "f1.csv", "a") as fh:
        fh.write("1,2,,4,5\n")
    with pytest.raises(DataError, match=r"f1.csv: column 'c', data row 31 \(line 32\): the cell is empty"):
        open_dataset(str(tmp_path / "csv" / "*.csv"))
    with open(tmp_path / "csv" / "f0.csv", "a") as fh:
        fh.write("1,2,3,4,5,6\n")
    with pytest.raises(DataError, match=r"f0.csv: cannot be read"):
        open_dataset(str(tmp_path / "csv" / "*.csv"))


def test_ragged_files_and_empty_glob(tmp_path):
    def edit(f, df):
        return df.rename(columns={"x5": "x5b"}) if f == 3 else df

    write_parquet_set(tmp_path / "runs", edit=edit)
    with pytest.raises(DataError, match=r"part3.parquet: its columns differ from those of part0.parquet: it lacks "
                                        r"'x5' and adds 'x5b'") as err:
        open_dataset(tmp_path / "runs")
    assert err.value.column == "x5"
    with pytest.raises(DataError, match="no files match"):
        open_dataset(str(tmp_path / "nothing" / "*.parquet"))
    with pytest.raises(DataError, match="not found"):
        open_dataset(str(tmp_path / "missing_folder"))


def test_text_column_in_parquet_stays_text_numeric_checked(tmp_path):
    def edit(f, df):
        df["batch"] = [f"b{f}"] * len(df)
        return df

    write_parquet_set(tmp_path / "runs", n_files=2, edit=edit)
    ddf = open_dataset(tmp_path / "runs")
    assert not pd.api.types.is_numeric_dtype(ddf.dtypes["batch"])
    assert list(ddf.compute()["batch"].unique()) == ["b0", "b1"]


def test_dask_dataframe_checked_per_partition(tmp_path):
    df = pd.DataFrame(np.random.default_rng(3).normal(size=(40, 3)), columns=["a", "b", "c"])
    ok = dd.from_pandas(df, npartitions=4)
    assert open_dataset(ok) is ok and dataset_shape(ok).rows == 40
    df.loc[25, "b"] = np.nan  # partition 3 (rows 20..29), its 6th row
    with pytest.raises(DataError, match=r"partition 3: column 'b', data row 6"):
        open_dataset(dd.from_pandas(df, npartitions=4))


def test_preview_reads_first_rows_only(tmp_path):
    frames = write_parquet_set(tmp_path / "runs", n_files=2)
    head = preview_rows(str(tmp_path / "runs"), n=5)
    pd.testing.assert_frame_equal(head, frames[0].head(5))


# ----------------------------------------------------------------------------------------- the data root
@pytest.fixture()
def root_with_escape(tmp_path):
    root = tmp_path / "root"
    write_parquet_set(root / "runs", n_files=1)
    outside = tmp_path / "secret"
    write_parquet_set(outside, n_files=1)
    os.symlink(outside, root / "link_dir")
    os.symlink(outside / "part0.parquet", root / "runs" / "zz_link.parquet")
    return root


def test_resolve_under_root_refuses_escapes(root_with_escape):
    root = str(root_with_escape)
    assert resolve_under_root(root, "runs") == os.path.realpath(os.path.join(root, "runs"))
    for bad in ("..", "../secret", "runs/../../secret", os.path.realpath(root) + "/runs", "/etc", "link_dir",
                "link_dir/*.parquet", "../*/part0.parquet", "~/x"):
        with pytest.raises(DataError):
            resolve_under_root(root, bad)
    with pytest.raises(DataError, match="outside the data root"):
        dataset_source("runs", root)  # a symbolic link to a file outside, inside the folder
    with pytest.raises(DataError, match="outside the data root"):
        dataset_source("*/../../secret/*.parquet", root)
    os.remove(os.path.join(root, "runs", "zz_link.parquet"))
    assert [os.path.basename(f) for f in dataset_source("runs", root)] == ["part0.parquet"]
    assert dataset_shape(open_dataset("runs", root=root)).rows == 50


def test_a_climb_out_gets_one_refusal_whether_or_not_the_target_exists(tmp_path):
    """Review N4: a glob whose fixed part is inside the root climbing out with '..' was an existence oracle
    ("leads outside" for an existing file, "no files match" for a missing one)."""
    root = tmp_path / "root"
    (root / "sub" / "d1").mkdir(parents=True)
    (tmp_path / "outside.csv").write_text("a\n1\n")
    climbs = ["sub/d*/../../../outside.csv", "sub/d*/../../../missing.csv", "sub/d?/../../../outside.csv",
              "sub/[d]1/../../../outside.csv", "**/../../outside.csv", "**/../../missing.csv",
              "sub/d*/../../../../../../../../etc/passwd", "sub/d*/../../../../../../../../etc/shadow-nope"]
    answers = set()
    for pattern in climbs:
        with pytest.raises(DataError) as err:
            dataset_source(pattern, str(root))
        answers.add(str(err.value).replace(pattern, "<pattern>"))
    assert answers == {"<pattern>: this path leads outside the data root; only data under it can be opened."}
    # a link inside the root: refused the same way whether its target exists or not
    os.symlink(tmp_path / "outside.csv", root / "sub" / "to_file.csv")
    os.symlink(tmp_path / "missing.csv", root / "sub" / "to_nothing.csv")
    for pattern in ("sub/to_f*.csv", "sub/to_n*.csv"):
        with pytest.raises(DataError, match="leads outside the data root"):
            dataset_source(pattern, str(root))


def test_no_message_names_the_servers_data_root(tmp_path):
    root = tmp_path / "srv_data_root_xyz"
    (root / "empty").mkdir(parents=True)
    (root / "bad").mkdir()
    (root / "bad" / "broken.parquet").write_bytes(b"not a parquet file")
    (root / "csv").mkdir()
    (root / "csv" / "a.csv").write_text('x,y\n1,"2\n')
    for source in ("nope.csv", "nope/*.parquet", "empty", ".", "bad", "csv", "sub/../nope.csv"):
        with pytest.raises(DataError) as err:
            open_dataset(source, root=str(root))
        text = str(err.value)
        assert str(tmp_path) not in text and os.path.realpath(tmp_path) not in text, (source, text)
        assert "srv_data_root_xyz" not in text, (source, text)


# ----------------------------------------------------------------------------------- the app's picker (AppTest)
PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "edpls.py")


def _spectra_root(tmp_path):
    """A data root with a Parquet set of 40 channels named by wavelength + 'protein', and a link escaping it."""
    from engine.data.sample_generators import make_nir_spectra

    root = tmp_path / "root"
    (root / "runs").mkdir(parents=True)
    data = make_nir_spectra(n_samples=160, n_channels=40, random_state=5)
    df = pd.DataFrame(data.X, columns=[str(1100 + 2 * j) for j in range(40)])
    df["protein"] = data.Y[:, 0]
    for f in range(2):
        pq.write_table(pa.Table.from_pandas(df.iloc[f * 80:(f + 1) * 80], preserve_index=False),
                       root / "runs" / f"run{f}.parquet", row_group_size=40)
    secret = tmp_path / "secret"
    write_parquet_set(secret, n_files=1)
    os.symlink(secret, root / "elsewhere")
    return root, df


def _page():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def _path(at, text):
    at.text_input(key="edpls_data_large_path").set_value(text).run()
    assert not at.exception, at.exception
    return [e.value for e in at.error]


def test_picker_hidden_without_data_root(monkeypatch):
    from ui.large_data import LARGE

    monkeypatch.delenv("PRIVALAB_DATA_ROOT", raising=False)
    at = _page()
    assert LARGE not in at.radio(key="edpls_data_source").options


def test_picker_confined_to_root_previews_and_fits(monkeypatch, tmp_path):
    from ui.large_data import LARGE

    root, df = _spectra_root(tmp_path)
    monkeypatch.setenv("PRIVALAB_DATA_ROOT", str(root))
    at = _page()
    at.radio(key="edpls_data_source").set_value(LARGE).run()
    assert not at.exception, at.exception
    for bad in ("../secret", str(tmp_path / "secret"), "elsewhere", "elsewhere/*.parquet", "runs/../../secret"):
        errors = _path(at, bad)
        assert errors and ("outside the data root" in errors[0] or "not an absolute path" in errors[0]), (bad, errors)
        assert "pl_dataset" not in at.session_state or at.session_state["pl_dataset"].origin != "server"
    assert _path(at, "runs/*.parquet") == []
    text = " ".join(m.value for m in at.markdown)
    assert "160 rows × 41 columns, 2 files, 4 partitions" in text
    assert at.session_state["pl_dataset"].origin == "server"
    # the fit: the response (the only named column: the default) and its declared range, then the button
    assert at.selectbox(key="edpls_large_response_server_runs/*.parquet").value == "protein"
    assert "Not fitted yet with these settings." not in " ".join(c.value for c in at.caption)  # no range yet
    at.number_input(key="edpls_large_lo_runs/*.parquet_protein").set_value(5.0)
    at.number_input(key="edpls_large_hi_runs/*.parquet_protein").set_value(15.0).run()
    at.button(key="edpls_large_fit").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    (res,) = at.session_state[_RESULTS_KEY].values()
    fit = res["fit"]
    assert fit.shape.rows == 160 and fit.shape.partitions == 4
    release = json.loads(res["release"])
    assert release["kind"] == "shareable release" and release_problems(res["release"]) == []
    assert res["workbook"][:2] == b"PK"
    labels = [b.label for b in at.get("download_button")]
    assert "Shareable release (JSON)" in labels and "Owner's workbook (PRIVATE)" in labels
    # the fit is in the session's history and odometer once, also after a rerun (the same kept release)
    at.run()
    (run,) = [r for r in at.session_state["pl_runs"].values() if r["data set"] == "server: runs/*.parquet"]
    assert run["ledger"] is fit.estimator.privacy_ledger_
    assert next(m for m in at.metric if m.label == "Fits on this data set").value == "1"
    assert any(m.label == "Privacy spent on this data set" for m in at.metric)


_RESULTS_KEY = "edpls_large_results"


def test_a_stop_raised_from_progress_ends_the_pass(tmp_path):
    """The app's Cancel stops the script at its next progress update (Streamlit raises there, a BaseException):
    the check pass and the chunked fit let it through and stop, from the thread that reports progress."""
    from engine.cli.batch import TaskProgress, fit_dataset

    class Stop(BaseException):
        pass

    seen = []

    def report(done, total):
        seen.append((done, total))
        if done >= 2:
            raise Stop

    write_parquet_set(tmp_path / "runs", n_files=3)
    with pytest.raises(Stop), TaskProgress(report):
        open_dataset(tmp_path / "runs")
    assert seen[-1][0] == 2 and seen[-1][1] >= 9  # stopped at the second of 9+ tasks
    ddf = open_dataset(tmp_path / "runs")
    seen.clear()

    import contextlib

    @contextlib.contextmanager
    def progress(what, tasks=True):
        yield report

    with pytest.raises(Stop):
        fit_dataset("edpls", ddf, epsilon=1.0, delta=1e-5, progress=progress, response="protein",
                    y_range=(7.0, 10.5), x_bound=5.0, estimator="plain", n_components=2)
    assert seen[-1] == (2, 9)


def _two_columns_script(stop: bool, n_channels: int) -> None:
    """AppTest body: the one two-columns check, as the in-memory pages (stop) and the large-data fit (return)
    use it."""
    import types

    import streamlit as st

    from ui.column_choice import enough_x_columns, page_problem_or_stop

    ds = types.SimpleNamespace(name="runs/*.parquet", df=None, response_columns=())
    channels = [f"x{j}" for j in range(n_channels)]
    if stop:
        page_problem_or_stop(ds, "protein", "random", channels)
    elif not enough_x_columns(ds, "protein", channels):
        st.write("returned")
        return
    st.write("went on")


@pytest.mark.parametrize("stop", [True, False])
def test_fewer_than_two_x_columns_one_message_stop_or_return(stop):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_two_columns_script, args=(stop, 1), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["runs/*.parquet: with 'protein' as the response, fewer than two X "
                                           "columns are chosen."]
    assert [m.value for m in at.markdown] == ([] if stop else ["returned"])  # stop: nothing after the error
    if not stop:
        at = AppTest.from_function(_two_columns_script, args=(False, 2), default_timeout=60)
        at.run()
        assert not at.error and [m.value for m in at.markdown] == ["went on"]


def _strict():
    from engine.methods.edpls import EDPLS

    return EDPLS(n_components=2, mode="strict", x_bound=6.0, y_bound=11.0, epsilon=1.0, delta=1e-6, random_state=3)


def _strict_fit(ddf, x_cols):
    return _strict().fit(ddf[x_cols], ddf["protein"], scheduler="sync")


def _without_direct_reads(monkeypatch):
    """The strict sums as before the direct path: every partition through Dask's pandas frame."""
    import engine.data.large as large

    monkeypatch.setattr(large, "parquet_parts", lambda name: None)


def test_strict_sums_read_an_opened_parquet_set_straight_and_equal_the_frame_path(tmp_path, monkeypatch):
    """The strict sums read each partition of an opened Parquet set as Arrow decoded it: one read per partition,
    only the fit's columns, and the same release, bit for bit, as through Dask's pandas frames (same noise seed;
    the same numbers reach the same kernel in the same order). A frame derived from the set (filtered) takes the
    frame path. Oracle for the values: the in-memory fit of the same rows."""
    import engine.data.large as large

    frames = write_parquet_set(tmp_path / "runs", n_files=3, rows=60, row_group=25)
    whole = pd.concat(frames, ignore_index=True)
    ddf = open_dataset(tmp_path / "runs", validate=False)
    read, real = [], large.float64_columns

    def spy(part, columns):
        read.append(list(columns))
        return real(part, columns)

    monkeypatch.setattr(large, "float64_columns", spy)
    direct = _strict_fit(ddf, COLS[:6])
    assert len(read) == ddf.npartitions and all(c == [*COLS[:6], "protein"] for c in read)
    memory = _strict().fit(whole[COLS[:6]].to_numpy(), whole["protein"].to_numpy())
    np.testing.assert_allclose(direct.coef_, memory.coef_, rtol=1e-9, atol=1e-12)
    read.clear()
    sub = ddf[[*COLS[:6], "protein"]]  # the command line's and the app's way (engine.cli.batch)
    assert np.array_equal(_strict().fit(sub[COLS[:6]], sub["protein"], scheduler="sync").coef_, direct.coef_)
    assert len(read) == ddf.npartitions
    read.clear()
    filtered = _strict_fit(ddf[ddf["x0"] > -10.0], COLS[:6])  # every row kept, but not the opened frame
    assert read == [] and np.array_equal(filtered.coef_, direct.coef_)
    _without_direct_reads(monkeypatch)
    framed = _strict_fit(open_dataset(tmp_path / "runs", validate=False), COLS[:6])
    assert read == [] and np.array_equal(framed.coef_, direct.coef_)


def test_a_nan_an_integer_column_and_a_null_take_the_checked_path_with_its_messages(tmp_path, monkeypatch):
    """Whatever the direct read cannot take (a NaN: the sums come out non-finite; an int64 column; a null) goes
    through the partition's frame: the same fit, or the same error naming the partition, data row and column, as
    with every partition through Dask's frames (the oracle: that path, switched on alone)."""
    def nan_cell(f, df):
        if f == 1:
            df.loc[33, "x2"] = np.nan  # file 2, second row group (0-based rows 25-49): its data row 9
        return df

    def int_column(f, df):
        df["x1"] = np.arange(len(df), dtype=np.int64) % 5
        return df

    write_parquet_set(tmp_path / "nan", n_files=2, rows=60, row_group=25, edit=nan_cell)
    write_parquet_set(tmp_path / "int", n_files=2, rows=60, row_group=25, edit=int_column)
    table = pq.read_table(tmp_path / "int" / "part0.parquet")
    column = pa.array([None, *np.arange(1.0, 60.0)], type=pa.float64())
    pq.write_table(table.set_column(table.schema.get_field_index("x3"), "x3", column),
                   tmp_path / "int" / "part0.parquet", row_group_size=25)  # a null in file 1, data row 1

    def outcomes():
        out = []
        for folder, cols in (("nan", COLS[:4]), ("int", COLS[:2]), ("int", ["x3", "x4"])):
            try:
                out.append(_strict_fit(open_dataset(tmp_path / folder, validate=False), cols).coef_)
            except DataError as err:
                out.append(str(err))
        return out

    direct = outcomes()
    assert "partition 5" in direct[0] and "data row 9" in direct[0] and "x2" in direct[0], direct[0]
    assert isinstance(direct[1], np.ndarray) and "partition 1" in direct[2] and "x3" in direct[2], direct[2]
    _without_direct_reads(monkeypatch)
    framed = outcomes()
    assert direct[0] == framed[0] and direct[2] == framed[2]
    assert np.array_equal(direct[1], framed[1])
