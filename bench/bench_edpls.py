"""edPLS speed: batched RMSEP sweeps against diPLSlib, and a large fit against sklearn and ikpls.

(a) RMSEP sweep on corn (m5, moisture, one 56/24 split): 10 epsilons x R replicates x 5
    latent-variable settings (R = 100; --quick: 20). Ours: ``rmsep_vs_components`` (the clean
    NIPALS path is computed once for the largest k; each (k, eps) draws R noise sets and solves R
    k x k systems in one batch). diPLSlib: its ``edpls`` function called once per fit, looped over
    the same work in the same process. Both use the authors' conventions (std sigma^2, signed
    y-max) and the same Generator stream, so the fits are the same fits: the medians must agree
    to 1e-6 where diPLSlib's calibration is accurate (eps <= 20). Claim (full mode): speedup >= 10.
(b) Large fits: 20,000 x 500 (--quick: only this) and 200,000 x 1,000 float64, 10 components. EDPLS at
    eps = inf and in paper mode (eps = 1) against ikpls (``ikpls.numpy.PLS``, algorithm 1) and sklearn
    ``PLSRegression``, both fitting the same model (centred, not scaled). CPU time with one BLAS thread,
    interleaved rounds in this process, best of 7. Prints edpls_vs_ikpls_cpu (the worse of the two modes at
    every size; target <= 1.10), the per-size ratios, each fit's time in passes over X (units of a numpy sum
    over X), the peak memory each fit allocates on top of X (tracemalloc) and edpls_row_pass_products (blas or
    einsum: the kernel this machine's row passes run, measured once per process).

(c) One strict fit (issue #21): 100,000 x 1,000 (--quick: 50,000 x 1,000), 10 components, eps = 1, private
    centring, public bounds fixed from the generator's design (x_bound = the expected row norm, so about half
    the rows are clipped; y_bound = 5 + 4 sd). Against a bare BLAS ``dsyrk`` of X (the cross-product it
    needs), both under the same BLAS thread setting (one thread: ``engine.threads.one_blas_thread``, the
    app's setting), best of a few interleaved runs. Prints strict_vs_syrk (process CPU time: the work, robust
    to other processes on shared cores; strict_vs_syrk_wall: wall-clock) (target <= 1.3), the fit's peak
    allocation on top of X (tracemalloc; no n x d temporary) and the Gram matrix against the old path
    (``scale_rows`` + ``Z'Z``) on the first 20,000 rows.
(d) One paper-mode fit on corn (56 x 700, 5 components, eps = 1) against diPLSlib's ``edpls`` function for
    the same fit (authors' conventions, same Generator stream: same coefficients), interleaved rounds of
    fits, one BLAS thread; prints single_fit_vs_diplslib = their best CPU time / ours, EDPLS with its defaults
    (target >= 2; wall-clock: single_fit_vs_diplslib_wall), and the same with the authors' conventions
    (single_fit_vs_diplslib_authors_conventions, reported).

(e) Plain strict ``EDPLS(mode="strict")`` on corn's 700 channels (80 rows, 5 components): strict_plain_fit_s_700
    (CPU seconds, best of 5; target < 0.5), beside sklearn's PLSRegression.

Every timing is process CPU time (user + system) with every BLAS limited to one thread for the whole run
(threadpoolctl, after the imports; ``blas_threads`` shows the check), the peers run in the same process,
interleaved; the load average is printed at the start, after each large size and at the end. The script exits
non-zero when a checked claim fails.

Usage: python bench/bench_edpls.py [--quick] [--seed N]
"""
from __future__ import annotations

import gc
import sys
import time
import tracemalloc

import numpy as np
from diPLSlib.functions import edpls as dipls_edpls
from ikpls.numpy import PLS as IKPLS
from scipy.linalg.blas import dsyrk
from sklearn.cross_decomposition import PLSRegression
from threadpoolctl import threadpool_info

