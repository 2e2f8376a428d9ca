"""PCA-Gauss strict on Dask collections equals the in-memory fit for the same noise draw (every W source, every
task), refuses what would read a public value off the private rows, names bad cells, and runs from the CLI."""
from __future__ import annotations

import math

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from engine.data.validate import DataError
from engine.methods.pca_gauss import PCAGauss
from engine.threads import one_blas_thread

COLS = [f"f{j}" for j in range(5)]


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1200, 5)) @ rng.normal(size=(5, 5)) * 0.6
    df = pd.DataFrame(X, columns=COLS)
    df["resp"] = X @ np.array([1.0, -0.5, 0.0, 0.3, 0.2]) + 0.3 * rng.normal(size=1200)
    df["label"] = np.where(X[:, 0] > 0.2, 2, np.where(X[:, 1] > 0, 1, 0))
    return df


@pytest.fixture(scope="module")
def ddf(table):
    return dd.from_pandas(table, npartitions=6)


@pytest.fixture(autouse=True)
def _one_thread():
    with one_blas_thread():
        yield


BOX = dict(mode="strict", bounds=(-2.0, 2.0), delta=1e-6, epsilon=2.0)


def _same(lazy, mem):
    """Every fitted number equal to 1e-9, the same ledger and noise log, the same synthetic rows."""
    for name in ("components_", "mean_", "covariance_raw_", "covariance_", "class_means_", "class_covariances_raw_",
                 "class_counts_"):
        a, b = getattr(lazy, name, None), getattr(mem, name, None)
        if b is None:
            assert a is None, name
            continue
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=name)
    assert lazy.clip_report_ == mem.clip_report_
    assert lazy.n_train_ == mem.n_train_ and lazy.n_features_in_ == mem.n_features_in_
    assert lazy.privacy_ledger_.to_dict() == mem.privacy_ledger_.to_dict()
    pd.testing.assert_frame_equal(lazy.noise_log_, mem.noise_log_)
    a, b = lazy.sample(50), mem.sample(50)
    tol = _sample_tolerance(mem)
    for u, v in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        if u.dtype.kind == "f":
            np.testing.assert_allclose(u, v, rtol=0, atol=tol)
        else:
            assert np.array_equal(u, v)


def _sample_tolerance(mem) -> float:
    """Error analysis of ``sample``: draws are mean + z @ (V sqrt(L))' with (L, V) = eigh(C).

    The two fits' C agree to a few u ||C|| (u = 2^-53; sums of the same rows in another order), so eigh's
    eigenvalues differ by up to c p u ||C||_2 (backward stable, p = dimension, c = 4 stated). A well-separated
    axis moves by about u ||C|| / gap (here ||C|| / gap ~ 10: negligible), but a clipped near-zero eigenvalue
    (the response column makes C singular up to rounding) enters through its square root: sqrt(c p u ||C||),
    i.e. 1e-8 at ||C|| = 0.4 (OpenBLAS' Haswell kernel measured 1.3e-8, over the old 1e-7 relative on small
    entries). A draw multiplies it by |z| <= 6 (200 standard normals: P(max |z| > 6) < 1e-6). The identity
    query releases its rows directly: they agree to 1e-9 as the fitted numbers do.
    """
    covs = [c for c in (getattr(mem, "covariance_raw_", None), getattr(mem, "class_covariances_raw_", None))
            if c is not None]
    if not covs:
        return 1e-9
    norm = max(float(np.linalg.norm(c, 2, axis=(-2, -1)).max()) for c in map(np.asarray, covs))
    p = np.asarray(covs[0]).shape[-1]
    return 6.0 * math.sqrt(4 * p * (np.finfo(float).eps / 2) * norm) + 1e-9


@pytest.mark.parametrize("source", ["analyze_gauss", "laplace", "nonprivate", "identity", "public"])
def test_unsupervised_on_dask_equals_numpy(table, ddf, source):
    params = dict(n_components=2, pca_source=source, random_state=5, **BOX)
    extra = {"X_public": table[COLS].to_numpy()[:50] * 0.9} if source == "public" else {}
    mem = PCAGauss(**params).fit(table[COLS], **extra)
    done = []
    lazy = PCAGauss(**params).fit(ddf[COLS], progress=lambda d, t: done.append((d, t)), **extra)
    _same(lazy, mem)
    assert mem.clip_report_.n_clipped > 0 and done[-1] == (6, 6) and lazy.n_partitions_ == 6
    assert list(lazy.feature_names_in_) == COLS


