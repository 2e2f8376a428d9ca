"""Reproduce the edPLS paper's privacy attack (Figs. 1-2; spec edpls.md Sec. 5, 5.3, checklist item 4).

The paper's simulation (two parties, 100 rows each, pdf band heights, no noise), party 1
attacking, 3-LV global models, delta = 0.01, fresh data and noise in every run. For plain PLS
and each epsilon in {100, 10, 1}: mean |cos| and hit rate of the attack on the shared weights W
and loadings P, for edPLS paper mode with the authors' noise std sigma^2 (the reference mode the
paper's figures were made with), paper mode with the correct std sigma, and strict mode. Each
line of the table sits beside the spec's Sec. 5.3 numbers and the paper's claim.

Exits 1 when checklist item 4 (reference mode) fails: plain PLS hit rate 1.0 for W and P;
eps = 100: W >= 0.8, P >= 0.9; eps = 10: W <= 0.3, P >= 0.9; eps = 1: both <= 0.3.
The per-run hit probability of W at eps = 10 is about 0.21 (2000 runs), close to the 0.3
threshold, and it varies between simulated data sets (sd about 0.17). Runs come in blocks of
``--noise-per-draw`` (4) sharing one data set, whose noise is drawn in one batch. The default
run counts (600 quick = 150 data sets, 2000 full = 500) keep the sd of that hit rate at 0.022 and
0.012, 4.4 and 8 sd below the threshold, so the check holds for any data seed and noise draw; at
20 runs it would fail about one time in ten (``--reps`` below 600 prints a warning). Strict mode has no spec
or paper numbers; it is printed for comparison.

Noise (issue #15): ``--seed`` seeds the simulated data only; the privacy noise is fresh OS entropy
unless ``--noise-seed`` fixes it (then every private row's ledger says "not proven: the noise seed
is known"). Each line prints the guarantee status of its fits' own ledgers.

Usage: python bench/reproduce_pls_attack.py [--quick] [--seed N] [--noise-seed M] [--reps R] [--noise-per-draw B]
"""
from __future__ import annotations

import argparse
import math
import sys
import time

from threadpoolctl import threadpool_limits

from engine.attacks.pls_subspace import (
    SETTINGS,
    SimulationScenario,
    attack_success_sweep,
    summarise_sweep,
    verdict,
)

EPSILONS = (100.0, 10.0, 1.0)
REF = "paper_sigma_squared"

#: spec edpls.md Sec. 5.3 (20 reps, party 1 attacking, pdf heights): (W cos, W hit, P cos, P hit)
SPEC_53 = {
    ("plain", math.inf): (1.00, 1.00, 1.00, 1.00),
    (REF, 100.0): (0.85, 0.95, 1.00, 1.00),
    (REF, 10.0): (0.14, 0.10, 0.84, 1.00),
    (REF, 1.0): (0.08, 0.00, 0.09, 0.10),
    ("paper_sigma", 100.0): (0.17, 0.20, 0.98, 1.00),
    ("paper_sigma", 10.0): (0.10, 0.20, 0.68, 0.95),
    ("paper_sigma", 1.0): (0.08, 0.00, 0.21, 0.15),
}

#: What the paper says (Sec. 5.1, Figs. 1-2), for the reference mode.
PAPER_CLAIM = {
    ("plain", math.inf): "both parties recover the band (Fig. 1)",
    (REF, 100.0): "party 1 recovers the band from W and from P",
    (REF, 10.0): "W attack hampered, P attack still succeeds",
    (REF, 1.0): "both attacks blunted",
}

