"""Reproduce DP-PCR's claims (issue #17) on the NIR sample set and on corn (when it is next to the checkout).

Per data set (response: moisture; a random 70/30 split from ``--seed``; k = 5 components; public bounds as the
edPLS page declares them: x_bound = sqrt(m), y_bound = the power of ten above the public set's |y|; private
centring), printed as ``<data>_key=value``:

- rmsep_pcr_eps_{1,10,inf}, rmsep_pls_eps_{1,10,inf}: median test RMSEP over replicate fits of DP-PCR and of
  strict edPLS (same split, bounds and centring: ``engine.methods.dp_pcr.rmsep_vs_epsilon``), with _mean;
- ratio_pcr_over_pls_eps_*: DP-PCR's median over edPLS's; ratio_pcr_eps_*_over_inf: the price of privacy.

Checked claims (exit 1 when one fails):
1. at eps = inf, DP-PCR's predictions equal scikit-learn's ``make_pipeline(PCA(k), LinearRegression())`` to
   1e-8 (bounds that do not clip; they are widened x10 when the page's defaults clip, and the script says so);
2. the RMSEP at eps = inf is at most the mean RMSEP at every finite eps, for DP-PCR and for edPLS.
Reported (never failing): whether DP-PCR beats edPLS at each eps.

Usage: python bench/reproduce_dp_pcr.py [--quick] [--seed N]   (--quick: well under two minutes)
"""
from __future__ import annotations

import sys

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline

from _common import ROOT, Claims, Timer, emit, load_corn, parse_args
from engine.methods.dp_pcr import DPPCR, METHOD_LABELS, rmsep_vs_epsilon
from engine.methods.edpls.pipeline import default_x_bound, sample_y_bound

EPSILONS = (1.0, 10.0, np.inf)
K = 5
DELTA = 1e-5


def nir():
    df = pd.read_csv(ROOT / "sample_data" / "nir_spectra.csv")
    return df.drop(columns=["moisture", "oil", "protein", "starch"]).to_numpy(float), df["moisture"].to_numpy(float)


def _eps_key(eps: float) -> str:
    return "inf" if np.isinf(eps) else f"{eps:g}"


def check_oracle(claims: Claims, name: str, X, y, tr, te, x_bound: float, y_bound: float) -> None:
    """Claim 1: no noise, no clipping -> scikit-learn's PCA + LinearRegression to 1e-8."""
    model = DPPCR(K, epsilon=np.inf, x_bound=x_bound, y_bound=y_bound).fit(X[tr], y[tr])
    if model.n_clipped_:
        emit(f"{name}_oracle_bounds", "widened x10 (the page's defaults clip some rows)")
        model = DPPCR(K, epsilon=np.inf, x_bound=10 * x_bound, y_bound=10 * y_bound).fit(X[tr], y[tr])
    ref = make_pipeline(PCA(K), LinearRegression()).fit(X[tr], y[tr])
    diff = float(np.abs(model.predict(X[te]) - ref.predict(X[te])).max())
    emit(f"{name}_eps_inf_max_abs_pred_diff_vs_sklearn", diff)
    claims.check(f"{name}_eps_inf_equals_sklearn_pca_lr", diff <= 1e-8 and model.n_clipped_ == 0, f"{diff:.3g}")


def sweep(claims: Claims, name: str, X, y, reps: int, rng) -> None:
    idx = rng.permutation(len(y))
    n_train = int(round(0.7 * len(y)))
    tr, te = idx[:n_train], idx[n_train:]
    x_bound, y_bound = default_x_bound(X.shape[1]), sample_y_bound(y)  # a public sample set / published data
    emit(f"{name}_n_train", len(tr))
    emit(f"{name}_x_bound", x_bound)
    emit(f"{name}_y_bound", y_bound)
    check_oracle(claims, name, X, y, tr, te, x_bound, y_bound)
    with Timer() as tm:
        df = rmsep_vs_epsilon(X[tr], y[tr], X[te], y[te], EPSILONS, K, reps, random_state=rng, x_bound=x_bound,
                              y_bound=y_bound, delta=DELTA, calibration="auto")
    emit(f"{name}_sweep_seconds", tm.seconds)
    emit(f"{name}_replicates", reps)
    med = {}
    for short, label in (("pcr", METHOD_LABELS["pcr"]), ("pls", METHOD_LABELS["pls"])):
        part = df[df["method"] == label].set_index("epsilon")
        for eps in EPSILONS:
            med[(short, eps)] = float(part.loc[eps, "median"])
            emit(f"{name}_rmsep_{short}_eps_{_eps_key(eps)}", med[(short, eps)])
            emit(f"{name}_rmsep_{short}_eps_{_eps_key(eps)}_mean", part.loc[eps, "mean"])
        finite = [float(part.loc[e, "mean"]) for e in EPSILONS if np.isfinite(e)]
        at_inf = float(part.loc[np.inf, "mean"])
        claims.check(f"{name}_{short}_rmsep_inf_le_finite_mean", all(at_inf <= v for v in finite),
                     f"inf {at_inf:.4g} vs finite means {', '.join(f'{v:.4g}' for v in finite)}")
    for eps in EPSILONS:
        ratio = med[("pcr", eps)] / med[("pls", eps)]
        emit(f"{name}_ratio_pcr_over_pls_eps_{_eps_key(eps)}", ratio)
        if np.isfinite(eps):
            emit(f"{name}_ratio_pcr_eps_{_eps_key(eps)}_over_inf", med[("pcr", eps)] / med[("pcr", np.inf)])
            claims.report(f"{name}_pcr_beats_pls_eps_{_eps_key(eps)}", ratio < 1,
                          f"median RMSEP DP-PCR / edPLS = {ratio:.3g}")


def main(argv=None) -> int:
    args = parse_args(__doc__, argv)
    claims = Claims()
    emit("mode", "quick" if args.quick else "full")
    emit("seed", args.seed)
    rng = np.random.default_rng(args.seed)
    sweep(claims, "nir", *nir(), 10 if args.quick else 50, rng)
    corn = load_corn()
    if corn is None:
        emit("corn_data", "absent (skipped)")
    else:
        sweep(claims, "corn", corn[0], corn[1], 5 if args.quick else 30, rng)
    return claims.exit_code()


if __name__ == "__main__":
    sys.exit(main())
