"""Sample-data generators (engine.data.samples): shapes, determinism, the planted truths, and the
bit-for-bit regeneration of ``sample_data/``."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.data import samples as S

ROOT = Path(__file__).resolve().parents[1]
SHORT = dict(start="2011-02-01 00:00", end="2011-04-01 23:00")  # 60 days, 1440 hours


def _sample_cancorr(X, Y):
    """Sample canonical correlations by QR whitening + SVD (independent of the module's helper)."""
    qx, _ = np.linalg.qr(X - X.mean(axis=0))
    qy, _ = np.linalg.qr(Y - Y.mean(axis=0))
    return np.linalg.svd(qx.T @ qy, compute_uv=False)


# ----------------------------------------------------------------------------- module hygiene
@pytest.mark.parametrize("module", ["samples.py", "sample_generators.py"])
def test_module_is_dependency_light_and_streamlit_free(module):
    tree = ast.parse((ROOT / "engine" / "data" / module).read_text())
    mods = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            mods.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom):  # relative: only the sibling generators module
            assert node.module == "sample_generators", node.module
    assert mods <= {"__future__", "json", "sys", "pathlib", "numpy", "pandas", "scipy"}, mods


# ----------------------------------------------------------------------------- NIR
def test_nir_shapes_and_physics():
    d = S.make_nir_spectra()
    assert d.X.shape == (120, 350) and d.Y.shape == (120, 4)
    assert d.response_names == ("moisture", "oil", "protein", "starch")
    assert d.wavelengths[0] == 1100 and d.wavelengths[1] == 1104 and d.wavelengths[-1] == 1100 + 4 * 349
    assert d.pure_spectra.shape == (5, 350) and np.all(d.pure_spectra >= 0)
    # realistic scale: moisture about 10 +- 0.4 %
    assert 9.8 < d.Y[:, 0].mean() < 10.6 and 0.25 < d.Y[:, 0].std() < 0.6
    assert np.allclose(d.concentrations.sum(axis=1), 100.0)
    # correlated but not collinear
    corr = np.corrcoef(d.Y.T)
    assert np.abs(corr[np.triu_indices(4, 1)]).max() < 0.9 and np.linalg.matrix_rank(d.Y - d.Y.mean(0)) == 4
    # Beer-Lambert + scatter + baseline reconstructs X up to the white noise
    model = d.gain[:, None] * (d.concentrations @ d.pure_spectra) + d.offset[:, None] + d.baseline
    resid = d.X - model
    assert 3e-4 < resid.std() < 8e-4
    assert 0.9 <= d.gain.min() and d.gain.max() <= 1.1 and d.gain.std() > 0.03
    # water band at 1940 nm: the moisture spectrum peaks there
    assert abs(d.wavelengths[np.argmax(d.pure_spectra[0])] - 1940) <= 4


def test_nir_responses_are_recoverable_by_pls():
    from sklearn.cross_decomposition import PLSRegression
    from sklearn.metrics import r2_score

    d = S.make_nir_spectra(n_samples=120, random_state=0)
    tr, te = slice(0, 80), slice(80, 120)
    model = PLSRegression(n_components=10).fit(d.X[tr], d.Y[tr])
    r2 = r2_score(d.Y[te], model.predict(d.X[te]), multioutput="raw_values")
    assert np.all(r2 > 0.95), r2


# ----------------------------------------------------------------------------- solar
@pytest.fixture(scope="module")
def solar_short():
    return S.make_solar(**SHORT)


