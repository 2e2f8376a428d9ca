"""Reproduce the edPLS paper's corn results (spec edpls.md Sec. 8, checklist items 1, 2, 3, 5, 7, 8).

Corn m5 spectra, response moisture, delta = 0.01, both noise modes:
- ref mode = the authors' code: noise std sigma^2 and the signed y-max (diPLSlib behaviour);
- correct mode = std sigma and max |f| (the spec's default).
Every figure is printed as ``key=value`` beside the notebook's (``_nb``) and the spec's own
check (``_spec``) values from spec Secs. 6.3/6.4. Checked claims (exit 1 when one fails) are
the ones the spec says hold, in ref mode; for correct mode the script only reports
(``finding_...``) that the paper's claims do not reproduce.

1. Calibration: AGM(1, 1e-5, 1) = 3.730631634944469 (1e-9), the Sec. 4.2 table to 1e-5 for
   eps <= 10 (for eps >= 100 the table was computed with diPLSlib's erf search, which over-noises
   there; the deviation is reported, not checked), Theorem 8 with equality, linearity in Delta.
2. Noise off: b equals sklearn PLSRegression(scale=False) to 1e-8; W_dp, T_dp columns unit norm.
3. Empirical noise std of the raw noisy w equals sigma_w (sigma mode) / sigma_w^2 (ref) within 5%.
5. Fig. 3 protocol: raw spectra, 10 LVs, eps in {0.1, 1, 5, 10, 100, 250, 700}, a new 70/30 split
   per repetition, RMSEP / sigma_y (sigma_y = population std of all 80 moisture values).
7. Fig. 5 protocol (paper settings): SG (window 5, polyorder 2, 1st derivative), MSC, airPLS
   (lambda 100, 15 iterations, order 1), 8 LVs, eps in {0.1, 1, 1.5, 2, 5, 10}; preprocessing is
   fitted on the training rows of each split (the notebook fitted MSC's reference on all 80).
   The claims on means (heavy tails) use at least 100 repetitions even with --quick.
8. Scale test: X -> 1e-3 X at eps = 10, 8 LVs.
9. Paper mode's RMSEP that rises with eps (0.1 -> 10) on one split, 5 LVs, correct mode: the measured
   cause (``engine.methods.edpls.paper_notes``): the y-loading c is accurate long before the weights and
   P'W are, so b = W (P'W)^-1 c grows with eps in random directions; with c's signal removed (same noise)
   the curve is flat. Printed as ``paper_*`` key=value lines, with the sentence the page shows.

Usage: python bench/reproduce_edpls_corn.py [--quick] [--seed N]
"""
from __future__ import annotations

import math
import sys
import warnings

import numpy as np
from sklearn.cross_decomposition import PLSRegression

from _common import Claims, Timer, emit, load_corn, parse_args
from engine.data.preprocess import make_chain  # noqa: E402
from engine.methods.edpls import EDPLS, rmsep_curve  # noqa: E402
from engine.methods.edpls.paper_notes import paper_curve_diagnosis, paper_curve_note  # noqa: E402
from engine.privacy import (  # noqa: E402
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_delta,
)

REF = dict(noise_std="sigma_squared", ymax="signed")
CORRECT = dict(noise_std="sigma", ymax="abs")
DELTA = 0.01

#: spec Sec. 4.2 table (Delta = 1)
TABLE_EPS = (0.1, 1, 1.5, 2, 5, 10, 100, 250, 500, 700)
TABLE = {
    ("agm", 0.01): (9.54182, 1.87788, 1.38476, 1.11625, 0.569379, 0.350097, 0.0832927, 0.0496154, 0.0340346,
                    0.0284394),
    ("classic", 0.01): (31.0751, 3.10751, 2.07167, 1.55376, 0.621502, 0.310751, 0.0310751, 0.01243, 0.00621502,
                        0.0044393),
    ("agm", 0.05): (4.48734, 1.33278, 1.02933, 0.854704, 0.472129, 0.304367, 0.0794116, 0.0481319, 0.0333104,
                    0.0279268),
    ("agm", 0.001): (17.4044, 2.57466, 1.83443, 1.44524, 0.689842, 0.40606, 0.0878303, 0.0513269, 0.0348636,
                     0.0290244),
}

