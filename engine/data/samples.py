"""PrivaLab's synthetic sample data: the generators and the writer of ``sample_data/``.

The seeded generators live in ``engine.data.sample_generators`` and are re-exported here
(:func:`make_nir_spectra`, :func:`make_solar`, :func:`make_value_chain`, :func:`make_two_views`,
each returning a :class:`SampleBunch`).

:func:`write_sample_data` writes the CSV files of ``sample_data/`` (and its README) with fixed
seeds and fixed float formatting; ``python -m engine.data.samples`` (run from the project root)
regenerates them bit for bit.

Dependencies: numpy, pandas, scipy only. No streamlit.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from .sample_generators import (
    NIR_RESPONSES,
    SampleBunch,
    make_nir_consortium,
    make_nir_spectra,
    make_solar,
    make_two_views,
    make_value_chain,
)

__all__ = [
    "NIR_RESPONSES",
    "SAMPLE_FILES",
    "SampleBunch",
    "main",
    "make_nir_consortium",
    "make_nir_spectra",
    "make_solar",
    "make_two_views",
    "make_value_chain",
    "write_sample_data",
]


# =============================================================================================
# The sample_data/ writer
# =============================================================================================

#: Files written by :func:`write_sample_data`, in order.
SAMPLE_FILES = (
    "nir_spectra.csv", "solar_pv.csv", "solar_sites.csv", "value_chain.csv",
    "two_views.csv", "two_views_truth.json", "nir_consortium.csv", "nir_consortium_public.csv", "README.md",
)
_SEEDS = {"nir": 0, "solar": 1, "value_chain": 2, "two_views": 3, "nir_consortium": 4}
_CSV = dict(index=False, lineterminator="\n", encoding="utf-8")


def _channel_name(w: float) -> str:
    return str(int(w)) if float(w).is_integer() else repr(float(w))


def _fmt_fixed(values: np.ndarray, decimals: int) -> np.ndarray:
    """Fixed decimals with trailing zeros (and a bare '.') removed: 0.7000 -> 0.7, 0.0000 -> 0."""
    # str.rstrip, not np.char.rstrip: numpy 2.0's strips "1.0000" to "" (the range allows 2.0).
    rounded = np.round(np.asarray(values, dtype=float), decimals) + 0.0
    cells = [(f"%.{decimals}f" % v).rstrip("0").rstrip(".") for v in rounded.ravel().tolist()]
    return np.array(["0" if c == "-0" else c for c in cells], dtype=str).reshape(rounded.shape)


def _write_text_table(path: Path, header: list, columns: list) -> None:
    r"""CSV from string columns (all the same length), '\n' line ends."""
    body = np.column_stack(columns)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(",".join(header) + "\n")
        fh.write("\n".join(",".join(row) for row in body.tolist()))
        fh.write("\n")


def _sample_cancorr(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    Xc, Yc = X - X.mean(axis=0), Y - Y.mean(axis=0)
    qx, _ = np.linalg.qr(Xc)
    qy, _ = np.linalg.qr(Yc)
    return np.linalg.svd(qx.T @ qy, compute_uv=False)


def write_sample_data(out_dir="sample_data") -> list[Path]:
    """Write every file of ``sample_data/`` (fixed seeds and formats); returns the paths written.

    Deterministic: writing twice gives byte-identical files (on the same numpy/scipy build).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []

    # --- NIR
    nir = make_nir_spectra(random_state=_SEEDS["nir"])
    df = pd.DataFrame(nir.Y, columns=list(NIR_RESPONSES))
    spec = pd.DataFrame(nir.X, columns=[_channel_name(w) for w in nir.wavelengths])
    pd.concat([df, spec], axis=1).to_csv(out / "nir_spectra.csv", float_format="%.6g", **_CSV)
    written.append(out / "nir_spectra.csv")

    # --- solar
    sol = make_solar(random_state=_SEEDS["solar"])
    yv = sol.y.to_numpy()
    times = sol.y.index.strftime("%Y-%m-%dT%H:%M:%S").to_numpy(dtype=str)
    _write_text_table(out / "solar_pv.csv", ["time", *sol.y.columns],
                      [times] + [_fmt_fixed(yv[:, j], 4) for j in range(yv.shape[1])])
    s = sol.sites
    _write_text_table(
        out / "solar_sites.csv", ["site", "x_km", "y_km", "lat", "lon", "capacity_kw"],
        [s["site"].to_numpy(dtype=str), _fmt_fixed(s["x_km"], 4), _fmt_fixed(s["y_km"], 4),
         _fmt_fixed(s["lat"], 6), _fmt_fixed(s["lon"], 6), _fmt_fixed(s["capacity_kw"], 4)],
    )
    written += [out / "solar_pv.csv", out / "solar_sites.csv"]

    # --- value chain
    vc = make_value_chain(random_state=_SEEDS["value_chain"])
    parts = [pd.DataFrame(b, columns=[f"{name}_x{j:02d}" for j in range(1, b.shape[1] + 1)])
             for name, b in zip(vc.block_names, vc.blocks, strict=True)]
    parts.append(pd.DataFrame(vc.Y, columns=list(vc.kpi_names)))
    pd.concat(parts, axis=1).to_csv(out / "value_chain.csv", float_format="%.6g", **_CSV)
    written.append(out / "value_chain.csv")

    # --- two views
    tv = make_two_views(random_state=_SEEDS["two_views"])
    dx, dy = tv.X.shape[1], tv.Y.shape[1]
    pd.concat([pd.DataFrame(tv.X, columns=[f"x{j:02d}" for j in range(1, dx + 1)]),
               pd.DataFrame(tv.Y, columns=[f"y{j:02d}" for j in range(1, dy + 1)])],
              axis=1).to_csv(out / "two_views.csv", float_format="%.6g", **_CSV)
    written.append(out / "two_views.csv")
    sample_cc = _sample_cancorr(tv.X, tv.Y)
    truth = {
        "file": "two_views.csv",
        "generator": "engine.data.samples.make_two_views",
        "parameters": {"n_samples": int(tv.X.shape[0]), "dx": dx, "dy": dy,
                       "correlations": [float(r) for r in tv.planted], "noise": tv.noise,
                       "random_state": _SEEDS["two_views"]},
        "x_columns": [f"x{j:02d}" for j in range(1, dx + 1)],
        "y_columns": [f"y{j:02d}" for j in range(1, dy + 1)],
        "true_canonical_correlations": [round(float(r), 12) for r in tv.true_correlations],
        "sample_canonical_correlations": [round(float(r), 6) for r in sample_cc],
        "true_x_weights": [[round(float(v), 8) for v in row] for row in tv.x_weights.T],
        "true_y_weights": [[round(float(v), 8) for v in row] for row in tv.y_weights.T],
        "note": "population canonical correlations are exact by construction; sample values "
                "are those of this file (n = 2000). true_*_weights: one list per planted "
                "pair (unit-variance canonical variates, sign arbitrary).",
    }
    with open(out / "two_views_truth.json", "w", encoding="utf-8", newline="\n") as fh:
        fh.write(json.dumps(truth, indent=2) + "\n")
    written.append(out / "two_views_truth.json")

    # --- NIR consortium (pooled labs) and its published unlabelled spectra
    con = make_nir_consortium(random_state=_SEEDS["nir_consortium"])
    names = [_channel_name(w) for w in con.wavelengths]
    pd.concat([pd.DataFrame(con.Y, columns=list(NIR_RESPONSES)), pd.DataFrame(con.X, columns=names)],
              axis=1).to_csv(out / "nir_consortium.csv", float_format="%.5g", **_CSV)
    pd.DataFrame(con.X_public, columns=names).to_csv(out / "nir_consortium_public.csv", float_format="%.5g", **_CSV)
    written += [out / "nir_consortium.csv", out / "nir_consortium_public.csv"]

    # --- README
    day = sol.daylight.to_numpy()
    stats = dict(
        solar_mean=float(yv[day].mean()), solar_sd=float(yv[day].std()), solar_day=float(day.mean()),
        solar_T=yv.shape[0], rho_a=float(np.max(np.abs(np.linalg.eigvals(sol.A)))),
        n_links=int((sol.D > 0).sum()),
        sample_cc=", ".join(f"{v:.3f}" for v in sample_cc[:4]),
        nir_x_range=f"{nir.X.min():.2f} to {nir.X.max():.2f}",
        con_rows=con.X.shape[0], con_public=con.X_public.shape[0],
        con_y=", ".join(f"{n} {m:.2f} ± {sd:.2f}" for n, m, sd in
                        zip(NIR_RESPONSES, con.Y.mean(axis=0), con.Y.std(axis=0, ddof=1), strict=False)),
        nir_y=", ".join(f"{n} {m:.2f} ± {sd:.2f}" for n, m, sd in
                        zip(NIR_RESPONSES, nir.Y.mean(axis=0), nir.Y.std(axis=0, ddof=1), strict=False)),
        a_zero=", ".join(f"{(A == 0).mean():.3f}" for A in vc.A),
        b_nonzero=", ".join(str(int((B != 0).sum())) for B in vc.B),
        kpi_sd=", ".join(f"{v:.2f}" for v in vc.Y.std(axis=0)),
    )
    with open(out / "README.md", "w", encoding="utf-8", newline="\n") as fh:
        fh.write(_README.format(**stats))
    written.append(out / "README.md")
    return written


