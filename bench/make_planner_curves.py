"""The planner's measured curves (issue #31): median RMSEP / sigma_y of the recommended strict edPLS by n and epsilon.

``engine.methods.edpls.planner`` states, before any fit and from public information only, what private accuracy to
expect for a data set's shape, the chosen (epsilon, delta) and what the user declares public. It reads the table
this script measures and writes to ``engine/methods/edpls/planner_curves.py``:

    PYTHONPATH=$PWD python bench/make_planner_curves.py --write      # the full table (about 4 minutes of one core)
    PYTHONPATH=$PWD python bench/make_planner_curves.py --quick      # a smaller grid, printed only

Data: the NIR generator (``make_nir_spectra``, 350 channels, response moisture, sigma_y about 0.4 % w/w); a fixed
test draw of 2000 rows; per replicate one fresh training pool of the largest n, the smaller n its first rows.
Estimator: ``make_strict_edpls(epsilon, 1e-5, ...)`` with the measured defaults, in four settings of the public
information: y range declared ("wide": [0, 100] % w/w, the physical range of a percentage, about 250 sigma_y wide)
or not (a private range from a share of the budget), and public spectra declared (500 unlabelled spectra of the
same generator, another seed) or not. Score: RMSEP / sigma_y of the test responses; per cell the median and the
quartiles over the replicates (8) (the planner's test takes its tolerance from them).

Printed figures (``key=value``): ``rows_to_half_sd_eps1_public`` and ``rows_to_half_sd_eps1_none`` (the planner's
answer at epsilon = 1 with and without public spectra, wide range), the load average and the run time. Checked
claim: with public spectra and a wide range, some n on the grid reaches RMSEP / sigma_y <= 0.5 at epsilon = 1.
"""
from __future__ import annotations

import math
import pprint
import sys
import time
from pathlib import Path

import numpy as np

from _common import ROOT, Claims, emit, emit_load, parse_args
from engine.data.sample_generators import make_nir_spectra
from engine.methods.edpls import make_strict_edpls
from engine.threads import one_blas_thread

N_GRID = (30, 100, 300, 1000, 3000, 10000)
EPS_GRID = (0.5, 1.0, 2.0, 5.0, 10.0)
DELTA = 1e-5
WIDE_RANGE = (0.0, 100.0)
N_PUBLIC = 500
REPLICATES = 8
OUT = ROOT / "engine" / "methods" / "edpls" / "planner_curves.py"

HEADER = '''"""Measured curves behind ``engine.methods.edpls.planner`` (generated: do not edit by hand).

Made by ``{command}``
({replicates} replicates per cell, {seconds:.0f} s, load average {load}).
Median and quartiles of RMSEP / sigma_y of ``make_strict_edpls`` on the NIR generator (350 channels, moisture),
keyed by (y_range_declared, public_spectra) then n then epsilon: see ``bench/make_planner_curves.py``.
"""

'''


def settings():
    for y_declared in (True, False):
        for public in (True, False):
            yield y_declared, public


def measure(n_grid, eps_grid, replicates, seed):
    """{(y_declared, public): {n: {eps: (median, q25, q75)}}} of RMSEP / sigma_y."""
    test = make_nir_spectra(2000, random_state=10_000 + seed)
    X_public = make_nir_spectra(N_PUBLIC, random_state=20_000 + seed).X
    y_te, sd = test.Y[:, 0], float(test.Y[:, 0].std())
    ratios = {s: {n: {e: [] for e in eps_grid} for n in n_grid} for s in settings()}
    for r in range(replicates):
        pool = make_nir_spectra(max(n_grid), random_state=30_000 + 100 * seed + r)
        for n in n_grid:
            X, y = pool.X[:n], pool.Y[:n, 0]
            for (y_declared, public), cells in ratios.items():
                for e in eps_grid:
                    fit = make_strict_edpls(e, DELTA, y_range=WIDE_RANGE if y_declared else None,
                                            X_public=X_public if public else None).fit(X, y)
                    cells[n][e].append(float(np.sqrt(np.mean((fit.predict(test.X) - y_te) ** 2))) / sd)
        print(f"replicate {r + 1}/{replicates} done", file=sys.stderr, flush=True)
    return {s: {n: {e: tuple(round(float(v), 4) for v in (np.median(x), np.quantile(x, 0.25), np.quantile(x, 0.75)))
                    for e, x in by_e.items()} for n, by_e in by_n.items()} for s, by_n in ratios.items()}


def main(argv=None) -> int:
    args = parse_args(__doc__, argv, extra=lambda ap: ap.add_argument(
        "--write", action="store_true", help="write engine/methods/edpls/planner_curves.py"))
    n_grid = (100, 1000, 3000) if args.quick else N_GRID
    eps_grid = (1.0,) if args.quick else EPS_GRID
    replicates = 2 if args.quick else REPLICATES
    emit_load("load_avg_start")
    t0 = time.perf_counter()
    with one_blas_thread():
        curves = measure(n_grid, eps_grid, replicates, args.seed)
    seconds = time.perf_counter() - t0
    from engine.methods.edpls.planner import rows_to_reach

    claims = Claims()
    for public in (True, False):
        rows = rows_to_reach(curves[(True, public)], 1.0, 0.5)
        emit(f"rows_to_half_sd_eps1_{'public' if public else 'none'}", math.inf if rows is None else rows)
    best = min(curves[(True, True)][n][1.0][0] for n in n_grid)
    claims.check("public_spectra_reach_half_sd_eps1", best <= 0.5, f"best median ratio {best:.3g}")
    emit("seconds", seconds)
    emit_load("load_avg_end")
    if args.write and not args.quick:
        import os

        load = " ".join(f"{v:.2f}" for v in os.getloadavg())
        command = "PYTHONPATH=$PWD python bench/make_planner_curves.py --write" + (
            f" --seed {args.seed}" if args.seed else "")
        text = (HEADER.format(command=command, replicates=replicates, seconds=seconds, load=load)
                + f"N_GRID = {n_grid!r}\nEPS_GRID = {eps_grid!r}\nDELTA = {DELTA!r}\nWIDE_RANGE = {WIDE_RANGE!r}\n"
                + f"N_PUBLIC = {N_PUBLIC!r}\nN_CHANNELS = 350\nREPLICATES = {replicates!r}\n\n"
                + "#: {(y_range_declared, public_spectra): {n: {epsilon: (median, q25, q75)}}} of RMSEP / sigma_y.\n"
                + "CURVES = " + pprint.pformat(curves, width=118, sort_dicts=True) + "\n")
        Path(OUT).write_text(text, encoding="utf-8")
        emit("written", OUT.relative_to(ROOT))
    return claims.exit_code()


if __name__ == "__main__":
    sys.exit(main())