def test_solar_shapes(solar_short):
    s = solar_short
    assert s.y.shape == s.P.shape == s.CS.shape == (1440, 44)
    assert list(s.y.columns) == [f"site_{i:02d}" for i in range(1, 45)]
    assert isinstance(s.y.index, pd.DatetimeIndex) and s.y.index[0] == pd.Timestamp("2011-02-01 00:00")
    assert (np.diff(s.y.index.asi8) == np.diff(s.y.index.asi8)[0]).all()
    assert s.y.index[1] - s.y.index[0] == pd.Timedelta(hours=1)
    assert s.A.shape == (44, 44) and np.array_equal(s.B, s.A.T)
    assert list(s.sites.columns) == ["site", "x_km", "y_km", "lat", "lon", "capacity_kw"]
    assert s.coords.shape == (44, 4)
    assert s.coords[["x_km", "y_km"]].abs().to_numpy().max() <= 15
    assert 2 <= s.capacity.min() and s.capacity.max() <= 6
    assert abs(s.coords["lat"].mean() - 38.57) < 0.1 and abs(s.coords["lon"].mean() + 7.91) < 0.1


def test_solar_var_matrix_has_spectral_radius_a():
    for a, c, wind in ((0.1, 0.8, "west"), (0.3, 0.6, "north"), (0.2, 0.7, 45.0)):
        s = S.make_solar(n_sites=30, a=a, c=c, wind_from=wind, start="2011-06-01", end="2011-06-02", random_state=5)
        D = s.D
        assert np.max(np.abs(np.linalg.eigvals(s.A))) == pytest.approx(a, abs=1e-9)
        assert np.allclose(np.linalg.matrix_power(D, 30), 0)  # acyclic (nilpotent)
        sums = D.sum(axis=1)
        assert np.allclose(sums[sums > 0], 1) and (D > 0).sum() > 10
        assert np.allclose(s.A, a * np.eye(30) + c * D)
    # wind from the west: every link comes from a site at least 0.5 km further west, within 6 km
    s = S.make_solar(start="2011-06-01", end="2011-06-02")
    xy = s.coords[["x_km", "y_km"]].to_numpy()
    i, j = np.nonzero(s.D)
    assert np.all(xy[i, 0] - xy[j, 0] >= 0.5)
    assert np.all(np.hypot(*(xy[i] - xy[j]).T) <= 6)
    assert np.all(np.diag(s.D) == 0)


def test_solar_cloud_process_is_the_var():
    s = S.make_solar(start="2011-02-01", end="2011-05-31 23:00")  # 2880 hours
    x = s.cloud.to_numpy()
    Ahat = np.linalg.lstsq(x[:-1], x[1:], rcond=None)[0].T
    err = np.abs(Ahat - s.A)
    assert err.mean() < 0.04 and err.max() < 0.2
    resid = x[1:] - x[:-1] @ s.A.T
    assert np.allclose(np.cov(resid.T), s.Sigma, atol=0.05)


def test_solar_y_range_night_and_daytime_statistics(solar_short):
    s = solar_short
    y, cs = s.y.to_numpy(), s.CS.to_numpy()
    night = cs == 0
    assert y.min() >= 0 and y.max() <= 1.2
    assert night.any() and np.all(y[night] == 0) and np.all(s.P.to_numpy()[night] == 0)
    assert np.array_equal(~night, s.daylight.to_numpy())
    day = ~night
    assert 0.4 < day.mean() < 0.6
    assert abs(y[day].mean() - 0.70) < 0.08, y[day].mean()
    assert abs(y[day].std() - 0.24) < 0.05, y[day].std()
    # P = y * CS in daylight; clear sky peaks at the 12:00 UTC stamp (longitude -7.9)
    assert np.allclose(s.P.to_numpy()[day], y[day] * cs[day])
    assert s.CS.groupby(s.CS.index.hour).mean().mean(axis=1).idxmax() == 12


def test_solar_is_deterministic():
    kw = dict(start="2011-07-01", end="2011-07-03 23:00")
    a, b, c = S.make_solar(**kw, random_state=7), S.make_solar(**kw, random_state=7), S.make_solar(**kw, random_state=8)
    assert a.y.equals(b.y) and np.array_equal(a.A, b.A) and a.sites.equals(b.sites)
    assert not np.array_equal(a.y.to_numpy(), c.y.to_numpy()) and not np.array_equal(a.A, c.A)
    g = S.make_solar(**kw, random_state=np.random.default_rng(7))
    assert g.y.equals(a.y)