FIG3_EPS = (0.1, 1.0, 5.0, 10.0, 100.0, 250.0, 700.0)
#: RMSEP / sigma_y: notebook image (about +-15%), spec's own check (mean/median) ref and correct
FIG3_NB = (12, 10.5, 9.5, 6.5, 0.35, 0.15, 0.07)
FIG3_SPEC_REF = ((9.8, 3.2), (10.3, 3.7), (6.1, 2.5), (4.6, 2.4), (0.35, 0.26), (0.13, 0.10), (0.072, 0.066))
FIG3_SPEC_CORRECT = ((2.3, 1.4), (6.3, 2.0), (13, 3.7), (13, 3.6), (1.54, 1.25), (0.95, 0.79), (0.43, 0.36))

FIG5_EPS = (0.1, 1.0, 1.5, 2.0, 5.0, 10.0)
FIG5_NB = {"sg": (1.45, 0.19, 0.11, 0.10, 0.087, 0.082), "msc": (5.5, 10, 0.40, 0.36, 0.18, 0.16),
           "airpls": (2.3, 7, 2.1, 0.65, 0.23, 0.12)}
FIG5_SPEC_REF_SG = ((20.7, 9.3), (0.31, 0.27), (0.16, 0.14), (0.105, 0.096), (0.049, 0.048), (0.044, 0.043))
FIG5_CHAINS = {"sg": "sg1", "msc": "msc", "airpls": "airpls"}


def splits(rng, n=80, n_train=56):
    idx = rng.permutation(n)
    return idx[:n_train], idx[n_train:]


def item1(claims: Claims) -> None:
    s = analytic_gaussian_sigma(1.0, 1e-5, 1.0)
    emit("agm_1_1e-5_1", f"{s:.15f}")
    claims.check("item1_agm_test_vector", abs(s - 3.730631634944469) <= 1e-9, f"{s:.15f} vs 3.730631634944469")
    worst_small, worst_large = 0.0, 0.0
    for (kind, delta), row in TABLE.items():
        for eps, ref in zip(TABLE_EPS, row):
            if kind == "agm":
                ours = analytic_gaussian_sigma(eps, delta, 1.0)
            else:  # the table lists the classic value for comparison only (not a guarantee for eps > 1)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ours = classic_gaussian_sigma(eps, delta, 1.0, allow_large_epsilon=True)
            rel = abs(ours / ref - 1)
            if eps <= 10 or kind == "classic":
                worst_small = max(worst_small, rel)
            else:
                worst_large = max(worst_large, rel)
            if kind == "agm" and delta == DELTA and eps in (1, 10, 100, 700):
                emit(f"agm_eps{eps:g}_delta0.01_ours", ours)
                emit(f"agm_eps{eps:g}_delta0.01_spec_table", ref)
    emit("table_max_rel_diff_eps_le_10", worst_small)
    emit("table_max_rel_diff_eps_ge_100", worst_large)
    claims.check("item1_table_eps_le_10", worst_small <= 1e-5, f"max relative difference {worst_small:.3g}")
    claims.report("table_eps_ge_100_matches", worst_large <= 1e-5,
                  "the table's eps >= 100 entries came from diPLSlib's erf-based search, which over-noises there; "
                  f"ours is exact (Theorem 8 with equality); max relative difference {worst_large:.3g}")
    thm8 = 0.0
    lin = 0.0
    for eps in TABLE_EPS:
        for delta in (0.001, 0.01, 0.05):
            sig = analytic_gaussian_sigma(eps, delta, 1.0)
            thm8 = max(thm8, abs(gaussian_delta(sig, eps, 1.0) - delta))
            lin = max(lin, abs(analytic_gaussian_sigma(eps, delta, 3.7) / (3.7 * sig) - 1))
    emit("thm8_max_abs_delta_error", thm8)
    emit("linearity_max_rel_error", lin)
    claims.check("item1_thm8_equality", thm8 <= 1e-9)
    claims.check("item1_linear_in_sensitivity", lin <= 1e-12)


def item2(claims: Claims, X, y) -> None:
    ours = EDPLS(n_components=10, epsilon=np.inf).fit(X, y)
    ref = PLSRegression(n_components=10, scale=False).fit(X, y)
    rel = float(np.abs(ours.coef_ - ref.coef_.ravel()).max() / np.abs(ref.coef_).max())
    emit("noise_off_coef_max_rel_diff_vs_sklearn", rel)
    claims.check("item2_noise_off_equals_sklearn", rel <= 1e-8)
    worst = 0.0
    for mode in (REF, CORRECT):
        m = EDPLS(n_components=10, epsilon=1.0, random_state=0, **mode).fit(X, y)
        worst = max(worst, np.abs(np.linalg.norm(m.x_weights_, axis=0) - 1).max(),
                    np.abs(np.linalg.norm(m.x_scores_, axis=0) - 1).max())
    emit("unit_norm_max_deviation", worst)
    claims.check("item2_unit_norm_W_T", worst <= 1e-12)