from _common import Claims, cpu_best, emit, emit_load, load_corn, one_blas_thread_for_the_run, parse_args
from engine.methods.edpls import EDPLS, rmsep_vs_components  # noqa: E402
from engine.privacy.moments import MomentsRelease, scale_rows  # noqa: E402
from engine.threads import one_blas_thread  # noqa: E402

EPSILONS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 300.0, 700.0)
COMPONENTS = (1, 2, 4, 7, 10)
DELTA = 0.01


def sweep(claims: Claims, reps: int, seed: int, quick: bool) -> None:
    data = load_corn()
    if data is None:
        emit("sweep", "skipped (corn data absent)")
        return
    X, y, _ = data
    rng = np.random.default_rng(seed)
    idx = rng.permutation(80)
    tr, te = idx[:56], idx[56:]
    Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
    n_fits = len(EPSILONS) * len(COMPONENTS) * reps
    emit("sweep_fits", n_fits)

    with _CpuWall() as t_ours:
        ours = rmsep_vs_components(Xtr, ytr, Xte, yte, COMPONENTS, EPSILONS, reps, random_state=seed + 1,
                                   delta=DELTA, noise_std="sigma_squared", ymax="signed")
    emit("sweep_seconds_ours", t_ours.cpu)

    # diPLSlib: the same fits, one call each, in the order our sweep draws its noise.
    g = np.random.default_rng(seed + 1)
    xm, ym = Xtr.mean(0), ytr.mean()
    Xc, yc = Xtr - xm, (ytr - ym)[:, None]
    theirs = {}
    with _CpuWall() as t_dip:
        for k in COMPONENTS:
            for eps in EPSILONS:
                r = np.empty(reps)
                for i in range(reps):
                    coef = dipls_edpls(Xc, yc, k, eps, DELTA, rng=g)[0].ravel()
                    pred = (Xte - xm) @ coef + ym
                    r[i] = np.sqrt(np.mean((pred - yte) ** 2))
                theirs[(k, eps)] = float(np.median(r))
    emit("sweep_seconds_diplslib", t_dip.cpu)
    speedup = t_dip.cpu / t_ours.cpu
    emit("speedup_vs_diplslib", speedup)
    emit("sweep_ms_per_fit_ours", 1e3 * t_ours.cpu / n_fits)
    emit("sweep_ms_per_fit_diplslib", 1e3 * t_dip.cpu / n_fits)

    worst_small = worst_large = 0.0
    for row in ours.itertuples(index=False):
        rel = abs(row.median / theirs[(row.n_components, row.epsilon)] - 1)
        if row.epsilon <= 20:
            worst_small = max(worst_small, rel)
        else:
            worst_large = max(worst_large, rel)
    emit("sweep_median_max_rel_diff_vs_diplslib_eps_le_20", worst_small)
    emit("sweep_median_max_rel_diff_vs_diplslib_eps_gt_20", worst_large)
    for k in (2, 10):
        for eps in (1.0, 100.0):
            sel = ours[(ours.n_components == k) & (ours.epsilon == eps)].iloc[0]
            emit(f"sweep_k{k}_eps{eps:g}_median_rmsep_ours", sel["median"])
            emit(f"sweep_k{k}_eps{eps:g}_median_rmsep_diplslib", theirs[(k, eps)])
    claims.check("sweep_same_fits_as_diplslib", worst_small <= 1e-6,
                 f"median RMSEPs agree to {worst_small:.2g} at eps <= 20 (diPLSlib's erf-based calibration "
                 f"over-noises at larger eps: {worst_large:.2g} there)")
    if quick:
        claims.report("speedup_at_least_10", speedup >= 10, f"{speedup:.1f}x (checked in full mode only)")
    else:
        claims.check("speedup_at_least_10", speedup >= 10, f"{speedup:.1f}x")