# ----------------------------------------------------------------------------- value chain
def test_value_chain_shapes_and_model():
    vc = S.make_value_chain()
    assert [b.shape for b in vc.blocks] == [(1000, 10), (1000, 20), (1000, 20)]
    assert vc.Y.shape == (1000, 7) and [y.shape[1] for y in vc.Y_stages] == [5, 6, 7]
    assert vc.Y is vc.Y_stages[2]
    assert [A.shape for A in vc.A] == [(5, 10), (6, 23), (7, 23)]
    assert [B.shape for B in vc.B] == [(5, 55), (6, 276), (7, 276)]
    assert vc.blocks[0].std(axis=0) == pytest.approx(np.ones(10)) and np.abs(vc.blocks[1].mean(axis=0)).max() < 1e-12
    # coefficient ranges of Dataset-1
    for A, (lo, hi) in zip(vc.A, ((-1, 2), (-3, 3), (-3, 2))):
        assert A.min() >= lo and A.max() <= hi
    # low rank: about 90 % of the variance in 4 singular vectors
    for X in vc.blocks:
        s2 = np.linalg.svd(X, compute_uv=False) ** 2
        assert 0.8 < s2[:4].sum() / s2.sum() < 0.97
    # Y_i = U_lin A_i' + U_qd B_i' + V_i with Ý = first 3 columns of Y_(i-1), noise variance 0.001
    for i in range(3):
        U = vc.blocks[i] if i == 0 else np.column_stack([vc.blocks[i], vc.Y_stages[i - 1][:, :3]])
        a, b = np.triu_indices(U.shape[1])
        V = vc.Y_stages[i] - U @ vc.A[i].T - (U[:, a] * U[:, b]) @ vc.B[i].T
        assert 0.0008 < V.var() < 0.0012


def test_value_chain_sparsity():
    vc = S.make_value_chain(n_samples=50, widths=(100, 100, 100), random_state=11)
    for A, p in zip(vc.A, (0.15, 0.20, 0.25)):
        assert abs((A == 0).mean() - p) < 0.05
    zeros = np.concatenate([(B == 0).ravel() for B in vc.B])
    assert abs(zeros.mean() - 0.999) < 0.0003


def test_value_chain_is_deterministic():
    a, b, c = (S.make_value_chain(n_samples=100, random_state=r) for r in (4, 4, 5))
    assert all(np.array_equal(x, y) for x, y in zip(a.blocks + a.A + a.B, b.blocks + b.A + b.B))
    assert np.array_equal(a.Y, b.Y) and not np.array_equal(a.Y, c.Y)


# ----------------------------------------------------------------------------- two views
def test_two_views_shapes_and_truth():
    tv = S.make_two_views()
    assert tv.X.shape == (2000, 10) and tv.Y.shape == (2000, 8)
    assert np.array_equal(tv.true_correlations, [0.9, 0.7, 0.4, 0, 0, 0, 0, 0])
    # the default draw is close already
    assert np.abs(_sample_cancorr(tv.X, tv.Y)[:3] - [0.9, 0.7, 0.4]).max() < 0.05


@pytest.mark.parametrize("noise", [0.0, 0.7])
def test_two_views_sample_cca_matches_truth(noise):
    tv = S.make_two_views(n_samples=100_000, noise=noise, random_state=21)
    cc = _sample_cancorr(tv.X, tv.Y)
    assert cc.shape == tv.true_correlations.shape == (8,)
    assert np.abs(cc - tv.true_correlations).max() < 0.02, (cc, tv.true_correlations)
    if noise:
        assert np.all(tv.true_correlations[:3] < [0.9, 0.7, 0.4]) and np.all(tv.true_correlations[3:] < 1e-12)
    else:
        # the true weights give unit-variance variates with the planted correlations
        u, v = tv.X @ tv.x_weights, tv.Y @ tv.y_weights
        r = [np.corrcoef(u[:, k], v[:, k])[0, 1] for k in range(3)]
        assert np.allclose(r, [0.9, 0.7, 0.4], atol=0.01) and np.allclose(u.std(axis=0), 1, atol=0.01)


