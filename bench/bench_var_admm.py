"""Benchmark the collaborative VAR's ADMM against statsmodels' centralised fit.

One year of hourly synthetic solar output (make_solar, spec 8.1) for 10 and 50 sites, VAR(2) with an
intercept (consecutive lags, so statsmodels fits the same model): wall time of ``VAR(Y).fit(2)`` and
of the features-split ADMM (47) until Boyd's stopping rule (tol 1e-4), its iterations, and the
coefficient gap to statsmodels. Then the per-iteration cost for a growing number of sites (a fixed
30 iterations) and its growth exponent (theory: T n^2 p per iteration, each owner multiplies its
T x p block by an n-column message), and the values exchanged per iteration ((n + 1) T n).

    python bench/bench_var_admm.py [--quick] [--seed N]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from bench._common import Claims, Timer, emit, parse_args  # noqa: E402
from engine.data.samples import make_solar  # noqa: E402
from engine.methods.var_admm import CollaborativeVAR  # noqa: E402

LAGS = 2


def solar_year(n_sites: int, end: str, seed: int) -> np.ndarray:
    y = make_solar(n_sites=n_sites, end=end, random_state=seed).y.to_numpy()
    return y


def main(argv=None) -> int:
    from statsmodels.tsa.api import VAR

    args = parse_args(__doc__, argv)
    claims = Claims()
    seed = args.seed + 1
    end = "2011-04-30 23:00" if args.quick else "2012-01-31 23:00"  # 3 months or 1 year from 2011-02-01
    sizes = (10, 20) if args.quick else (10, 50)
    rhos = (0.5, 1.0) if args.quick else (0.5, 1.0, 2.0)
    emit("mode", "quick" if args.quick else "full")
    emit("lags", LAGS)
    all_ok = True
    for n in sizes:
        Y = solar_year(n, end, seed)
        emit(f"rows_{n}_sites", Y.shape[0])
        with Timer() as t_sm:
            ref = VAR(Y).fit(LAGS)
        central = CollaborativeVAR(LAGS).fit(Y)
        central_gap = float(np.max(np.abs(central.coefs_ - ref.coefs)))
        emit(f"statsmodels_seconds_{n}_sites", t_sm.seconds)
        emit(f"central_vs_statsmodels_max_gap_{n}_sites", central_gap)
        best = None
        for rho in rhos:
            with Timer() as t_admm:
                admm = CollaborativeVAR(LAGS, solver="admm", rho=rho, max_iter=6000, store_path=False,
                                        random_state=args.seed).fit(Y)
            gap = float(np.max(np.abs(admm.coefs_ - ref.coefs)) / np.max(np.abs(ref.coefs)))
            emit(f"admm_rho_{rho:g}_seconds_{n}_sites", t_admm.seconds)
            emit(f"admm_rho_{rho:g}_iterations_{n}_sites", admm.n_iter_)
            emit(f"admm_rho_{rho:g}_converged_{n}_sites", admm.converged_)
            emit(f"admm_rho_{rho:g}_coef_rel_gap_{n}_sites", gap)
            if admm.converged_ and (best is None or t_admm.seconds < best[1]):
                best = (rho, t_admm.seconds, admm.n_iter_, gap)
        if best is None:
            all_ok = False
            emit(f"admm_vs_statsmodels_{n}_sites", "no_convergence")
            continue
        emit(f"admm_best_rho_{n}_sites", best[0])
        emit(f"admm_seconds_{n}_sites", best[1])
        emit(f"admm_iterations_{n}_sites", best[2])
        emit(f"admm_vs_statsmodels_{n}_sites", best[1] / t_sm.seconds)
        all_ok &= central_gap < 1e-8 and best[3] < 1e-4
    claims.check("admm_converges_to_statsmodels", all_ok,
                 "Boyd's rule (tol 1e-4) met at the best rho, coefficients within 1e-4 relative of statsmodels")

    # per-iteration cost against the number of sites (fixed 30 iterations, same T)
    grid = (5, 10, 20) if args.quick else (5, 10, 20, 50)
    per_iter = []
    for n in grid:
        Y = solar_year(n, end, seed)
        CollaborativeVAR(LAGS, solver="admm", tol=None, max_iter=2, store_path=False).fit(Y)  # warm-up
        with Timer() as t:
            m = CollaborativeVAR(LAGS, solver="admm", tol=None, max_iter=30, store_path=False).fit(Y)
        ms = 1000.0 * t.seconds / m.n_iter_
        per_iter.append(ms)
        emit(f"per_iteration_ms_{n}_sites", ms)
        emit(f"values_sent_per_iteration_{n}_sites", (n + 1) * m.n_obs_ * n)
    slope = float(np.polyfit(np.log(grid), np.log(per_iter), 1)[0])
    emit("per_iteration_cost_growth_exponent", slope)
    emit("per_iteration_cost_growth_theory", "2 (T n^2 p flops; values sent (n + 1) T n)")
    claims.report("per_iteration_cost_grows_faster_than_linear", slope > 1.0, f"exponent {slope:.2f}")
    return claims.exit_code()


if __name__ == "__main__":
    sys.exit(main())