SHORT = {"plain": "plain", REF: "ref_sigma2", "paper_sigma": "paper_sigma", "strict": "strict"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs (well under two minutes)")
    ap.add_argument("--seed", type=int, default=0, help="simulated data (not a release)")
    ap.add_argument("--noise-seed", type=int, default=None,
                    help="fix the privacy noise (default: fresh; a fixed noise seed is not proven)")
    ap.add_argument("--reps", type=int, default=None, help="runs per setting and epsilon (>= 20)")
    ap.add_argument("--noise-per-draw", type=int, default=4,
                    help="runs sharing one simulated data set (1 = fresh data every run)")
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS threads (the matrices are small: more threads only contend)")
    args = ap.parse_args(argv)
    reps = args.reps if args.reps is not None else (600 if args.quick else 2000)
    if reps < 20:
        ap.error("--reps must be >= 20 (spec Sec. 5.2)")
    if reps < 600:
        print(f"warning: {reps} runs; the eps = 10 weights check (per-run hit probability about 0.21, "
              "threshold 0.3) may fail for some draws; the default (>= 600) holds for any draw", file=sys.stderr)

    t0 = time.perf_counter()
    with threadpool_limits(limits=args.threads):
        sweep = attack_success_sweep(
            SimulationScenario(n_test_per_party=100), EPSILONS,
            settings=("plain", REF, "paper_sigma", "strict"), n_replicates=reps, delta=0.01,
            n_components=3, lv=3, random_state=args.noise_seed, data_random_state=args.seed,
            noise_per_draw=args.noise_per_draw,
        )
    seconds = time.perf_counter() - t0
    summary = summarise_sweep(sweep)
    s = summary.set_index(["setting", "epsilon", "component"])

    print(f"runs={reps}")
    print(f"data_sets={-(-reps // max(1, args.noise_per_draw))}")
    print(f"data_seed={args.seed}")
    print(f"noise={'fresh' if args.noise_seed is None else 'fixed (not proven)'}")
    print("delta=0.01")
    print(f"seconds={seconds:.1f}")
    header = (f"{'setting':<46} {'eps':>5} | {'W cos':>5} {'W hit':>5} {'P cos':>5} {'P hit':>5} | "
              f"{'status':<10} | {'spec 5.3 W cos/hit':>18} {'P cos/hit':>10} | paper")
    print(header)
    print("-" * len(header))
    for setting in ("plain", REF, "paper_sigma", "strict"):
        grid = [math.inf] if setting == "plain" else list(EPSILONS)
        for eps in grid:
            w, p = s.loc[(setting, eps, "W")], s.loc[(setting, eps, "P")]
            spec = SPEC_53.get((setting, eps))
            spec_txt = (f"{spec[0]:.2f}/{spec[1]:.2f}".rjust(18) + " " + f"{spec[2]:.2f}/{spec[3]:.2f}".rjust(10)
                        if spec else f"{'-':>18} {'-':>10}")
            print(f"{SETTINGS[setting]:<46} {eps:>5g} | {w.cosine_mean:5.2f} {w.hit_rate:5.2f} "
                  f"{p.cosine_mean:5.2f} {p.hit_rate:5.2f} | {p.status:<10} | {spec_txt} | "
                  f"{PAPER_CLAIM.get((setting, eps), '')}")
    for (setting, eps, comp), row in s.iterrows():
        key = f"{SHORT[setting]}.eps{eps:g}.{comp}"
        print(f"{key}.hit={row.hit_rate:.3f}")
        print(f"{key}.cos={row.cosine_mean:.3f}")
        print(f"{key}.corr={row.correlation_mean:.3f}")
        if comp == "P":
            print(f"{SHORT[setting]}.eps{eps:g}.rmsep_median={row.rmsep_median:.4g}")
            print(f"{SHORT[setting]}.eps{eps:g}.status={row.status}")

    def hit(setting, eps, comp):
        return float(s.loc[(setting, eps, comp), "hit_rate"])

    checks = {
        "plain_W_hit_eq_1": hit("plain", math.inf, "W") == 1.0,
        "plain_P_hit_eq_1": hit("plain", math.inf, "P") == 1.0,
        "ref_eps100_W_hit_ge_0.8": hit(REF, 100.0, "W") >= 0.8,
        "ref_eps100_P_hit_ge_0.9": hit(REF, 100.0, "P") >= 0.9,
        "ref_eps10_W_hit_le_0.3": hit(REF, 10.0, "W") <= 0.3,
        "ref_eps10_P_hit_ge_0.9": hit(REF, 10.0, "P") >= 0.9,
        "ref_eps1_W_hit_le_0.3": hit(REF, 1.0, "W") <= 0.3,
        "ref_eps1_P_hit_le_0.3": hit(REF, 1.0, "P") <= 0.3,
    }
    for name, ok in checks.items():
        print(f"check.{name}={'PASS' if ok else 'FAIL'}")
    print(f"verdict.ref={verdict(summary, REF, 1.0)}")
    print(f"verdict.strict={verdict(summary, 'strict', 1.0)}")
    failed = [k for k, ok in checks.items() if not ok]
    print(f"checklist_item_4={'PASS' if not failed else 'FAIL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