def test_regression_on_dask_equals_numpy(table, ddf):
    params = dict(n_components=3, task="regression", pca_source="analyze_gauss", y_bounds=(-3.0, 3.0),
                  random_state=9, **BOX)
    mem = PCAGauss(**params).fit(table[COLS], table["resp"])
    lazy = PCAGauss(**params).fit(ddf[COLS], ddf["resp"])
    _same(lazy, mem)
    assert lazy.n_released_ == 4


def test_classification_with_declared_labels_on_dask_equals_numpy(table, ddf):
    params = dict(n_components=2, task="classification", pca_source="analyze_gauss", labels=[0, 1, 2, 7],
                  random_state=4, **BOX)
    mem = PCAGauss(**params).fit(table[COLS], table["label"])
    lazy = PCAGauss(**params).fit(ddf[COLS], ddf["label"])
    _same(lazy, mem)
    assert list(lazy.classes_) == [0, 1, 2, 7] and lazy.labels_declared_


def test_dask_arrays_and_no_noise(table):
    X = table[COLS].to_numpy()
    params = dict(n_components=2, pca_source="analyze_gauss", random_state=1, **{**BOX, "epsilon": np.inf})
    mem = PCAGauss(**params).fit(X)
    lazy = PCAGauss(**params).fit(da.from_array(X, chunks=(250, 5)))
    _same(lazy, mem)
    assert not hasattr(lazy, "feature_names_in_")


@pytest.mark.parametrize("kw, match", [
    ({"mode": "paper"}, "strict mode only"),
    ({"bounds": "data"}, "bounds='data'"),
    ({"task": "classification"}, "declared public label set"),
])
def test_refused_on_dask_when_a_public_value_would_come_from_the_data(table, ddf, kw, match):
    params = {**BOX, "pca_source": "analyze_gauss", **kw}
    y = ddf["label"] if kw.get("task") else None
    with pytest.raises(ValueError, match=match):
        PCAGauss(**params).fit(ddf[COLS], y)


def test_bad_cell_and_unknown_label_name_partition_row_and_column(table):
    df = table.copy()
    df.loc[700, "f3"] = np.nan
    part = dd.from_pandas(df, npartitions=6)  # 200 rows each: partition 4, data row 101
    with pytest.raises(DataError, match="partition 4") as err:
        PCAGauss(pca_source="analyze_gauss", **BOX).fit(part[COLS])
    assert err.value.column == "f3" and err.value.row == 101
    with pytest.raises(DataError, match="outside the declared label set") as err:
        PCAGauss(task="classification", pca_source="analyze_gauss", labels=[0, 1], **BOX).fit(part[COLS].fillna(0),
                                                                                              part["label"])
    assert err.value.column == "label"


def test_lazy_and_in_memory_cannot_be_mixed(table, ddf):
    with pytest.raises(TypeError, match="both"):
        PCAGauss(task="regression", pca_source="analyze_gauss", y_bounds=(-3, 3), **BOX).fit(ddf[COLS],
                                                                                            table["resp"])


def test_cli_fits_pca_gauss_chunk_by_chunk_and_equals_numpy(table, tmp_path, capsys):
    """``python -m engine fit pca-gauss`` sums over the Parquet partitions (its bar counts them); same seed, same
    released moments as the in-memory fit of the concatenated rows."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from engine.cli.batch import LAZY_METHODS
    from engine.cli.commands import main

    folder = tmp_path / "set"
    folder.mkdir()
    for f in range(3):
        pq.write_table(pa.Table.from_pandas(table.iloc[f * 400:(f + 1) * 400], preserve_index=False),
                       folder / f"p{f}.parquet")
    out = tmp_path / "pg.json"
    code = main(["fit", "pca-gauss", "--data", str(folder), "--x-columns", ",".join(COLS), "--response", "resp",
                 "--x-range", "-2", "2", "--y-range", "-3", "3", "--epsilon", "2", "--delta", "1e-6", "--seed", "3",
                 "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "pca_gauss" in LAZY_METHODS and "3/3 partitions" in err
    ref = PCAGauss(n_components=2, epsilon=2.0, task="regression", pca_source="analyze_gauss", mode="strict",
                   delta=1e-6, bounds=(-2.0, 2.0), y_bounds=(-3.0, 3.0), random_state=3).fit(table[COLS],
                                                                                            table["resp"])
    fields = json.loads(out.read_text())["fields"]
    for name in ("mean_", "covariance_"):
        np.testing.assert_allclose(np.asarray(fields[name], dtype=float), getattr(ref, name), rtol=1e-9,
                                   atol=1e-12, err_msg=name)
    assert (tmp_path / "pg.owner_PRIVATE.xlsx").exists()
