"""Column proposals for a lab export (engine.data.columns), missing values on request (load_table missing="keep",
drop_missing_rows) and X and Y as two files (engine.data.xy_files): hand-built frames and the real corn files
(read from ../shared/data/corn/ when present, never copied)."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.data import DataError, load_table
from engine.data.columns import (
    drop_missing_rows,
    id_columns,
    is_id_like,
    missing_rows,
    parses_as_number,
    response_candidates,
    wavelength_order,
    x_columns,
)
from engine.data.xy_files import join_xy, load_xy_files, shared_columns
from engine.methods.edpls.pipeline import page_problem

ROOT = Path(__file__).resolve().parents[1]
CORN = ROOT.parent / "shared" / "data" / "corn"
PROPS = ["moisture", "oil", "protein", "starch"]


def lab_export(n: int = 12, m: int = 6, seed: int = 0) -> pd.DataFrame:
    """sample_id first, wavelengths 1100, 1102, ..., then the four properties last."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, m)), columns=[str(1100 + 2 * j) for j in range(m)])
    df.insert(0, "sample_id", np.arange(1, n + 1, dtype=float))
    for p in PROPS:
        df[p] = rng.normal(10, 1, size=n)
    return df


# ------------------------------------------------------------------------------------------------ names
@pytest.mark.parametrize("name, expected", [("1100", True), ("428.5", True), (" 1.1e3 ", True), ("-3", True),
                                            ("oil", False), ("nan", False), ("inf", False), ("1100nm", False),
                                            ("", False)])
def test_parses_as_number(name, expected):
    assert parses_as_number(name) is expected


def test_id_columns_are_monotone_whole_numbers_named_like_an_id():
    df = lab_export()
    assert id_columns(df) == ["sample_id"]
    df["index"] = np.arange(12, 0, -1, dtype=float)  # decreasing counts too
    df["batch_no"] = [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0, 5.0, 5.0, 6.0, 6.0]  # repeats: not a row index
    df["id_score"] = np.linspace(0.5, 6.0, 12)  # not whole numbers
    df["count"] = np.arange(12, dtype=float)  # monotone whole numbers, but not named like an id
    assert id_columns(df) == ["sample_id", "index"]
    assert not is_id_like(df, "oil")


def test_lab_export_response_is_a_property_and_x_the_wavelengths():
    df = lab_export()
    assert response_candidates(df) == PROPS  # never "1100", never the id
    X = x_columns(df, "protein", ["moisture", "oil", "starch"])
    assert X == [str(1100 + 2 * j) for j in range(6)]
    # without the other responses named, the wavelengths are still X (>= 2 columns named by numbers)
    assert x_columns(df, "protein") == X
    # a declared response of a sample set comes first
    assert response_candidates(df, ("starch",))[0] == "starch"
    assert response_candidates(df, ("starch", "absent"))[:2] == ["starch", "moisture"]


def test_without_wavelengths_x_is_the_other_numeric_columns():
    df = pd.DataFrame({"id": [1.0, 2.0, 3.0, 4.0], "temp": [1.0, 2.0, 0.5, 3.0], "flow": [2.0, 1.0, 3.0, 0.0],
                       "site": list("abcd"), "yield": [5.0, 6.0, 4.0, 7.0], "purity": [1.0, 0.9, 0.8, 0.7]})
    assert response_candidates(df) == ["temp", "flow", "yield", "purity"]
    assert x_columns(df, "yield", ["purity"]) == ["temp", "flow"]
    assert x_columns(df, "yield", ["purity"], keep_ids=True) == ["id", "temp", "flow"]
    # one column named by a number is not a spectrum: it stays an ordinary X column
    df["1100"] = [0.1, 0.2, 0.3, 0.5]
    assert x_columns(df, "yield", ["purity"]) == ["temp", "flow", "1100"]



def test_named_process_variables_all_candidates_x_is_every_other_column():
    """A process table (every column a named candidate response, as the pages pass them): leaving the other
    candidates out would leave no X, so X is every other numeric column but the id (the large-data picker's
    x00..x27, resp, v0..v2 table fitted on resp once showed "fewer than two X columns")."""
    df = pd.DataFrame({"id": [1.0, 2.0, 3.0, 4.0], "temp": [1.0, 2.0, 0.5, 3.0], "flow": [2.0, 1.0, 3.0, 0.0],
                       "yield": [5.0, 6.0, 4.0, 7.0], "purity": [1.0, 0.9, 0.8, 0.7]})
    others = [c for c in response_candidates(df) if c != "yield"]
    assert x_columns(df, "yield", others) == ["temp", "flow", "purity"]
    assert x_columns(df, "yield", others, keep_ids=True) == ["id", "temp", "flow", "purity"]
    # with two columns left after the other candidates, those stay the default (the lab-export rule)
    assert x_columns(df, "yield", ["purity"]) == ["temp", "flow"]

