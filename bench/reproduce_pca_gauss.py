"""PCA-Gauss reproduction: the spec's checklist (Sec. 8) on scikit-learn stand-ins, plus OpenDP's DP PCA.

The paper's data sets (GFE, Realdisp, Twitter) are UCI downloads and cannot be had offline. The spec's
stand-ins are used instead (spec Sec. 7), read from scikit-learn's bundled files:
digits (clustering, K = 10) for GFE, digits-binary (digit >= 5) and breast_cancer for Realdisp, diabetes for
Twitter. Stand-ins are 16x to 1,800x smaller, and every covariance mechanism's noise scales with 1/(N eps),
so the eps at which things happen differs from the paper's: compare trends, not numbers.

Claims checked (exit 1 if one fails; chosen to hold for any seed):
  C1 eps = inf: Algorithm 1's S equals diag(top-P eigenvalues)/(MN) to 1e-10.
  C2 every Laplace scale equals the spec's formula; the noise std is sqrt(2) b within 3 % (>= 1e5 draws).
  C3 the paper's Alg. 3 covariance bound is exceeded on the spec 9.2 pair for P <= 3; the safe bound holds.
  C5 strict mode: the ledger total equals the nominal eps (and delta) for every W source and task.
  C6 dimension trend (Fig. 1): breast_cancer, eps = 10, Pub-PCA: accuracy(P = 1) - accuracy(P = M) >= 0.15
     (spec target 0.20).
  C7 noisy regime: breast_cancer at eps = 10, PCA-Gauss Pub-PCA (best P) beats Liu by >= 0.10.
  C10 clustering: at eps >= 1 and P <= 5 the synthetic silhouette is within 0.03 of that of N(0, I_P) samples.
  C11 issue #15: strict fits with the data sets' documented public ranges and label sets (fresh noise) are
      proven; with bounds read off the data, or a known noise seed, they are not; the end-to-end audit of the
      page's strict release (digits, Pub-PCA, k = 2; Algorithm 1; Algorithm 3) stays below its claim and
      catches a planted bug (noise halved).
Reported beside the spec's targets, not enforced: C7 for Jiang/Li and diabetes, C8 ordering Pub >= AG >= Lap,
C9 where Liu catches up (eps = 100), the Table II-IV equivalents, and OpenDP DP-PCA + our Gaussian (utility,
time; each OpenDP fit runs in a child process with a time limit, because its eigenvector sampler can stall
at large eps).

The utility sweeps fix the release noise with ``noise_seed=--seed`` so that the printed numbers reproduce:
those fits are "not proven: the noise seed is known" by design (a reproduction, not a release). Strict
sweeps use the data sets' documented public ranges and label sets, never ranges read off the rows.

Usage: python bench/reproduce_pca_gauss.py [--quick] [--seed N] [--no-opendp]
"""
from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import sys
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA

from engine.data.tables import arrays_from_frame, documented_public_inputs, load_bundled
from engine.methods.pca_gauss import (
    PCAGauss,
    alg3_class_moments,
    pipeline_audit_case,
    sensitivities,
)
from engine.methods.pca_gauss.evaluation import (
    gaussian_reference_silhouette,
    make_split,
    reference_levels,
)
from engine.methods.pca_gauss.utility import (
    best_over,
    run_method,
    summarise,
    utility_sweep,
)
from engine.privacy import laplace_scale
from engine.privacy.audit import run_case

# The paper's Tables II-IV at eps = 1 (spec Sec. 6), printed beside ours.
PAPER = {
    "clustering_sc": {"real": 0.286, "pca_gauss_alg1": 0.220, "liu": 0.092, "jiang": 0.123, "li": 0.123},
    "classification_acc": {"real": 82.56, "pca_gauss_public": 76.36, "pca_gauss_laplace": 71.40,
                           "pca_gauss_ag": 74.08, "liu": 61.31, "jiang": 55.06, "li": 65.04},
    "regression_rmse": {"real": 0.0021, "pca_gauss_public": 0.0021, "pca_gauss_laplace": 0.0024,
                        "pca_gauss_ag": 0.0023, "liu": 0.0100, "jiang": 0.4720, "li": 0.4527},
}


def emit(key, value):
    if isinstance(value, float):
        value = f"{value:.4g}"
    print(f"{key}={value}", flush=True)


def load_split(key, task, seed):
    df = load_bundled(key)
    X, y, names = arrays_from_frame(df, task, "target", name=key)
    return make_split(X, y, task, random_state=seed, feature_names=names)