def test_two_views_with_sklearn_cca():
    from sklearn.cross_decomposition import CCA

    tv = S.make_two_views(n_samples=20_000, random_state=5)
    u, v = CCA(n_components=3, max_iter=2000, tol=1e-10).fit_transform(tv.X, tv.Y)
    r = [abs(np.corrcoef(u[:, k], v[:, k])[0, 1]) for k in range(3)]
    assert np.abs(np.array(r) - [0.9, 0.7, 0.4]).max() < 0.02, r


def test_two_views_determinism_and_validation():
    a, b, c = S.make_two_views(random_state=1), S.make_two_views(random_state=1), S.make_two_views(random_state=2)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.Y, b.Y) and not np.array_equal(a.X, c.X)
    with pytest.raises(ValueError):
        S.make_two_views(dx=2, correlations=(0.9, 0.7, 0.4))
    with pytest.raises(ValueError):
        S.make_two_views(correlations=(1.0,))


def test_nir_is_deterministic():
    a, b, c = S.make_nir_spectra(random_state=0), S.make_nir_spectra(random_state=0), S.make_nir_spectra(random_state=1)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.Y, b.Y)
    assert not np.array_equal(a.X, c.X) and not np.array_equal(a.Y, c.Y)


# ----------------------------------------------------------------------------- sample_data/
@pytest.mark.slow  # 12 s (pytest --durations, load 7-15, 2026-11-27): out of the fast lane
def test_write_sample_data_is_bit_for_bit(tmp_path):
    first = S.write_sample_data(tmp_path / "a")
    second = S.write_sample_data(tmp_path / "b")
    names = [p.name for p in first]
    assert names == [p.name for p in second] == list(S.SAMPLE_FILES)
    for p, q in zip(first, second):
        assert p.read_bytes() == q.read_bytes(), p.name
    committed = ROOT / "sample_data"
    for p in first:
        c = committed / p.name
        assert c.exists(), f"{c} missing: run python -m engine.data.samples"
        assert c.read_bytes() == p.read_bytes(), f"{c} is stale: run python -m engine.data.samples"
    total = sum(p.stat().st_size for p in first)
    assert total < 10 * 1024 * 1024

    # headers and contents
    nir = pd.read_csv(first[0])
    assert list(nir.columns[:4]) == ["moisture", "oil", "protein", "starch"]
    assert list(nir.columns[4:7]) == ["1100", "1104", "1108"] and nir.shape == (120, 354)
    sol = pd.read_csv(tmp_path / "a" / "solar_pv.csv")
    assert sol.shape == (18360, 45) and list(sol.columns) == ["time"] + [f"site_{i:02d}" for i in range(1, 45)]
    assert sol["time"].iloc[0] == "2011-02-01T00:00:00" and sol["time"].iloc[-1] == "2013-03-06T23:00:00"
    yv = sol.iloc[:, 1:].to_numpy()
    assert yv.min() >= 0 and yv.max() <= 1.2 and np.abs(yv * 1e4 - np.round(yv * 1e4)).max() < 1e-6
    sites = pd.read_csv(tmp_path / "a" / "solar_sites.csv")
    assert list(sites.columns) == ["site", "x_km", "y_km", "lat", "lon", "capacity_kw"] and len(sites) == 44
    vc = pd.read_csv(tmp_path / "a" / "value_chain.csv")
    expected = ([f"s1_x{j:02d}" for j in range(1, 11)] + [f"s2_x{j:02d}" for j in range(1, 21)]
                + [f"s3_x{j:02d}" for j in range(1, 21)] + [f"kpi_{j}" for j in range(1, 8)])
    assert list(vc.columns) == expected and len(vc) == 1000
    tv = pd.read_csv(tmp_path / "a" / "two_views.csv")
    assert list(tv.columns) == [f"x{j:02d}" for j in range(1, 11)] + [f"y{j:02d}" for j in range(1, 9)]
    truth = json.loads((tmp_path / "a" / "two_views_truth.json").read_text())
    assert truth["true_canonical_correlations"] == [0.9, 0.7, 0.4, 0, 0, 0, 0, 0]
    cc = _sample_cancorr(tv.filter(like="x").to_numpy(), tv.filter(like="y").to_numpy())
    assert np.allclose(cc, truth["sample_canonical_correlations"], atol=1e-4)
    readme = (tmp_path / "a" / "README.md").read_text()
    assert "python -m engine.data.samples" in readme
    assert all(name in readme for name in S.SAMPLE_FILES if name != "README.md")