def _synthetic(n: int, m: int, seed: int):
    rng = np.random.default_rng(seed)
    L = rng.standard_normal((n, 15))
    P = rng.standard_normal((15, m)) / np.sqrt(m)
    X = np.empty((n, m))
    block = 20_000
    for i in range(0, n, block):  # no n x m temporaries beyond X itself
        Xi = rng.standard_normal((min(block, n - i), m))
        Xi *= 0.1
        Xi += L[i:i + block] @ P
        Xi += 2.0
        X[i:i + block] = Xi
    y = L @ rng.standard_normal(15) + 0.1 * rng.standard_normal(n) + 5.0
    return X, y


def large_fit(claims: Claims, sizes, k: int, seed: int, repeats: int) -> None:
    """(b): EDPLS at eps = inf and in paper mode (eps = 1) against ikpls algorithm 1 and sklearn, CPU time with
    one BLAS thread (set for the whole run in ``main``), interleaved rounds in this process, best of
    ``repeats``. ikpls and sklearn fit the same model as EDPLS (centred, not scaled: ``scale_X=False,
    scale_Y=False`` / ``scale=False``); ikpls's default also divides X and y by their standard deviations,
    which is extra work on a different model. Claim: EDPLS <= 1.10 x ikpls at every size, in both modes."""
    from engine.methods.edpls.core import _products_by_blas

    # which kernel this machine's row passes run (measured once per process: engine/methods/edpls/core.py)
    emit("edpls_row_pass_products", "blas" if _products_by_blas() else "einsum")
    worst = max(_large_one(claims, n, m, k, seed, repeats) for n, m in sizes)
    emit("edpls_vs_ikpls_cpu", worst)