def item3(claims: Claims, X, y, reps: int, seed: int) -> None:
    clean = EDPLS(n_components=2, epsilon=np.inf).fit(X, y)
    for label, mode in (("ref", REF), ("correct", CORRECT)):
        est = EDPLS(n_components=2, epsilon=10.0, **mode)
        out = est.sample_releases(X, y, reps, random_state=seed, keep_raw=True)
        tab = out["noise_table"].set_index(["component", "quantity"])
        sig = tab.loc[(1, "w"), "sigma"]
        expected = sig**2 if label == "ref" else sig
        emp = float((out["W_raw"][:, 0, :] - clean.x_weights_[:, 0]).std())
        emit(f"noise_std_w1_{label}_sigma", sig)
        emit(f"noise_std_w1_{label}_expected", expected)
        emit(f"noise_std_w1_{label}_empirical", emp)
        claims.check(f"item3_noise_std_{label}", abs(emp / expected - 1) <= 0.05)


def item5(claims: Claims, X, y, reps: int, rng) -> None:
    sy = float(y.std())
    emit("sigma_y", sy)
    res = {"ref": [], "correct": []}
    nonpriv, r2 = [], []
    with Timer() as tm:
        for _ in range(reps):
            tr, te = splits(rng)
            for label, mode in (("ref", REF), ("correct", CORRECT)):
                df = rmsep_curve(X[tr], y[tr], X[te], y[te], FIG3_EPS, 10, 1, random_state=rng, delta=DELTA, **mode)
                res[label].append(df["median"].to_numpy() / sy)
            nonpriv.append(float(df["nonprivate"].iloc[0]))
            pred = EDPLS(n_components=10, epsilon=np.inf).fit(X[tr], y[tr]).predict(X[te])
            r2.append(1 - np.sum((y[te] - pred) ** 2) / np.sum((y[te] - y[te].mean()) ** 2))
    emit("fig3_reps", reps)
    emit("fig3_seconds", tm.seconds)
    np_med, r2_med = float(np.median(nonpriv)), float(np.median(r2))
    emit("fig3_nonprivate_rmsep_median", np_med)
    emit("fig3_nonprivate_rmsep_nb", 0.020)
    emit("fig3_nonprivate_r2p_median", r2_med)
    emit("fig3_nonprivate_r2p_nb", 0.997)
    claims.check("item5_nonprivate_about_0.02", 0.01 <= np_med <= 0.03 and r2_med > 0.99,
                 f"RMSEP {np_med:.4f}, R2P {r2_med:.4f}")
    arr = {k: np.array(v) for k, v in res.items()}
    for i, eps in enumerate(FIG3_EPS):
        for label in ("ref", "correct"):
            a = arr[label][:, i]
            emit(f"fig3_{label}_eps{eps:g}_median_rmsep_over_sy", np.median(a))
            emit(f"fig3_{label}_eps{eps:g}_mean_rmsep_over_sy", a.mean())
            emit(f"fig3_{label}_eps{eps:g}_sem_rmsep_over_sy", a.std(ddof=1) / math.sqrt(a.size))
        emit(f"fig3_nb_eps{eps:g}_rmsep_over_sy", FIG3_NB[i])
        emit(f"fig3_spec_ref_eps{eps:g}_mean_median", f"{FIG3_SPEC_REF[i][0]}/{FIG3_SPEC_REF[i][1]}")
        emit(f"fig3_spec_correct_eps{eps:g}_mean_median", f"{FIG3_SPEC_CORRECT[i][0]}/{FIG3_SPEC_CORRECT[i][1]}")
    med = {label: dict(zip(FIG3_EPS, np.median(arr[label], axis=0))) for label in arr}
    ref = med["ref"]
    claims.check("item5_ref_eps100_median_lt_0.5", ref[100.0] < 0.5, f"{ref[100.0]:.3f}")
    claims.check("item5_ref_eps250_median_lt_0.2", ref[250.0] < 0.2, f"{ref[250.0]:.3f}")
    claims.check("item5_ref_eps700_median_lt_0.1", ref[700.0] < 0.1, f"{ref[700.0]:.3f}")
    low = min(ref[e] for e in FIG3_EPS if e <= 10)
    claims.check("item5_ref_eps_le_10_median_gt_1", low > 1, f"smallest median {low:.3f}")
    cor = med["correct"]
    reproduces = cor[100.0] < 0.5 and cor[250.0] < 0.2 and cor[700.0] < 0.1
    claims.report("fig3_correct_mode_reproduces_paper", reproduces,
                  f"correct mode medians {cor[100.0]:.3f} / {cor[250.0]:.3f} / {cor[700.0]:.3f} at eps 100/250/700 "
                  "(paper-level accuracy needs the sigma^2 bug)")