# ----------------------------------------------------------------------------- real spectra (chemotools, run time)
def test_real_sets_are_read_at_run_time_not_shipped():
    from engine.data.catalog import SAMPLE_SETS, sample_sets

    real = [s for s in SAMPLE_SETS.values() if s.loader]
    assert {s.key for s in real} == {"fermentation", "coffee"}
    for s in real:
        assert s.file == "" and s.path is None and "(chemotools)" in s.title
    shipped = {p.name.lower() for p in (ROOT / "sample_data").iterdir()}
    assert not any("ferment" in n or "coffee" in n for n in shipped)
    assert sample_sets("spectra")[0].key == "nir"  # the synthetic set stays the spectra pages' default


def test_fermentation_set_matches_chemotools():
    datasets = pytest.importorskip("chemotools.datasets")
    from engine.data.catalog import SAMPLE_SETS, load_sample, public_reference

    s = SAMPLE_SETS["fermentation"]
    assert s.kind == "spectra" and s.response_columns == ("glucose",)
    df = load_sample("fermentation")
    X, y = datasets.load_fermentation_train()
    assert df.shape[0] == 21 and df.columns[-1] == "glucose"
    np.testing.assert_array_equal(df["glucose"].to_numpy(), y["glucose"].to_numpy())
    # every kept channel is the package's column of that wavenumber; only all-zero channels are left out
    kept = df.columns[:-1]
    cols = {float(c): c for c in X.columns}
    for c in (kept[0], kept[500], kept[-1]):
        np.testing.assert_array_equal(df[c].to_numpy(), X[cols[float(c)]].to_numpy())
    dropped = [c for c in X.columns if f"{float(c):g}" not in set(kept)]
    assert len(kept) + len(dropped) == X.shape[1] == 1047
    assert all((X[c] == 0).all() for c in dropped) and (df[kept].std() > 0).all()
    pub = public_reference("fermentation")
    assert pub.shape == (1629, 1047) and set(kept) <= set(pub.columns)
    np.testing.assert_array_equal(pub[kept[3]].to_numpy(), datasets.load_fermentation_test()[0].iloc[:, 3])
    assert public_reference("nir") is None


def test_coffee_set_has_three_origins():
    pytest.importorskip("chemotools.datasets")
    from engine.data.catalog import SAMPLE_SETS, load_sample
    from engine.data.columns import response_candidates

    s = SAMPLE_SETS["coffee"]
    df = load_sample("coffee")
    assert df.shape == (60, 1842) and s.label_column == "origin" == df.columns[-1]
    assert df["origin"].value_counts().to_dict() == {"Ethiopia": 20, "Brasil": 20, "Vietnam": 20}
    assert response_candidates(df) == []  # a text label, no numeric response: not offered on edPLS
    assert s.kind not in ("spectra",)