def _large_one(claims: Claims, n: int, m: int, k: int, seed: int, repeats: int) -> float:
    """One size of (b); returns the larger of the two CPU ratios against ikpls."""
    X, y = _synthetic(n, m, seed)
    tag = f"{n}x{m}"
    emit(f"large_data_gb_{tag}", X.nbytes / 1e9)
    fits = {
        "ours_inf": lambda: EDPLS(n_components=k, epsilon=np.inf).fit(X, y),
        "ours_paper": lambda: EDPLS(n_components=k, epsilon=1.0, delta=DELTA, random_state=seed).fit(X, y),
        "ikpls": lambda: IKPLS(algorithm=1, scale_X=False, scale_Y=False).fit(X, y, k),
        "sklearn": lambda: PLSRegression(n_components=k, scale=False).fit(X, y),
    }
    ours = EDPLS(n_components=k, epsilon=np.inf).fit(X, y)
    sk = PLSRegression(n_components=k, scale=False).fit(X, y)
    ik = IKPLS(algorithm=1, scale_X=False, scale_Y=False).fit(X, y, k)
    rel = float(np.abs(ours.coef_ - sk.coef_.ravel()).max() / np.abs(sk.coef_).max())
    rel_ik = float(np.abs(ours.coef_ - ik.B[k - 1].ravel()).max() / np.abs(ik.B[k - 1]).max())
    emit(f"large_nonprivate_coef_rel_diff_vs_sklearn_{tag}", rel)
    emit(f"large_nonprivate_coef_rel_diff_vs_ikpls_{tag}", rel_ik)
    claims.check(f"large_nonprivate_equals_sklearn_{tag}", rel <= 1e-10, f"{rel:.2g}")
    claims.check(f"large_nonprivate_same_model_as_ikpls_{tag}", rel_ik <= 1e-8, f"{rel_ik:.2g}")
    del ours, sk, ik
    for name, f in fits.items():  # peak allocation on top of X (tracemalloc: numpy reports its buffers)
        gc.collect()
        tracemalloc.start()
        f()
        emit(f"peak_memory_mb_{name}_{tag}", tracemalloc.get_traced_memory()[1] / 1e6)
        tracemalloc.stop()
    reps = repeats if n * m <= 20_000_000 else max(2, repeats // 2)
    best = cpu_best({"sum": lambda: X.sum(), **fits}, reps)
    for name in fits:
        emit(f"large_fit_cpu_s_{name}_{tag}", best[name])
        emit(f"large_fit_wall_s_{name}_{tag}", best[f"{name}_wall"])
        emit(f"large_fit_passes_{name}_{tag}", best[name] / best["sum"])  # in units of one numpy sum over X
    r_inf, r_paper = best["ours_inf"] / best["ikpls"], best["ours_paper"] / best["ikpls"]
    emit(f"edpls_vs_ikpls_cpu_{tag}", r_inf)
    emit(f"edpls_paper_vs_ikpls_cpu_{tag}", r_paper)
    emit(f"edpls_vs_sklearn_cpu_{tag}", best["ours_inf"] / best["sklearn"])
    emit_load(f"load_avg_after_{tag}")
    claims.check(f"edpls_within_1_10_of_ikpls_{tag}", max(r_inf, r_paper) <= 1.10,
                 f"eps=inf {r_inf:.3f}, paper {r_paper:.3f} (CPU time, one BLAS thread, best of {reps})")
    return max(r_inf, r_paper)


def strict_plain(claims: Claims, seed: int, repeats: int) -> None:
    """(e): plain strict ``EDPLS(mode="strict")`` (not the recommended ``StrictEDPLS``) on corn's 700 channels
    (80 rows, 5 components, eps = 1, public bounds), CPU time with one BLAS thread, best of ``repeats``, beside
    sklearn's PLSRegression on the same rows. Claim: under 0.5 s."""
    data = load_corn()
    if data is None:
        emit("strict_plain", "skipped (corn data absent)")
        return
    X, y, _ = data
    # Public bounds: the corn spectra are absorbances below 1 at 700 channels and moisture is a percentage.
    x_bound, y_bound = float(np.sqrt(X.shape[1])), 100.0
    fits = {
        "strict": lambda: EDPLS(n_components=5, epsilon=1.0, delta=DELTA, mode="strict", x_bound=x_bound,
                                y_bound=y_bound, random_state=seed).fit(X, y),
        "sklearn": lambda: PLSRegression(n_components=5, scale=False).fit(X, y),
    }
    best = cpu_best(fits, repeats)
    emit("strict_plain_fit_s_700", best["strict"])
    emit("strict_plain_fit_wall_s_700", best["strict_wall"])
    emit("strict_plain_sklearn_cpu_s_700", best["sklearn"])
    claims.check("strict_plain_fit_under_0_5_s_700", best["strict"] < 0.5,
                 f"{best['strict']:.3f} s CPU (one BLAS thread, best of {repeats})")


class _CpuWall:
    """Wall-clock and process CPU seconds of a block. With one BLAS thread the CPU time is the work done, robust
    to other processes on shared cores (wall-clock on this 2-core machine shared by several sessions varied 3x
    between runs); both are printed, the claims use the CPU ratio."""

    def __enter__(self):
        self.w0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.w0, time.process_time() - self.c0
        return False


def strict_fit(claims: Claims, n: int, m: int, k: int, seed: int, repeats: int, quick: bool = False) -> None:
    """(c): one strict fit against a bare dsyrk of X, same BLAS threads. The 1.3 claim is for the issue's size
    (checked in full mode); at --quick's smaller n the fixed d x d work (the PSD projection's eigendecomposition,
    about 0.2 s at d = 1001) weighs twice as much, so it is reported there."""
    X, y = _synthetic(n, m, seed)
    # Public bounds from the generator's design (not read off the rows): E||x||^2 = m (4 + 0.01) + 15.
    x_bound, y_bound = float(np.sqrt(4.01 * m + 15.0)), 5.0 + 4.0 * float(np.sqrt(15.0))
    emit("strict_n", n)
    emit("strict_m", m)
    emit("strict_size", f"{n}x{m}{' (quick: smaller than the full 100000x1000)' if n < 100_000 else ''}")

    def fit():
        return EDPLS(n_components=k, epsilon=1.0, delta=DELTA, mode="strict", x_bound=x_bound, y_bound=y_bound,
                     random_state=seed).fit(X, y)

    def syrk():
        return dsyrk(1.0, X.T, trans=0, lower=0)

    times = {"fit": [], "syrk": []}
    walls = {"fit": [], "syrk": []}
    model = None
    with one_blas_thread():
        emit("strict_blas_threads", ",".join(str(i["num_threads"]) for i in threadpool_info()
                                             if i["user_api"] == "blas"))
        for r in range(repeats):
            for name, f in (("syrk", syrk), ("fit", fit)):
                gc.collect()
                if r == 0 and name == "fit":
                    tracemalloc.start()
                with _CpuWall() as t:
                    out = f()
                if r == 0 and name == "fit":
                    emit("strict_fit_peak_memory_mb", tracemalloc.get_traced_memory()[1] / 1e6)
                    peak = tracemalloc.get_traced_memory()[1]
                    tracemalloc.stop()
                    model = out
                times[name].append(t.cpu)
                walls[name].append(t.wall)
                del out
    best = {name: min(v) for name, v in times.items()}
    best_wall = {name: min(v) for name, v in walls.items()}
    emit("strict_fit_cpu_seconds", best["fit"])
    emit("strict_syrk_cpu_seconds", best["syrk"])
    emit("strict_fit_seconds", best_wall["fit"])
    emit("strict_syrk_seconds", best_wall["syrk"])
    emit("strict_vs_syrk_wall", best_wall["fit"] / best_wall["syrk"])
    ratio = best["fit"] / best["syrk"]
    emit("strict_vs_syrk", ratio)
    emit("strict_rows_clipped_fraction", model.n_clipped_ / n)
    detail = f"{ratio:.3f} ({n}x{m}, CPU time, best of {repeats})"
    if quick:
        claims.report("strict_within_1_3_of_syrk", ratio <= 1.3, detail + " (checked in full mode, 100000x1000)")
    else:
        claims.check("strict_within_1_3_of_syrk", ratio <= 1.3, detail)
    claims.check("strict_fit_no_full_size_temporary", peak < 0.25 * X.nbytes,
                 f"{peak / 1e6:.0f} MB on top of X ({X.nbytes / 1e6:.0f} MB)")

    sub = slice(0, min(n, 20_000))  # the old path (n x d Z, then Z'Z) on rows that fit comfortably
    prep = EDPLS(n_components=k, epsilon=1.0, delta=DELTA, mode="strict", x_bound=x_bound,
                 y_bound=y_bound)._prepare(X[sub], y[sub])
    rows = scale_rows([X[sub], y[sub, None]], [x_bound, y_bound], private_centring=True)
    G_old = MomentsRelease.gram(rows.Z)
    rel = float(np.abs(prep.strict.gram - G_old).max() / np.abs(G_old).max())
    emit("strict_gram_max_rel_diff_vs_scale_rows", rel)
    claims.check("strict_gram_equals_scale_rows_path", rel <= 1e-12, f"{rel:.2g}")


def single_fit(claims: Claims, seed: int, rounds: int, per_round: int) -> None:
    """(d): one paper-mode fit on corn, ours (``EDPLS.fit``: validation, noise and ledger included) against
    diPLSlib's edpls function on the centred rows, in interleaved rounds; one BLAS thread for both.

    Checked: ours with its defaults (noise std sigma, max |f|), the fit a user runs. Reported: ours with the
    authors' conventions (sigma^2, signed max), the identical fit (same coefficients from the same Generator
    state), whose ledger also pays an exact inverse calibration (the epsilon actually spent by sigma^2 noise)
    per release."""
    data = load_corn()
    if data is None:
        emit("single_fit", "skipped (corn data absent)")
        return
    X, y, _ = data
    idx = np.random.default_rng(seed).permutation(80)[:56]
    X, y = np.ascontiguousarray(X[idx]), np.ascontiguousarray(y[idx])
    k, eps = 5, 1.0

    def ours(g):
        return EDPLS(n_components=k, epsilon=eps, delta=DELTA, random_state=g).fit(X, y)

    def ours_authors(g):
        return EDPLS(n_components=k, epsilon=eps, delta=DELTA, noise_std="sigma_squared", ymax="signed",
                     random_state=g).fit(X, y)

    def theirs(g):
        xm, ym = X.mean(0), y.mean()
        return dipls_edpls(X - xm, (y - ym)[:, None], k, eps, DELTA, rng=g)

    a = ours_authors(np.random.default_rng(seed)).coef_
    b = theirs(np.random.default_rng(seed))[0].ravel()
    rel = float(np.abs(a - b).max() / np.abs(b).max())
    emit("single_fit_coef_rel_diff_vs_diplslib", rel)
    fits = {"ours": ours, "ours_authors": ours_authors, "theirs": theirs}
    cpu = {name: [] for name in fits}
    wall = {name: [] for name in fits}
    g = np.random.default_rng(seed + 1)
    with one_blas_thread():
        for _ in range(rounds):
            for name, f in fits.items():
                for _ in range(per_round):
                    with _CpuWall() as t:
                        f(g)
                    cpu[name].append(t.cpu)
                    wall[name].append(t.wall)
    best = {name: min(v) for name, v in cpu.items()}
    for name, label in (("ours", "ours"), ("ours_authors", "ours_authors_conventions"), ("theirs", "diplslib")):
        emit(f"single_fit_cpu_ms_{label}", 1e3 * best[name])
        emit(f"single_fit_ms_{label}", 1e3 * min(wall[name]))
        emit(f"single_fit_median_ms_{label}", 1e3 * float(np.median(wall[name])))
    ratio = best["theirs"] / best["ours"]
    emit("single_fit_vs_diplslib", ratio)
    emit("single_fit_vs_diplslib_wall", min(wall["theirs"]) / min(wall["ours"]))
    authors = best["theirs"] / best["ours_authors"]
    emit("single_fit_vs_diplslib_authors_conventions", authors)
    claims.check("single_fit_same_as_diplslib", rel <= 1e-6, f"{rel:.2g}")
    claims.check("single_fit_at_least_2x_diplslib", ratio >= 2.0,
                 f"{ratio:.2f}x (CPU time, best of {len(cpu['ours'])}, default EDPLS)")
    claims.report("single_fit_authors_conventions_at_least_2x_diplslib", authors >= 2.0,
                  f"{authors:.2f}x (sigma^2 noise: the ledger inverts the calibration for each of the 4k releases)")


def main(argv=None) -> int:
    args = parse_args(__doc__, argv)
    claims = Claims()
    emit("mode", "quick" if args.quick else "full")
    emit("seed", args.seed)
    one_blas_thread_for_the_run()  # every module with a BLAS is imported above
    strict_plain(claims, args.seed, 5)
    single_fit(claims, args.seed, 5 if args.quick else 10, 100)
    sweep(claims, 20 if args.quick else 100, args.seed, args.quick)
    if args.quick:
        strict_fit(claims, 50_000, 1_000, 10, args.seed, repeats=3, quick=True)
        large_fit(claims, [(20_000, 500)], 10, args.seed, repeats=7)
    else:
        strict_fit(claims, 100_000, 1_000, 10, args.seed, repeats=3)
        large_fit(claims, [(20_000, 500), (200_000, 1_000)], 10, args.seed, repeats=7)
    emit_load("load_avg_end")
    return claims.exit_code()


if __name__ == "__main__":
    sys.exit(main())