def item7(claims: Claims, X, y, reps: int, rng) -> None:
    res = {label: {c: [] for c in FIG5_CHAINS} for label in ("ref", "correct")}
    with Timer() as tm:
        for _ in range(reps):
            tr, te = splits(rng)
            for c, chain in FIG5_CHAINS.items():
                pipe = make_chain(chain).fit(X[tr])  # fitted on the training rows only
                Xtr, Xte = pipe.transform(X[tr]), pipe.transform(X[te])
                for label, mode in (("ref", REF), ("correct", CORRECT)):
                    df = rmsep_curve(Xtr, y[tr], Xte, y[te], FIG5_EPS, 8, 1, random_state=rng, delta=DELTA, **mode)
                    res[label][c].append(df["median"].to_numpy())
    emit("fig5_reps", reps)
    emit("fig5_seconds", tm.seconds)
    stats = {}
    for label in res:
        for c in FIG5_CHAINS:
            a = np.array(res[label][c])
            stats[(label, c)] = (np.median(a, axis=0), a.mean(axis=0))
            for i, eps in enumerate(FIG5_EPS):
                emit(f"fig5_{label}_{c}_eps{eps:g}_median_rmsep", stats[(label, c)][0][i])
                emit(f"fig5_{label}_{c}_eps{eps:g}_mean_rmsep", stats[(label, c)][1][i])
                if label == "ref":
                    emit(f"fig5_nb_{c}_eps{eps:g}_rmsep", FIG5_NB[c][i])
                    if c == "sg":
                        emit(f"fig5_spec_ref_sg_eps{eps:g}_mean_median",
                             f"{FIG5_SPEC_REF_SG[i][0]}/{FIG5_SPEC_REF_SG[i][1]}")
    ge1 = [i for i, e in enumerate(FIG5_EPS) if e >= 1]
    i1, i10 = FIG5_EPS.index(1.0), FIG5_EPS.index(10.0)
    sg_best = all(stats[("ref", "sg")][0][i] < min(stats[("ref", c)][0][i] for c in ("msc", "airpls")) for i in ge1)
    claims.check("item7_ref_sg_lowest_median_at_eps_ge_1", sg_best)
    sg1 = stats[("ref", "sg")][0][i1]
    claims.check("item7_ref_sg_eps1_median_lt_0.4", sg1 < 0.4, f"{sg1:.3f}")
    for c in ("msc", "airpls"):
        m1, m10 = stats[("ref", c)][1][i1], stats[("ref", c)][1][i10]
        claims.check(f"item7_ref_{c}_eps1_mean_gt_1", m1 > 1, f"{m1:.3f}")
        claims.check(f"item7_ref_{c}_eps10_mean_about_0.13_0.17", 0.09 <= m10 <= 0.25,
                     f"{m10:.3f} (checked in [0.09, 0.25])")
    cor_sg_best = all(stats[("correct", "sg")][0][i] < min(stats[("correct", c)][0][i] for c in ("msc", "airpls"))
                      for i in ge1)
    cor_sg1 = stats[("correct", "sg")][0][i1]
    claims.report("fig5_correct_mode_reproduces_paper", cor_sg_best and cor_sg1 < 0.4,
                  f"correct mode: SG median at eps 1 = {cor_sg1:.3f}, SG lowest at every eps >= 1: {cor_sg_best}")


