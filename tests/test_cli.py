"""``python -m engine``: the batch command line (engine/cli/commands.py) end to end on tiny Parquet sets.

Oracles: the same estimator fitted in memory with the same known noise seed (the release's coefficients must be
equal), ``engine.release.manifest.release_problems`` and the release's own manifest (shareable fields only), the
registry (every method listed by --help).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from openpyxl import load_workbook

from engine.cli.commands import main
from engine.data.sample_generators import make_nir_spectra
from engine.methods.registry import METHODS
from engine.release.manifest import release_problems
from engine.release.workbook import PRIVATE_NOTICE

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
ENV.pop(  # a cluster address in the environment must not reach these local runs
    "DASK_SCHEDULER_ADDRESS", None)


def _run(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True, text=True, env=ENV,
                          timeout=timeout, cwd=ROOT)


@pytest.fixture(scope="module")
def spectra_set(tmp_path_factory):
    """3 Parquet files of NIR spectra (40 channels 'c0'..'c39') and 'protein', 2 row groups each."""
    folder = tmp_path_factory.mktemp("runs")
    data = make_nir_spectra(n_samples=240, n_channels=40, random_state=2)
    cols = [f"c{j}" for j in range(data.X.shape[1])]
    df = pd.DataFrame(data.X, columns=cols)
    df["protein"] = data.Y[:, 0]
    for f in range(3):
        pq.write_table(pa.Table.from_pandas(df.iloc[f * 80:(f + 1) * 80], preserve_index=False),
                       folder / f"run{f}.parquet", row_group_size=40)
    return folder, df, cols


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_help_lists_every_method():
    res = _run("--help")
    assert res.returncode == 0, res.stderr
    for spec in METHODS:
        assert spec.key in res.stdout and spec.title in res.stdout
    assert "python -m engine fit edpls" in res.stdout
    sub = _run("fit", "--help")
    assert sub.returncode == 0 and all(m in sub.stdout for m in ("edpls", "dp-pcr", "dp-cca", "pca-gauss"))


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_edpls_end_to_end_release_and_workbook(spectra_set, tmp_path):
    folder, df, cols = spectra_set
    out = tmp_path / "release.json"
    res = _run("fit", "edpls", "--data", str(folder / "*.parquet"), "--response", "protein", "--epsilon", "1",
               "--delta", "1e-5", "--y-range", "7", "14", "--x-bound", "data-free", "--seed", "3", "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert "100% Completed" in res.stderr  # the progress bar, on stderr
    kv = dict(line.split("=", 1) for line in res.stdout.split())
    book = Path(kv["workbook"])
    assert book == tmp_path / "release.owner_PRIVATE.xlsx" and book.exists() and out.exists()
    text = out.read_text()
    release = json.loads(text)
    assert release["kind"] == "shareable release" and release_problems(text) == []
    fields = {m["field"] for m in release["manifest"]}
    assert {"coef_", "intercept_", "y_range", "x_bound", "epsilon", "delta"} <= fields
    assert not fields & {"n_rows", "rows", "random_state", "seed", "n_hat"}
    assert "240" not in json.dumps(release["fields"].get("n_features_in_", ""))  # the row count is nowhere
    # the same estimator, in memory, same seed: the same coefficients
    from engine.methods.edpls.recommended import make_strict_edpls
    from engine.methods.edpls.recommended_release import estimator_from_release

    # the Dask fit uses the declared range as is (no private refinement: w-utility's test_dask_recommended)
    ref = make_strict_edpls(1.0, 1e-5, y_range=(7, 14), random_state=3, refine_y_range=False).fit(
        df[cols].to_numpy(), df["protein"].to_numpy())
    got = estimator_from_release(text)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-9, atol=1e-12)
    assert got.intercept_ == pytest.approx(ref.intercept_, rel=1e-9)
    wb = load_workbook(book, read_only=True)
    first = wb[wb.sheetnames[0]]
    cells = [str(c.value) for row in first.iter_rows() for c in row if c.value is not None]
    assert PRIVATE_NOTICE.upper() in cells
    data_cells = [c.value for row in wb["data"].iter_rows() for c in row]
    assert 240 in data_cells  # the exact row count lives in the owner's workbook only
    wb.close()


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_missing_bound_exit_2_and_nothing_written(spectra_set, tmp_path):
    folder, _, _ = spectra_set
    out = tmp_path / "r.json"
    res = _run("fit", "edpls", "--data", str(folder), "--response", "protein", "--epsilon", "1", "--delta", "1e-5",
               "--out", str(out))
    assert res.returncode == 2
    assert "--y-range" in res.stderr and "never read off" in res.stderr
    assert not out.exists() and not (tmp_path / "r.owner_PRIVATE.xlsx").exists()
    with pytest.raises(SystemExit) as ex:
        main(["fit", "dp-pcr", "--data", str(folder), "--response", "protein", "--epsilon", "1", "--delta", "1e-5",
              "--y-range", "7", "14", "--out", str(out)])
    assert ex.value.code == 2
    with pytest.raises(SystemExit) as ex:
        main(["fit", "edpls", "--data", str(folder), "--response", "protein", "--epsilon", "1", "--delta", "1e-5",
              "--y-range", "14", "7", "--x-bound", "3", "--out", str(out)])
    assert ex.value.code == 2


def test_bad_data_exit_1_names_file_row_column(tmp_path, capsys):
    folder = tmp_path / "bad"
    folder.mkdir()
    for f in range(2):
        df = pd.DataFrame(np.random.default_rng(f).normal(size=(30, 4)), columns=["a", "b", "c", "y"])
        if f == 1:
            df.loc[6, "b"] = np.nan
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), folder / f"p{f}.parquet")
    code = main(["fit", "dp-pcr", "--data", str(folder), "--response", "y", "--epsilon", "1", "--delta", "1e-5",
                 "--y-range", "-5", "5", "--x-bound", "3", "--out", str(tmp_path / "r.json"), "--quiet"])
    assert code == 1
    assert "p1.parquet: column 'b', data row 7" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_other_methods_in_process(spectra_set, tmp_path, capsys):
    folder, df, cols = spectra_set
    common = ["--data", str(folder), "--epsilon", "1", "--delta", "1e-5", "--seed", "1", "--quiet"]
    runs = {
        "dp-pcr": ["--response", "protein", "--y-range", "7", "14", "--x-bound", "20"],
        "dp-cca": ["--x-columns", "c0,c5,c10", "--y-columns", "c20,c25", "--x-bound", "3", "--y-bound", "3"],
        "pca-gauss": ["--x-columns", "c0,c5,c10,c15", "--x-range", "-1", "2"],
    }
    for method, extra in runs.items():
        out = tmp_path / f"{method}.json"
        assert main(["fit", method, *common, *extra, "--out", str(out)]) == 0, capsys.readouterr().err
        text = out.read_text()
        assert json.loads(text)["kind"] == "shareable release" and release_problems(text) == []
        assert (tmp_path / f"{method}.owner_PRIVATE.xlsx").exists()
    from engine.methods.dp_pcr import DPPCR

    ref = DPPCR(n_components=2, epsilon=1.0, delta=1e-5, x_bound=20.0, y_bound=14.0, random_state=1).fit(
        df[cols].to_numpy(), df["protein"].to_numpy())
    got = json.loads((tmp_path / "dp-pcr.json").read_text())["fields"]["coef_"]
    np.testing.assert_allclose(np.asarray(got, dtype=float), ref.coef_, rtol=1e-9, atol=1e-12)


def test_edpls_plain_is_fitted_chunk_by_chunk_and_equals_numpy(spectra_set, tmp_path, capsys):
    """The default edPLS estimator (plain strict) goes through the chunked path: same seed, same release as the
    in-memory EDPLS on the concatenated rows."""
    folder, df, cols = spectra_set
    out = tmp_path / "plain.json"
    code = main(["fit", "edpls", "--data", str(folder), "--response", "protein", "--epsilon", "2", "--delta", "1e-5",
                 "--y-range", "7", "14", "--x-bound", "6.5", "--n-components", "3", "--seed", "4", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "6/6 partitions" in err  # the chunked fit's own bar
    from engine.methods.edpls import EDPLS

    ref = EDPLS(n_components=3, epsilon=2.0, delta=1e-5, mode="strict", x_bound=6.5, y_bound=14.0,
                random_state=4).fit(df[cols].to_numpy(), df["protein"].to_numpy())
    fields = json.loads(out.read_text())["fields"]
    np.testing.assert_allclose(np.asarray(fields["coef_"], dtype=float).ravel(), np.ravel(ref.coef_), rtol=1e-9,
                               atol=1e-12)
    with pytest.raises(SystemExit) as ex:  # the plain estimator needs a number
        main(["fit", "edpls", "--data", str(folder), "--response", "protein", "--epsilon", "1", "--delta", "1e-5",
              "--y-range", "7", "14", "--estimator", "plain", "--x-public", "p.csv", "--out", str(out)])
    assert ex.value.code == 2


def test_scheduler_address_runs_on_a_distributed_cluster(spectra_set, tmp_path, capsys):
    """--scheduler tcp://...: the check pass and the chunked fit run on a dask.distributed cluster (here an
    in-process one on 127.0.0.1, always closed); same seed, same release as the local run."""
    from distributed import LocalCluster

    folder, _, _ = spectra_set
    args = ["fit", "dp-pcr", "--data", str(folder), "--response", "protein", "--epsilon", "1", "--delta", "1e-5",
            "--y-range", "7", "14", "--x-bound", "20", "--seed", "2"]
    assert main([*args, "--out", str(tmp_path / "local.json"), "--quiet"]) == 0
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp", host="127.0.0.1",
                           dashboard_address=None)
    try:
        code = main([*args, "--scheduler", cluster.scheduler_address, "--out", str(tmp_path / "remote.json")])
    finally:
        cluster.close(timeout=20)
    err = capsys.readouterr().err
    assert code == 0, err
    assert "6/6 partitions" in err
    local = json.loads((tmp_path / "local.json").read_text())["fields"]["coef_"]
    remote = json.loads((tmp_path / "remote.json").read_text())["fields"]["coef_"]
    np.testing.assert_allclose(np.asarray(remote, dtype=float), np.asarray(local, dtype=float), rtol=1e-9)
    with pytest.raises(SystemExit) as ex:  # neither a local scheduler's name nor an address
        main([*args, "--scheduler", "nonsense", "--out", str(tmp_path / "x.json")])
    assert ex.value.code == 2


def test_csv_glob_gives_the_parquet_release(spectra_set, tmp_path, capsys):
    """The same rows as CSV files (a glob) and as Parquet: the same release for the same seed."""
    folder, df, cols = spectra_set
    csv_dir = tmp_path / "csv"
    csv_dir.mkdir()
    for f in range(3):
        df.iloc[f * 80:(f + 1) * 80].to_csv(csv_dir / f"run{f}.csv", index=False, float_format="%.17g")
    args = ["fit", "dp-pcr", "--response", "protein", "--epsilon", "1", "--delta", "1e-5", "--y-range", "7", "14",
            "--x-bound", "20", "--seed", "9", "--quiet"]
    assert main([*args, "--data", str(folder), "--out", str(tmp_path / "pq.json")]) == 0
    assert main([*args, "--data", str(csv_dir / "*.csv"), "--out", str(tmp_path / "csv.json")]) == 0, \
        capsys.readouterr().err
    a = json.loads((tmp_path / "pq.json").read_text())["fields"]["coef_"]
    b = json.loads((tmp_path / "csv.json").read_text())["fields"]["coef_"]
    np.testing.assert_allclose(np.asarray(b, dtype=float), np.asarray(a, dtype=float), rtol=1e-9)


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_fit_then_predict_round_trip(spectra_set, tmp_path):
    """`fit edpls` writes a release naming its channels and response; `predict` applies it to the spectra (columns
    shuffled, the response column left in: ignored) and writes what the rebuilt estimator predicts."""
    from engine.methods.edpls.recommended_release import estimator_from_release

    folder, df, cols = spectra_set
    out = tmp_path / "release.json"
    res = _run("fit", "edpls", "--data", str(folder / "*.parquet"), "--response", "protein", "--epsilon", "1",
               "--delta", "1e-5", "--y-range", "7", "14", "--x-bound", "data-free", "--quiet", "--out", str(out))
    assert res.returncode == 0, res.stderr
    fields = json.loads(out.read_text())["fields"]
    assert fields["channels"] == cols and fields["response"] == "protein"
    new = df.sample(frac=1.0, axis=1, random_state=0).head(30)
    new.to_csv(tmp_path / "new.csv", index=False)
    res = _run("predict", "--model", str(out), "--data", str(tmp_path / "new.csv"), "--out", str(tmp_path / "p.csv"))
    assert res.returncode == 0, res.stderr
    assert "protein" in res.stderr  # the note naming the ignored column
    got = pd.read_csv(tmp_path / "p.csv").iloc[:, 0].to_numpy()
    expected = estimator_from_release(out.read_text()).predict(new[cols].to_numpy())
    np.testing.assert_allclose(got, expected, rtol=1e-15, atol=1e-12)