_README = """\
# Sample data (synthetic)

Every file here is generated by `engine/data/samples.py` with fixed seeds and fixed number
formatting. Regenerate all of them, bit for bit, from the project root with

    python -m engine.data.samples

(`tests/test_samples.py` checks that a fresh run matches these files byte for byte.) All CSVs
are comma-separated, UTF-8, `\\n` line ends, one header row. Do not edit by hand.

## nir_spectra.csv (PLS: spectra -> constituents)

* Generator: `make_nir_spectra(n_samples=120, n_channels=350, wavelength_start=1100.0,
  wavelength_step=4.0, random_state=0)`; numbers written with `%.6g`.
* 120 rows. Columns: `moisture, oil, protein, starch` (responses, % w/w), then 350 spectral
  channels named by wavelength in nm: `1100, 1104, ..., 2496` (absorbance, {nir_x_range}).
* Physics: Beer-Lambert mixture of five pure components (the four responses plus an unlisted
  "other" that closes the sum to 100 %), each a sum of Gaussian bands at NIR positions (water
  1450/1940 nm, oil 1725/1760/2310 nm, protein 2055/2180 nm, starch 2100 nm, ...), then a
  multiplicative scatter gain U(0.9, 1.1), an additive offset N(0, 0.03), a random quadratic
  baseline and white noise (sd 0.0005).
* Known truth: the responses are exactly the concentrations used to build the spectra
  (a PLS model on the spectra predicts each with held-out R² > 0.95). Sample mean ± sd:
  {nir_y}.

## nir_consortium.csv and nir_consortium_public.csv (a consortium's pooled NIR set)

* Generator: `make_nir_consortium(n_labs=5, rows_per_lab=1000, n_public=500, n_channels=70,
  wavelength_start=1100.0, wavelength_step=20.0, random_state=4)`; numbers written with `%.5g`.
* `nir_consortium.csv`: {con_rows:,} rows, five labs pooled (rows 1-1000 lab 1, 1001-2000 lab 2, ...;
  each lab one draw of the NIR generator above). Columns: `moisture, oil, protein, starch` (% w/w),
  then 70 channels `1100, 1120, ..., 2480` nm. Sample mean ± sd: {con_y}.
* `nir_consortium_public.csv`: {con_public} unlabelled spectra of the same kind (same channels, no
  responses), published by the consortium: public spectra for the recommended strict edPLS (its
  projection, centre and bounds). The edPLS page's default sample set: with these rows and the public
  spectra a private model at ε = 1 is useful (`tests/test_planner.py`).

## solar_pv.csv and solar_sites.csv (VAR / collaborative forecasting)

* Generator: `make_solar(n_sites=44, start="2011-02-01 00:00", end="2013-03-06 23:00", a=0.1,
  c=0.8, sig=0.6, ell=5.0, mu=1.0, wind_from="west", random_state=1)`, the generator of
  `var_admm.md` section 8.1.
* `solar_pv.csv`: {solar_T} hourly rows. Columns: `time` (ISO 8601, UTC, written without a zone
  suffix: `2011-02-01T00:00:00` .. `2013-03-06T23:00:00`), then `site_01` .. `site_44`: the
  normalised output y = P / clear-sky power in daylight, 0 at night, clipped to [0, 1.2],
  4 decimals (trailing zeros dropped).
* `solar_sites.csv`: 44 rows. Columns: `site, x_km, y_km, lat, lon, capacity_kw` (sites
  uniform in a 30 x 30 km square centred at 38.57 N, 7.91 W; capacity U(2, 6) kW).
* Physics: clear-sky power from the solar geometry; clouds are a latent VAR(1)
  x_t = A x_(t-1) + e_t with A = 0.1 I + 0.8 D, D the row-normalised exp(-distance/5 km)
  weights of sites 0.5 to 6 km upwind (wind from the west), spatially correlated innovations,
  plus a daily weather regime shared by all sites; clear-sky index k = 1.05 / (1 + exp(-(1 +
  r_d + x_t))) with 2 % multiplicative noise.
* Known truth: the cloud VAR matrix A ({n_links} nonzero upwind links, spectral radius
  {rho_a:.3f}) is returned by `make_solar(...)["A"]` (not stored in a file): western sites
  lead eastern ones by an hour. Daylight hours: {solar_day:.1%} of the cells; daytime y has mean
  {solar_mean:.3f} and sd {solar_sd:.3f} (spec: about 0.70 and 0.24).

## value_chain.csv (vertical federated PLS, three companies)

* Generator: `make_value_chain(n_samples=1000, widths=(10, 20, 20), random_state=2)`, the
  Dataset-1 simulator of `p3ls.md` section 5.1; numbers written with `%.6g`.
* 1000 rows (batches). Columns: `s1_x01..s1_x10` (company 1), `s2_x01..s2_x20` (company 2),
  `s3_x01..s3_x20` (company 3): standardised low-rank process variables; then `kpi_1..kpi_7`,
  the final stage's quality responses (owned by company 3). Column prefixes name the parties.
* Physics: stage i responds to its own process variables and to 3 responses of the previous
  stage, Y_i = U_lin A_i' + U_qd B_i' + V_i (linear plus very sparse quadratic terms, noise
  variance 0.001).
* Known truth: the coefficient matrices are returned by `make_value_chain(...)` (not stored).
  The KPIs depend on companies 1 and 2 through the upstream responses, so a model on all
  three blocks beats company 3 alone. In this draw:
  - fraction of zero linear coefficients per stage: {a_zero} (probabilities 0.15, 0.20, 0.25);
  - nonzero quadratic coefficients per stage: {b_nonzero};
  - KPI sds: {kpi_sd}.

## two_views.csv and two_views_truth.json (CCA)

* Generator: `make_two_views(n_samples=2000, dx=10, dy=8, correlations=(0.9, 0.7, 0.4),
  noise=0.0, random_state=3)`; numbers written with `%.6g`.
* 2000 rows. Columns: `x01..x10` (view X), `y01..y08` (view Y).
* Physics: three independent latent pairs with correlations 0.9, 0.7, 0.4 plus independent
  private dimensions, mixed by random invertible matrices within each view.
* Known truth: the population canonical correlations are exactly 0.9, 0.7, 0.4, 0, 0, 0, 0, 0
  (CCA is invariant to invertible maps of each view). Sample canonical correlations of this
  file: {sample_cc}, ... `two_views_truth.json` holds the true values, the sample
  values and the true canonical weights.
"""


def main(argv=None) -> int:
    """``python -m engine.data.samples [OUT_DIR]``: regenerate the sample files (default sample_data)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    out_dir = argv[0] if argv else "sample_data"
    for p in write_sample_data(out_dir):
        print(f"{p}  {p.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