def item8(claims: Claims, X, y, reps: int, rng) -> None:
    tr, te = splits(rng)
    s = 1e-3
    med = {}
    for label, mode in (("ref", REF), ("correct", CORRECT)):
        for scale in (1.0, s):
            df = rmsep_curve(scale * X[tr], y[tr], scale * X[te], y[te], [10.0], 8, reps, random_state=rng,
                             delta=DELTA, **mode)
            med[(label, scale)] = float(df["median"].iloc[0])
            nonpriv = float(df["nonprivate"].iloc[0])
            emit(f"scale_{label}_x{scale:g}_eps10_median_rmsep", med[(label, scale)])
    emit("scale_nonprivate_rmsep", nonpriv)
    emit("scale_spec_ref_median_rmsep_x1_x0.001", "0.92/0.030")
    claims.check("item8_ref_rmsep_improves_sharply", med[("ref", s)] < 0.2 * med[("ref", 1.0)],
                 f"{med[('ref', 1.0)]:.3f} -> {med[('ref', s)]:.4f}")
    seed = int(rng.integers(2**31))
    nsr = {}
    for scale in (1.0, s):
        noisy = EDPLS(n_components=8, epsilon=10.0, random_state=seed).fit(scale * X[tr], y[tr])
        clean = EDPLS(n_components=8, epsilon=np.inf).fit(scale * X[tr], y[tr])
        nsr[scale] = float(np.linalg.norm(noisy.x_loadings_ - clean.x_loadings_) / np.linalg.norm(clean.x_loadings_))
        emit(f"scale_correct_x{scale:g}_P_noise_to_signal", nsr[scale])
    claims.check("item8_correct_P_noise_to_signal_unchanged", abs(nsr[s] / nsr[1.0] - 1) <= 1e-6)
    cor_change = med[("correct", s)] / med[("correct", 1.0)]
    emit("scale_correct_median_rmsep_ratio", cor_change)
    claims.report("correct_mode_rmsep_scale_invariant", abs(math.log(cor_change)) < math.log(1.1),
                  f"correct-mode median RMSEP ratio (x1e-3 / x1) = {cor_change:.3g}: the sigma of the UNIT vectors "
                  "w and t scales with X (spec flaw 3), so the RMSEP is not scale-free either")


PAPER_EPS = (0.1, 1.0, 10.0, 100.0, 1000.0)


def item9(claims: Claims, X, y, reps: int, rng) -> None:
    tr, te = splits(rng)
    d = paper_curve_diagnosis(X[tr], y[tr], X[te], y[te], PAPER_EPS, 5, reps, random_state=rng, delta=DELTA)
    emit("paper_reps", reps)
    emit("paper_n_components", 5)
    emit("paper_mean_predictor_rmsep", d["mean_predictor"].iloc[0])
    emit("paper_nonprivate_rmsep", d["nonprivate"].iloc[0])
    emit("paper_cos_random_direction", d["cos_random"].iloc[0])
    emit("paper_coef_norm_nonprivate", d["coef_norm_nonprivate"].iloc[0])
    for row in d.itertuples(index=False):
        e = f"{row.epsilon:g}"
        emit(f"paper_rmsep_eps_{e}", row.median)
        emit(f"paper_rmsep_c_noise_only_eps_{e}", row.median_c_noise_only)
        emit(f"paper_cos_w1_eps_{e}", row.cos_w1)
        emit(f"paper_nsr_c1_eps_{e}", row.nsr_c1)
        emit(f"paper_nsr_PtW_eps_{e}", row.nsr_ptw)
        emit(f"paper_coef_norm_eps_{e}", row.coef_norm)
    at = d.set_index("epsilon")
    lo, hi = at.loc[0.1], at.loc[10.0]
    claims.report("paper_rmsep_rises_0.1_to_10", hi["median"] > 1.1 * lo["median"],
                  f"{lo['median']:.3f} -> {hi['median']:.3f}")
    if hi["median"] > 1.1 * lo["median"]:
        claims.check("paper_rise_is_c_signal_on_noise_only_weights",
                     hi["median_c_noise_only"] < 1.2 * lo["median_c_noise_only"] and hi["nsr_c1"] < 0.5
                     and hi["cos_w1"] < 3 * hi["cos_random"],
                     f"c-noise-only {lo['median_c_noise_only']:.3f} -> {hi['median_c_noise_only']:.3f}; "
                     f"nsr_c1 {hi['nsr_c1']:.3f}, cos_w1 {hi['cos_w1']:.3f} at eps 10")
    claims.check("paper_falls_once_weights_align", at.loc[1000.0, "median"] < lo["median"]
                 and at.loc[1000.0, "cos_w1"] > 0.3, f"{at.loc[1000.0, 'median']:.3f}")
    emit("paper_note", paper_curve_note(d) or "none (the curve does not rise on this split)")


def main(argv=None) -> int:
    args = parse_args(__doc__, argv)
    claims = Claims()
    emit("mode", "quick" if args.quick else "full")
    emit("seed", args.seed)
    item1(claims)
    data = load_corn()
    if data is None:
        emit("corn_data", "absent (skipping items 2-8)")
        return claims.exit_code()
    X, y, _ = data
    rng = np.random.default_rng(args.seed)
    item2(claims, X, y)
    item3(claims, X, y, 200 if args.quick else 1000, args.seed)
    item5(claims, X, y, 40 if args.quick else 100, rng)
    item7(claims, X, y, 100 if args.quick else 200, rng)
    item8(claims, X, y, 60 if args.quick else 200, rng)
    item9(claims, X, y, 100 if args.quick else 300, rng)
    return claims.exit_code()


if __name__ == "__main__":
    sys.exit(main())
