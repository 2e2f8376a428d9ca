"""Empirical privacy audit of every mechanism and method (issue #11).

Runs every audit of ``engine.audit_catalog.audit_cases()`` and prints one line per method and
mode, e.g. ``audit edpls_strict claimed_eps=1 eps_lb=0.41 trials=1000000 ...``, then a summary.
Exits 1 if a strict-mode lower bound exceeds its claim or a planted bug is not caught. Paper-mode
audits are reported, not checked (their epsilon is stated, not proven).

The bounds hold with 99% confidence (Clopper-Pearson, alpha = 0.01) so that a correct release is
flagged by chance for essentially no seed; planted bugs get more trials to be caught at that level. The
planted bugs ("noise_halved", "sensitivity_halved": ``engine.privacy.audit.planted_bug("noise_scale", 0.5)``
and ``("sensitivity_scale", 0.5)``) are planted in production, where every release draws its noise, and every
case draws through the shipped release, so a caught bug is a bug the shipped code would have.

Usage: python bench/audit_all.py [--quick] [--seed N]
"""
from __future__ import annotations

import os
import sys
import time

from _common import fmt, parse_args  # bench/ is the script's own directory
from engine.audit_catalog import audit_cases
from engine.privacy.audit import AUDIT_CONFIDENCE, run_case

ALPHA = 1 - AUDIT_CONFIDENCE


def main(argv=None) -> int:
    args = parse_args(__doc__, argv)
    trials = 200_000 if args.quick else 1_000_000
    bug_trials = 2_000_000 if args.quick else 3_000_000
    failures = []
    print("load_average=" + ",".join(f"{v:.2f}" for v in os.getloadavg()))
    start = time.perf_counter()
    for i, case in enumerate(audit_cases(epsilon=1.0, delta=1e-5)):
        n = bug_trials if case.bug else trials
        t0 = time.perf_counter()
        r = run_case(case, n, args.seed + 1000 * i, alpha=ALPHA)
        verdict = {"holds": "below_claim" if r["ok"] else "VIOLATED",
                   "violated": "caught" if r["ok"] else "NOT_CAUGHT",
                   "report": "no_claim" if r["claimed_eps"] == float("inf") else
                   "exceeds_stated_eps" if r["exceeds_claim"] else "below_stated_eps"}[case.expect]
        print(f"audit {case.name} method={case.method} mode={case.mode} bug={case.bug or 'none'} "
              f"claimed_eps={fmt(r['claimed_eps'])} delta={fmt(r['delta'])} eps_lb={r['eps_lb']:.3f} "
              f"eps_point={fmt(round(r['eps_point'], 3))} trials={r['trials']} confidence={1 - ALPHA:g} "
              f"statistic={r['statistic']} verdict={verdict} seconds={time.perf_counter() - t0:.1f}", flush=True)
        if not r["ok"]:
            failures.append(case.name)
    print(f"audit_total_seconds={time.perf_counter() - start:.1f}")
    print(f"audit_failures={len(failures)}" + (f" failed={','.join(failures)}" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