def test_spectra_alone_have_no_candidate_response():
    df = pd.DataFrame(np.eye(4) + 1, columns=["1100", "1102", "1104", "1106"])
    assert response_candidates(df) == []
    assert wavelength_order(["1104", "oil", "1100", "998.5"]) == ["998.5", "1100", "1104"]


# ---------------------------------------------------------------------------------------- missing values
LAB_CSV = ("sample_id,1100,1102,1104,oil\n1,0.1,0.2,0.3,3.1\n2,0.2,,0.1,3.3\n3,0.3,0.1,0.2,n/a\n"
           "4,0.4,0.3,0.3,3.0\n5,0.2,0.2,0.5,2.9\n").encode()


def test_missing_cells_are_refused_by_default_and_kept_on_request():
    with pytest.raises(DataError) as err:
        load_table(io.BytesIO(LAB_CSV), name="lab.csv")
    assert err.value.column == "1102" and err.value.row == 2 and "lab.csv" in str(err.value)
    df = load_table(io.BytesIO(LAB_CSV), name="lab.csv", missing="keep")
    assert df.shape == (5, 5) and int(df.isna().sum().sum()) == 2
    assert np.isnan(df.loc[1, "1102"]) and np.isnan(df.loc[2, "oil"])
    assert df.loc[3, "1102"] == 0.3


@pytest.mark.parametrize("bad, word", [("abc", "'abc' is not a number"), ("inf", "infinite"),
                                       ("\"1,5\"", "decimal commas")])
def test_keep_still_refuses_text_and_infinite_cells(bad, word):
    data = f"a,b\n1,2\n{bad},3\n4,5\n6,7\n".encode()
    with pytest.raises(DataError, match=word):
        load_table(io.BytesIO(data), name="x.csv", missing="keep")
    with pytest.raises(ValueError, match="missing"):
        load_table(io.BytesIO(data), name="x.csv", missing="drop")


def test_drop_missing_rows_counts_and_names_rows():
    df = load_table(io.BytesIO(LAB_CSV), name="lab.csv", missing="keep")
    clean, gone = drop_missing_rows(df)
    assert gone.count == 2 and gone.rows == (2, 3) and gone.columns == ("1102", "oil")
    pd.testing.assert_frame_equal(clean, df.iloc[[0, 3, 4]].reset_index(drop=True))
    assert "2 data rows (2, 3)" in gone.describe()
    # only the chosen columns count: 'oil' left out keeps row 3
    clean2, gone2 = drop_missing_rows(df, ["1100", "1102", "1104"])
    assert gone2.rows == (2,) and len(clean2) == 4
    assert missing_rows(clean).count == 0
    with pytest.raises(DataError, match="leaves 3 rows"):
        drop_missing_rows(df, file="lab.csv", min_rows=4)
    same, none = drop_missing_rows(clean)
    assert same is clean and none.count == 0


# ---------------------------------------------------------------------------------------- two files
def _xy(n=6):
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=["1100", "1102", "1104", "1106"])
    Y = pd.DataFrame({"oil": rng.normal(size=n), "protein": rng.normal(size=n)})
    return X, Y


def test_join_by_row_order_and_mismatched_lengths():
    X, Y = _xy()
    df = join_xy(X, Y, "spectra.csv", "refs.csv")
    assert list(df.columns) == [*X.columns, *Y.columns] and len(df) == 6
    with pytest.raises(DataError) as err:
        join_xy(X, Y.iloc[:5], "spectra.csv", "refs.csv")
    assert "spectra.csv" in str(err.value) and "refs.csv" in str(err.value)


def test_join_by_shared_id_matches_a_shuffled_reference_file():
    X, Y = _xy()
    X.insert(0, "sample", [f"s{i}" for i in range(6)])
    Y.insert(0, "sample", [f"s{i}" for i in range(6)])
    shuffled = Y.iloc[[3, 0, 5, 1, 4, 2]].reset_index(drop=True)
    assert shared_columns(X, shuffled) == ["sample"]
    df = join_xy(X, shuffled, "spectra.csv", "refs.csv", on="sample")
    oracle = X.merge(shuffled, on="sample", how="inner", validate="one_to_one")  # pandas' own join
    pd.testing.assert_frame_equal(df, oracle)
    # numeric ids written 7 in one file and 7.0 in the other still match
    Xn, Yn = X.assign(sample=np.arange(6)), shuffled.assign(sample=[3.0, 0.0, 5.0, 1.0, 4.0, 2.0])
    assert np.allclose(join_xy(Xn, Yn, "a.csv", "b.csv", on="sample")["oil"], Y["oil"])