def progress_printer(label):
    started = time.perf_counter()

    def _p(done, total):
        if done == total or done % max(1, total // 5) == 0:
            print(f"# {label}: {done}/{total} fits, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return _p


def cell(summary, method, eps, P=None, alpha=None):
    s = summary[(summary["method"] == method) & np.isclose(summary["epsilon"], eps)]
    if P is not None:
        s = s[s["P"] == P]
    if alpha is not None:
        s = s[np.isclose(s["alpha"], alpha)]
    return s


# --------------------------------------------------------------------------------------------- exact checks
def exact_checks(seed, failures):
    check_c1(seed, failures)
    bc = check_c2(seed, failures)
    check_c3(failures)
    check_c5(seed, bc, failures)
    check_c11(seed, bc, failures)


def check_c1(seed, failures):
    """C1: at eps = inf Algorithm 1's S equals diag(top-P eigenvalues)/(MN)."""
    X = load_digits().data
    Xc = X - X.mean(axis=0)
    s = np.abs(Xc).max(axis=0)
    s[s == 0] = 1.0
    Xb = Xc / s
    N, M = Xb.shape
    worst = 0.0
    for P in (1, 3, 10):
        est = PCAGauss(P, np.inf, pca_source="nonprivate", random_state=seed).fit(X)
        lam = PCA(P).fit(Xb).explained_variance_ * (N - 1)
        worst = max(worst, float(np.abs(est.covariance_raw_ - np.diag(lam) / (M * N)).max()))
    emit("c1_alg1_noise_off_max_abs_error", worst)
    if worst > 1e-10:
        failures.append("C1")


def check_c2(seed, failures):
    """C2: scales from the ledger against the spec's formulas, and the empirical noise std. Returns the
    breast-cancer split (C5 and C11 use it too)."""
    rng = np.random.default_rng(seed)
    Xu = rng.uniform(-1, 1, size=(200, 30))
    exact = PCAGauss(2, np.inf, pca_source="identity").fit(Xu).covariance_raw_
    draws, b = [], None
    for r in range(112):
        est = PCAGauss(2, 1.0, pca_source="identity", random_state=seed * 1000 + r).fit(Xu)
        draws.append((est.covariance_raw_ - exact).ravel())
        b = est.privacy_ledger_.entries[0].scale
    draws = np.concatenate(draws)
    ratio = draws.std() / (math.sqrt(2) * b)
    emit("c2_liu_scale", b)
    emit("c2_liu_scale_formula", 30**2 / 200)
    emit("c2_noise_draws", draws.size)
    emit("c2_empirical_std_over_sqrt2_b", ratio)
    scale_ok = math.isclose(b, 30**2 / 200, rel_tol=1e-12)
    bc = load_split("breast_cancer", "classification", seed)
    Nb, Mb = bc.X_train.shape
    for mode in ("paper", "strict"):
        est = PCAGauss(3, 4.0, task="classification", pca_source="laplace", mode=mode, alpha=0.3,
                       random_state=seed, bounds="public", labels=(0, 1)).fit(bc.X_train, bc.y_train,
                                                                             X_public=bc.X_public)
        lap = est.privacy_ledger_.to_frame().set_index("name").loc["Lap-PCA covariance"]
        want = (Mb if mode == "paper" else Mb * Mb) / (Nb * 1.2)
        emit(f"c2_lap_pca_scale_{mode}", lap["scale"])
        emit(f"c2_lap_pca_scale_{mode}_formula", want)
        emit(f"c2_lap_pca_true_epsilon_{mode}", lap["epsilon"])
        scale_ok &= math.isclose(lap["scale"], want, rel_tol=1e-12)
        for _, row in est.privacy_ledger_.to_frame().iterrows():
            scale_ok &= math.isclose(row["scale"], laplace_scale(row["epsilon"], row["sensitivity"]), rel_tol=1e-12)
        if mode == "paper":
            log = est.noise_log_
            for _, row in log[log["release"].str.startswith("class")].iterrows():
                k = 2 * 3 if row["release"].startswith("class mean") else 9
                share = 0.1 if row["release"].startswith("class mean") else 0.9
                scale_ok &= math.isclose(row["scale"], k / (row["N_C"] * share * 0.7 * 4.0), rel_tol=1e-12)
    emit("c2_scales_match_formulas", scale_ok)
    if not scale_ok or abs(ratio - 1) > 0.03:
        failures.append("C2")
    return bc


def check_c3(failures):
    """C3: the spec 9.2 pair."""
    ok3 = True
    for P in (1, 2, 3, 5):
        N_C = 50
        v = np.full(P, 1 / math.sqrt(P))
        Z = np.tile(v, (N_C, 1))
        Z2 = Z.copy()
        Z2[0] = -v
        change = float(np.abs(alg3_class_moments(Z)[1] - alg3_class_moments(Z2)[1]).sum())
        paper = float(sensitivities("classification", P, N_C, class_counts=[N_C])["class_covariance"][0])
        safe = float(sensitivities("classification", P, N_C, rule="tight", class_counts=[N_C])["class_covariance"][0])
        emit(f"c3_alg3_cov_change_over_paper_bound_P{P}", change / paper)
        ok3 &= (change > paper) == (P <= 3) and change <= safe + 1e-12
    emit("c3_paper_bound_fails_exactly_for_P_le_3_and_safe_bound_holds", ok3)
    if not ok3:
        failures.append("C3")


def check_c5(seed, bc, failures):
    """C5: strict budgets."""
    dia = load_split("diabetes", "regression", seed)
    ok5, worst_gap = True, 0.0
    for task, split in (("unsupervised", bc), ("classification", bc), ("regression", dia)):
        for source in ("public", "laplace", "analyze_gauss", "identity"):
            # Fresh noise (no seed) and public inputs: the bundled sets' public slices are public data.
            est = PCAGauss(2, 3.0, task=task, pca_source=source, mode="strict", delta=1e-6, alpha=0.4,
                           bounds="public", y_bounds="public", labels=(0, 1)).fit(
                split.X_train, None if task == "unsupervised" else split.y_train, X_public=split.X_public,
                y_public=split.y_public)
            e, d = est.privacy_ledger_.total("basic")
            worst_gap = max(worst_gap, abs(e - 3.0))
            ok5 &= math.isclose(e, 3.0, rel_tol=1e-12) and math.isclose(
                d, 1e-6 if source == "analyze_gauss" else 0.0, abs_tol=1e-18) and est.privacy_ledger_.proven
    emit("c5_strict_ledger_total_minus_nominal_max", worst_gap)
    emit("c5_strict_budgets_equal_nominal", ok5)
    paper_lap = PCAGauss(2, 1.0, task="classification", pca_source="laplace", alpha=0.5, random_state=seed).fit(
        bc.X_train, bc.y_train)
    emit("c5_paper_lap_pca_claimed_total_epsilon", 1.0)
    emit("c5_paper_lap_pca_true_total_epsilon", paper_lap.privacy_ledger_.total("basic")[0])
    if not ok5:
        failures.append("C5")


def check_c11(seed, bc, failures):
    """C11: issue #15 -- what makes a strict fit proven, and the end-to-end audit of the page's strict release."""
    doc = documented_public_inputs("breast_cancer")
    ok11 = True
    fresh = PCAGauss(2, 1.0, task="classification", pca_source="public", mode="strict", bounds=doc.bounds,
                     labels=doc.labels).fit(bc.X_train, bc.y_train, X_public=bc.X_public)
    ok11 &= fresh.privacy_ledger_.status == "proven" and fresh.privacy_ledger_.neighbouring == "replace"
    for label, kw in (("bounds_from_data", dict(bounds="data", labels=doc.labels)),
                      ("labels_from_y", dict(bounds=doc.bounds)),
                      ("known_noise_seed", dict(bounds=doc.bounds, labels=doc.labels, random_state=seed))):
        led = PCAGauss(2, 1.0, task="classification", pca_source="public", mode="strict", **kw).fit(
            bc.X_train, bc.y_train, X_public=bc.X_public).privacy_ledger_
        emit(f"c11_status_{label}", led.status)
        ok11 &= led.status == "not proven"
    emit("c11_status_documented_inputs_fresh_noise", fresh.privacy_ledger_.status)
    for task, source in (("unsupervised", "public"), ("unsupervised", "nonprivate"), ("classification", "public")):
        for bug in (None, "noise_halved"):
            # alpha = 1e-3 for the claims that hold: Algorithm 1's worst case is exactly tight, so a 95 % bound
            # would exceed its claim for 1 seed in 20; a planted bug overshoots by far more.
            r = run_case(pipeline_audit_case(task, pca_source=source, bug=bug), 200_000, seed,
                         alpha=0.05 if bug else 1e-3)
            tag = f"c11_audit_{task}_{source}" + (f"_bug_{bug}" if bug else "")
            emit(tag, f"claim={r['claimed_eps']:.3g} lower_bound={r['eps_lb']:.3f} trials={r['trials']}")
            ok11 &= r["ok"]
    emit("c11_public_inputs_and_audits_ok", ok11)
    if not ok11:
        failures.append("C11")


# --------------------------------------------------------------------------------------------- utility
def classification_block(key, seed, reps, eps_grid, P_grid, alphas, failures, *, check):
    split = load_split(key, "classification", seed)
    M = split.X_train.shape[1]
    chance = reference_levels(split)["chance_accuracy"]
    methods = ("real", "public_only", "pca_gauss_public", "pca_gauss_laplace", "pca_gauss_ag", "liu", "jiang", "li")
    grid_P = sorted(set(P_grid) | ({M} if check else set()))
    rows = utility_sweep(split, methods, eps_grid, [p for p in grid_P if p <= M], alphas=alphas, n_reps=reps,
                         random_state=seed, noise_seed=seed, progress=progress_printer(key))
    summ = summarise(rows, "svm_accuracy")
    best = best_over(summ, "svm_accuracy")
    emit(f"{key}.sizes", str(split.sizes).replace(" ", ""))
    emit(f"{key}.chance_accuracy", chance)
    for eps in eps_grid:
        for _, r in best[np.isclose(best["epsilon"], eps)].iterrows():
            tag = "" if r["method"] in ("real", "public_only") else f" (P={int(r['P'])}" + (
                f", alpha={r['alpha']:.1f})" if r["method"] in ("pca_gauss_laplace", "pca_gauss_ag") else ")")
            emit(f"{key}.eps={eps:g}.{r['method']}", f"{100 * r['mean']:.1f}±{100 * r['ci95']:.1f}{tag}")
    doc = documented_public_inputs(key)
    strict = utility_sweep(split, ("pca_gauss_public", "pca_gauss_laplace", "pca_gauss_ag"), [10.0],
                           [p for p in P_grid if p <= M], alphas=alphas, n_reps=reps, mode="strict", delta=1e-6,
                           random_state=seed, noise_seed=seed, bounds=doc.bounds, labels=doc.labels)
    sb = best_over(summarise(strict, "svm_accuracy"), "svm_accuracy").set_index("method")["mean"]
    emit(f"{key}.strict.eps=10.pub_ag_lap", f"{100 * sb['pca_gauss_public']:.1f} / {100 * sb['pca_gauss_ag']:.1f} / "
                                            f"{100 * sb['pca_gauss_laplace']:.1f}")
    emit(f"{key}.c8_ordering_pub_ge_ag_ge_lap_strict_eps10 (spec target, not enforced)",
         bool(sb["pca_gauss_public"] >= sb["pca_gauss_ag"] - 0.02 >= sb["pca_gauss_laplace"] - 0.04))
    b = best.set_index(["method", "epsilon"])["mean"]
    if 10.0 in eps_grid:
        pub, liu = b[("pca_gauss_public", 10.0)], b[("liu", 10.0)]
        gain_liu = pub - liu
        gain_id = pub - max(b[("jiang", 10.0)], b[("li", 10.0)])
        emit(f"{key}.c7_eps10_pub_minus_liu", gain_liu)
        emit(f"{key}.c7_eps10_pub_minus_best_identity_query", gain_id)
        emit(f"{key}.c7_liu_within_15pp_of_chance", bool(liu - chance <= 0.15))
        emit(f"{key}.c7_spec_target_gain_ge_10pp_over_liu_jiang_li", bool(min(gain_liu, gain_id) >= 0.10))
        if check and gain_liu < 0.10:
            failures.append(f"C7 ({key})")
        if check:
            pub_eps10 = (summ["method"] == "pca_gauss_public") & np.isclose(summ["epsilon"], 10.0)
            by_p = summ[pub_eps10].set_index("P")["mean"]
            trend = by_p.loc[1] - by_p.loc[M]
            emit(f"{key}.c6_eps10_pub_accuracy_by_P", " ".join(f"P={p}:{100 * v:.1f}" for p, v in by_p.items()))
            emit(f"{key}.c6_eps10_acc_P1_minus_acc_PM", trend)
            emit(f"{key}.c6_spec_target_ge_20pp", bool(trend >= 0.20))
            if trend < 0.15:
                failures.append(f"C6 ({key})")
    if 100.0 in eps_grid:
        emit(f"{key}.c9_eps100_liu_minus_pub", b[("liu", 100.0)] - b[("pca_gauss_public", 100.0)])
    return split, best


def regression_block(seed, reps, eps_grid, P_grid, alphas):
    split = load_split("diabetes", "regression", seed)
    methods = ("real", "public_only", "pca_gauss_public", "pca_gauss_laplace", "pca_gauss_ag", "liu", "jiang", "li")
    rows = utility_sweep(split, methods, eps_grid, [p for p in P_grid if p <= 10], alphas=alphas, n_reps=reps,
                         random_state=seed, noise_seed=seed, progress=progress_printer("diabetes"))
    summ = summarise(rows, "krr_rmse")
    best = best_over(summ, "krr_rmse")
    emit("diabetes.random_guess_rmse", reference_levels(split)["random_guess_rmse"])
    for eps in eps_grid:
        for _, r in best[np.isclose(best["epsilon"], eps)].iterrows():
            tag = "" if r["method"] in ("real", "public_only") else f" (P={int(r['P'])})"
            emit(f"diabetes.eps={eps:g}.{r['method']}",
                 f"{r['mean']:.3f}±{r['ci95']:.3f} median {r['median']:.3f}{tag}")
    b = best.set_index(["method", "epsilon"])["mean"]
    if 1.0 in eps_grid:
        gain = min(b[("liu", 1.0)], b[("jiang", 1.0)], b[("li", 1.0)]) - b[("pca_gauss_public", 1.0)]
        emit("diabetes.c7_eps1_best_baseline_rmse_minus_pub", gain)
        emit("diabetes.c7_spec_target_ge_0.1", bool(gain >= 0.1))
    return best


def clustering_block(seed, reps, eps_grid, P_grid, failures):
    d = load_digits()
    split = make_split(d.data, d.target, "unsupervised", random_state=seed)
    rows = utility_sweep(split, ("real", "pca_gauss_alg1", "pca_gauss_public", "liu", "jiang", "li"), eps_grid,
                         P_grid, n_reps=reps, K=10, random_state=seed, noise_seed=seed,
                         progress=progress_printer("digits"))
    real_sc = float(rows["real_silhouette"].iloc[0])
    emit("digits.real_silhouette", real_sc)
    sc = summarise(rows, "silhouette")
    ari = summarise(rows, "transfer_ari")
    worst = 0.0
    for P in P_grid:
        ref = gaussian_reference_silhouette(P, len(split.X_train), 10, seed)
        line = []
        for eps in eps_grid:
            c = cell(sc, "pca_gauss_alg1", eps, P)["mean"].iloc[0]
            a = cell(ari, "pca_gauss_alg1", eps, P)["mean"].iloc[0]
            line.append(f"eps={eps:g}:SC={c:.3f},ARI={a:.2f}")
            if eps >= 1 and P <= 5:
                worst = max(worst, abs(c - ref))
        emit(f"digits.alg1.P={P}", f"N(0,I) SC={ref:.3f} | " + " ".join(line))
    emit("digits.c10_max_abs_sc_minus_gaussian_sc_eps_ge1_P_le5", worst)
    if worst > 0.03:
        failures.append("C10")
    best_sc = best_over(summarise(rows, "silhouette_gap"), "silhouette_gap")
    for _, r in best_sc[np.isclose(best_sc["epsilon"], 1.0)].iterrows():
        emit(f"digits.eps=1.{r['method']}.abs_delta_sc", f"{r['mean']:.3f} (P={int(r['P'])})")
    best_ari = best_over(ari, "transfer_ari")
    for _, r in best_ari[np.isclose(best_ari["epsilon"], 1.0)].iterrows():
        emit(f"digits.eps=1.{r['method']}.transfer_ari", f"{r['mean']:.3f} (P={int(r['P'])})")


# --------------------------------------------------------------------------------------------- OpenDP
def _opendp_child(queue, key, seed, P, eps, alpha):
    split = load_split(key, "classification", seed)
    try:
        row = run_method("pca_gauss_opendp", split, P=P, epsilon=eps, alpha=alpha, random_state=seed)
        queue.put(("ok", row["svm_accuracy"], row.get("opendp_seconds", float("nan"))))
    except Exception as err:  # report, never crash the bench
        queue.put(("error", repr(err)[:120], float("nan")))


def opendp_block(seed, eps_grid, P, reps, limit):
    try:
        import opendp  # noqa: F401
        import randomgen  # noqa: F401
    except ImportError as err:
        emit("opendp.available", f"no ({err}); pip install randomgen for OpenDP's numpy extra")
        return
    ctx = mp.get_context("fork")
    for key in ("breast_cancer", "digits_binary"):
        split = load_split(key, "classification", seed)
        for eps in eps_grid:
            # OpenDP's sampler stalls for eps_PCA above about 2 on these data: cap eps_PCA at 2 for both.
            alpha = min(0.5, 2.0 / eps)
            ours_t, ours_acc = [], []
            for r in range(reps):
                t0 = time.perf_counter()
                ours_acc.append(run_method("pca_gauss_ag", split, P=P, epsilon=eps, alpha=alpha, delta=1e-6,
                                           random_state=seed + r)["svm_accuracy"])
                ours_t.append(time.perf_counter() - t0)
            accs, times, status = [], [], "ok"
            for r in range(reps):
                q = ctx.Queue()
                proc = ctx.Process(target=_opendp_child, args=(q, key, seed + r, P, eps, alpha))
                proc.start()
                proc.join(limit)
                if proc.is_alive():
                    proc.terminate()
                    proc.join()
                    status = f"stalled (> {limit:g} s; OpenDP's eigenvector rejection sampler)"
                    break
                kind, acc, secs = q.get()
                if kind != "ok":
                    status = f"error {acc}"
                    break
                accs.append(acc)
                times.append(secs)
            emit(f"opendp.{key}.eps={eps:g}.P={P}.alpha={alpha:.2g}.ours_ag_pca_plus_gauss",
                 f"{100 * np.mean(ours_acc):.1f}% in {np.mean(ours_t):.3f} s/fit (release and evaluation)")
            if accs and status == "ok":
                emit(f"opendp.{key}.eps={eps:g}.P={P}.alpha={alpha:.2g}.opendp_pca_plus_gauss",
                     f"{100 * np.mean(accs):.1f}% (OpenDP PCA alone {np.mean(times):.3f} s/fit)")
            else:
                emit(f"opendp.{key}.eps={eps:g}.P={P}.alpha={alpha:.2g}.opendp_pca_plus_gauss", status)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer replicates and a smaller grid (< 2 minutes)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-opendp", action="store_true", help="skip the OpenDP comparison")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    failures: list[str] = []
    if args.quick:
        reps, eps_grid, P_grid, alphas = 3, [1.0, 10.0, 100.0], [1, 2, 5], [0.3, 0.7]
        clu_P, clu_reps = [1, 3, 5], 2
    else:
        reps, eps_grid, P_grid, alphas = 8, [0.1, 1.0, 10.0, 100.0, 1000.0], [1, 2, 3, 5, 10], [0.1, 0.3, 0.5, 0.7, 0.9]
        clu_P, clu_reps = [1, 2, 3, 5, 10, 20], 5
    emit("seed", args.seed)
    emit("mode", "quick" if args.quick else "full")
    emit("data", "scikit-learn stand-ins (paper's GFE/Realdisp/Twitter not available offline)")
    emit("note", "paper-mode rows: pca_gauss_laplace is Lap-PCA at the printed scale M (true eps = M eps_PCA + "
                 "eps_Gauss); the strict rows use M^2; best over P and alpha is tuned on test data (spec 9.8)")
    exact_checks(args.seed, failures)
    classification_block("breast_cancer", args.seed, reps, eps_grid, P_grid, alphas, failures, check=True)
    classification_block("digits_binary", args.seed, reps, eps_grid, P_grid, alphas, failures, check=False)
    regression_block(args.seed, reps, eps_grid, P_grid, alphas)
    clustering_block(args.seed, clu_reps, [e for e in eps_grid if e <= 100], clu_P, failures)
    for table, values in PAPER.items():
        emit(f"paper.eps=1.{table}", " ".join(f"{k}={v}" for k, v in values.items()))
    if not args.no_opendp:
        opendp_block(args.seed, [1.0, 10.0] if args.quick else [1.0, 10.0, 100.0], 2, 2 if args.quick else 5,
                     limit=20.0 if args.quick else 60.0)
    emit("seconds", time.perf_counter() - started)
    emit("failed_claims", ",".join(failures) or "none")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