@pytest.mark.parametrize("change, words", [
    (lambda X, Y: (X, Y.assign(sample=["s0", "s1", "s2", "s3", "s4", "zz"])), ["'s5'", "'zz'", "not in"]),
    (lambda X, Y: (X.assign(sample=["s0", "s0", "s2", "s3", "s4", "s5"]), Y), ["appears twice", "data rows 1 and 2"]),
    (lambda X, Y: (X.assign(oil=1.0), Y), ["both have column 'oil'"]),
])
def test_join_by_id_refusals_name_both_files(change, words):
    X, Y = _xy()
    X.insert(0, "sample", [f"s{i}" for i in range(6)])
    Y.insert(0, "sample", [f"s{i}" for i in range(6)])
    X, Y = change(X, Y)
    with pytest.raises(DataError) as err:
        join_xy(X, Y, "spectra.csv", "refs.csv", on="sample")
    msg = str(err.value)
    assert "spectra.csv" in msg or "refs.csv" in msg
    for w in words:
        assert w in msg, msg
    if "not in" in words:
        assert "spectra.csv" in msg and "refs.csv" in msg


# ---------------------------------------------------------------------------------------------- corn
@pytest.fixture(scope="module")
def corn():
    if not (CORN / "corn_m5spec.csv").exists():
        pytest.skip("../shared/data/corn/ is absent")
    return CORN


def test_corn_two_files_give_a_lab_export_with_the_right_defaults(corn):
    df, responses = load_xy_files(corn / "corn_m5spec.csv", corn / "corn_propvals.csv")
    assert df.shape == (80, 704) and responses == ("Moisture", "Oil", "Protein", "Starch")
    assert response_candidates(df) == list(responses)
    X_cols = x_columns(df, "Protein", [r for r in responses if r != "Protein"])
    assert len(X_cols) == 700 and X_cols[0] == "1100" and X_cols[-1] == "2498"
    prob = page_problem(df, "Protein", responses, x_columns=X_cols)
    # oracle: pandas' own CSV reader on the untouched files, correctly rounded (pandas < 3's default parser is
    # 1 ulp off on 374 of these 56,000 cells; the engine reads them exactly)
    exact = dict(float_precision="round_trip")
    np.testing.assert_array_equal(prob.X, pd.read_csv(corn / "corn_m5spec.csv", **exact).to_numpy(dtype=float))
    np.testing.assert_array_equal(prob.y, pd.read_csv(corn / "corn_propvals.csv", **exact)["Protein"].to_numpy())


def test_corn_as_one_lab_export_with_an_id_and_missing_cells(corn, tmp_path):
    spectra = pd.read_csv(corn / "corn_m5spec.csv")
    props = pd.read_csv(corn / "corn_propvals.csv")
    lab = pd.concat([pd.DataFrame({"sample_id": np.arange(1, 81)}), spectra, props], axis=1)
    text = lab.to_csv(index=False).splitlines()
    cells = [line.split(",") for line in text]
    cells[5][10] = ""  # data row 5, column 11 (wavelength 1118)
    cells[40][-2] = "NA"  # data row 40, Protein
    path = tmp_path / "corn_lab.csv"  # a temporary file built in the test, never kept
    path.write_text("\n".join(",".join(r) for r in cells) + "\n")
    with pytest.raises(DataError) as err:
        load_table(path)
    assert err.value.row == 5 and err.value.column == "1118"
    df = load_table(path, missing="keep")
    assert id_columns(df) == ["sample_id"]
    assert response_candidates(df) == ["Moisture", "Oil", "Protein", "Starch"]
    X_cols = x_columns(df, "Moisture", ["Oil", "Protein", "Starch"])
    assert len(X_cols) == 700 and "sample_id" not in X_cols
    clean, gone = drop_missing_rows(df)
    assert gone.rows == (5, 40) and len(clean) == 78
    # only the columns used: Protein left out keeps data row 40
    assert drop_missing_rows(df, ["Moisture", *X_cols])[1].rows == (5,)
