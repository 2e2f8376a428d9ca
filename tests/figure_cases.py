"""Small inputs for every public figure builder in ui/figures/ (used by tests/test_figures_layout.py).

``CASES``: name of the builder -> zero-argument callable returning the figure, with the trace names and
labels the pages pass (their length is what wraps a legend onto several rows).
"""
from __future__ import annotations

import importlib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def figure_modules() -> list:
    """The modules of figure builders: each page's ``ui/<page>/figures.py`` and the shared ``ui/figures/chemometrics``
    (``layout`` is the house style, ``report`` the run report's own figures)."""
    names = sorted(f"ui.{p.parent.name}.figures" for p in (ROOT / "ui").glob("*/figures.py"))
    return [importlib.import_module(n) for n in [*names, "ui.figures.chemometrics"]]


#: Every public name of the figure modules and of the house layout, as one namespace (``F.edpls_coef_figure``).
F = SimpleNamespace(**{name: obj for module in [*figure_modules(), importlib.import_module("ui.figures.layout")]
                       for name, obj in vars(module).items() if not name.startswith("_")})

RNG = np.random.default_rng(0)
EPS = [0.5, 1, 2, 5, 10, 50, 100]


def _sigma_curve():
    eps = np.logspace(-2, 1, 30)
    df = pd.DataFrame({"epsilon": eps, "analytic_sigma": 5 / eps, "classic_sigma": np.where(eps <= 1, 6 / eps, np.nan),
                       "laplace_scale": 1 / eps})
    return F.sigma_curve_figure(df, 1.0, 1e-5)


def _attack_summary():
    rows = []
    for comp in ("W", "P"):
        rows.append({"component": comp, "setting": "plain", "epsilon": np.inf, "correlation_mean": 0.98,
                     "correlation_q25": 0.97, "correlation_q75": 0.99, "rmsep_median": 0.05})
        for setting, scale in (("paper_sigma_squared", 1.0), ("paper_sigma", 0.7), ("strict", 0.2)):
            for e in EPS:
                m = min(0.95, scale * np.log10(e + 1) / 2)
                rows.append({"component": comp, "setting": setting, "epsilon": e, "correlation_mean": m,
                             "correlation_q25": m - 0.05, "correlation_q75": m + 0.05, "rmsep_median": 0.05 + 2 / e})
    return pd.DataFrame(rows)


ATTACK_LABELS = {"plain": "plain PLS (no privacy)", "paper_sigma_squared": "edPLS paper code (σ² as std)",
                 "paper_sigma": "edPLS paper-faithful (σ)", "strict": "edPLS strict (proven DP)"}


def _curves(axis, k=2):
    return {c: np.sin(axis / (10 + i)) for i, c in enumerate(("W", "P")[:k])}


def _p3ls_messages(n=12):
    roles = ["TA", "party 1", "party 2", "CSP"]
    phases = ["keys", "training", "recovery", "inference"]
    rows = [{"sender": roles[i % 4], "receiver": roles[(i + 1) % 4], "message": f"m{i}", "shape": "(3, 2)",
             "what it is": "encrypted block", "phase": phases[i % 4], "step": f"step {i}"} for i in range(n)]
    return pd.DataFrame(rows), roles


def _p3ls_per_kpi():
    return pd.DataFrame([{"model": m, "kpi": k, "rmse": r, "r2": 1 - r}
                         for m, r in (("local", 0.5), ("P3LS", 0.3), ("central", 0.28)) for k in ("KPI 1", "KPI 2")])


def _dp_cca_summary(parameter="epsilon"):
    vals = {"epsilon": EPS, "n_samples": [100, 1000, 10000], "delta": [1e-8, 1e-6, 1e-4]}[parameter]
    return pd.DataFrame([{"parameter": parameter, "value": v, "captured_mean": 0.5, "captured_sd": 0.1,
                          "angle_cos_mean": 0.6, "angle_cos_sd": 0.1, "n_replicates": 5} for v in vals])


def _pca_frames():
    real = pd.DataFrame({"c1": RNG.normal(size=60), "c2": RNG.normal(size=60), "c3": RNG.normal(size=60),
                         "label": RNG.choice(["a", "b"], 60)})
    synth = real.copy()
    synth[["c1", "c2", "c3"]] += RNG.normal(scale=0.3, size=(60, 3))
    return real, synth


def _pca_utility():
    labels = {"real": "real data (no privacy)", "public_only": "public data only", "pca_gauss_public": "PCA-Gauss",
              "liu": "Liu et al. (DP)"}
    return pd.DataFrame([{"method": m, "label": lab, "epsilon": e, "mean": 0.6 + 0.02 * i, "ci95": 0.03}
                         for i, (m, lab) in enumerate(labels.items()) for e in EPS])


def _var_residuals(n=30):
    k = np.arange(1, n + 1)
    return pd.DataFrame({"iteration": k, "primal_residual": 1 / k, "dual_residual": 0.5 / k,
                         "eps_primal": np.full(n, 1e-3), "eps_dual": np.full(n, 1e-3)})


def _var_messages(n=10):
    return pd.DataFrame([{"sender": "central" if i % 2 else f"site {i % 3}", "receiver": "all owners" if i % 2 else
                          "central", "iteration": i // 2, "message": "Z_i B_i", "shape": "(T, n)",
                          "what it is": "partial prediction"} for i in range(n)])


def _var_sweep():
    b = [0.0, 0.1, 0.3, 1.0]
    return pd.DataFrame({"b": b, "median_mae_gain_pct": [20, 15, 5, -3], "median_rmse_gain_pct": [18, 12, 4, -4],
                         "owners_worse_mae": [0, 1, 5, 20], "eps_per_value": [float("inf"), 10, 3.3, 1]})


def _breach():
    return pd.DataFrame([{"n": n, "p": 2, "T": T, "k_owner": T // (n * 2), "k_central": T // n}
                         for n in (5, 20) for T in (100, 1000, 10000)])


def _rmsep_curves(groups=("none", "SNV + mean-centre")):
    rows = []
    for g in groups:
        for e in EPS:
            med = 0.3 + 2 / e
            rows.append({"chain": g, "model": "strict edPLS", "epsilon": e, "median": med, "q25": 0.8 * med,
                         "q75": 1.6 * med, "nonprivate": 0.0426})
    return pd.DataFrame(rows)


def _samples_curve():
    n = [100, 300, 1000, 3000, 10000]
    return pd.DataFrame({"n": n, "median": [3, 1.5, 0.6, 0.3, 0.12], "q25": [2, 1, 0.4, 0.2, 0.1],
                         "q75": [4, 2, 0.8, 0.4, 0.15], "nonprivate": [0.05] * 5})


AXIS = np.linspace(1100, 2500, 200)
PRIVATE_LABEL = "edPLS (paper, ε = 1)"

def _dp_pcr_curves() -> pd.DataFrame:
    """DP-PCR's RMSEP curves beside strict edPLS on a small spectra set (the page's sweep table)."""
    from engine.data.sample_generators import make_nir_spectra
    from engine.methods.dp_pcr import rmsep_vs_epsilon

    data = make_nir_spectra(n_samples=60, n_channels=20, random_state=1)
    X, y = data.X, data.Y[:, 0]
    return rmsep_vs_epsilon(X[:40], y[:40], X[40:], y[40:], [1.0, 10.0, np.inf], 2, 2, random_state=0,
                            x_bound=19.0, y_bound=100.0)


CASES = {
    "sigma_curve_figure": _sigma_curve,
    "attack_party_spectra_figure": lambda: F.attack_party_spectra_figure(
        AXIS, RNG.normal(size=(5, 200)), RNG.normal(size=(5, 200)), "party 1 (NIR, 150 rows)",
        "party 2 (NIR, 150 rows)", secret_centre=1700.0, axis_title="wavelength (nm)"),
    "attack_reconstruction_figure": lambda: F.attack_reconstruction_figure(
        AXIS, _curves(AXIS), _curves(AXIS), _curves(AXIS),
        private_label="recovered from edPLS (paper-faithful σ, ε = 1)",
        secret_centre=1700.0, axis_title="wavelength (nm)"),
    "attack_success_figure": lambda: F.attack_success_figure(_attack_summary(), labels=ATTACK_LABELS,
                                                             component_label="loadings P"),
    "p3ls_sequence_figure": lambda: F.p3ls_sequence_figure(*_p3ls_messages()),
    "p3ls_kpi_error_figure": lambda: F.p3ls_kpi_error_figure(_p3ls_per_kpi()),
    "p3ls_coefficients_figure": lambda: F.p3ls_coefficients_figure(pd.DataFrame(
        [{"kpi": "KPI 1", "party": f"party {p}", "variable": f"x{p}{v}", "coefficient": 0.1 * v}
         for p in (1, 2, 3) for v in range(4)]), "KPI 1"),
    "p3ls_contribution_figure": lambda: F.p3ls_contribution_figure(
        {"training rows": pd.DataFrame({"party": ["party 1", "party 2"], "r2_xy": [0.4, 0.2]}),
         "test rows": pd.DataFrame({"party": ["party 1", "party 2"], "r2_xy": [0.35, 0.1]})}),
    "p3ls_validation_figure": lambda: F.p3ls_validation_figure(pd.DataFrame(
        [{"model": m, "k": k, "r2": 0.5 + 0.05 * k} for m in ("local", "P3LS", "central") for k in range(1, 6)]),
        {"local": 2, "P3LS": 3, "central": 3}),
    "dp_cca_correlation_bars": lambda: F.dp_cca_correlation_bars([0.8, 0.5], [0.9, 0.6], [0.9, 0.6]),
    "dp_cca_sweep_figure": lambda: F.dp_cca_sweep_figure(_dp_cca_summary(), "epsilon"),
    "dp_cca_loadings_figure": lambda: F.dp_cca_loadings_figure(
        [f"x{i}" for i in range(6)], RNG.normal(size=6), RNG.normal(size=6), [f"y{i}" for i in range(4)],
        RNG.normal(size=4), RNG.normal(size=4)),
    "dp_cca_scores_figure": lambda: F.dp_cca_scores_figure(RNG.normal(size=50), RNG.normal(size=50)),
    "pca_gauss_scatter_figure": lambda: F.pca_gauss_scatter_figure(*_pca_frames(), colour="label"),
    "pca_gauss_marginals_figure": lambda: F.pca_gauss_marginals_figure(*_pca_frames(), ["c1", "c2", "c3"]),
    "pca_gauss_correlation_figure": lambda: F.pca_gauss_correlation_figure(
        *(f[["c1", "c2", "c3"]].corr() for f in _pca_frames())),
    "pca_gauss_utility_figure": lambda: F.pca_gauss_utility_figure(
        _pca_utility(), metric_label="test accuracy of a classifier trained on synthetic rows",
        references={"chance": 0.5}, title="Utility of the synthetic rows against ε"),
    "var_forecast_figure": lambda: F.var_forecast_figure(
        np.arange(50), RNG.normal(size=50), RNG.normal(size=50), RNG.normal(size=50), site="site 3",
        defended=RNG.normal(size=50), defended_label="with Laplace noise b = 0.3"),
    "var_skill_figure": lambda: F.var_skill_figure(
        {"collaborative VAR": pd.DataFrame({"owner": ["A", "B"], "mae_gain_pct": [12.0, -2.0]}),
         "VAR with noise b = 0.3": pd.DataFrame({"owner": ["A", "B"], "mae_gain_pct": [6.0, -5.0]})}),
    "var_convergence_figure": lambda: F.var_convergence_figure(
        _var_residuals(), 1 / np.arange(1, 31), clean_residuals=_var_residuals()),
    "var_attack_series_figure": lambda: F.var_attack_series_figure(
        np.arange(40), RNG.normal(size=40), RNG.normal(size=40), victim="site 2", K=12, attacker="site 1"),
    "var_attack_error_figure": lambda: F.var_attack_error_figure(
        np.arange(1, 11), np.abs(RNG.normal(size=(10, 2))), victims=["site 2", "site 3"], predicted_k=6,
        k_exact=7, k_needed=5, formula="(61): K = ..."),
    "var_singular_values_figure": lambda: F.var_singular_values_figure(np.logspace(0, -12, 10), 5),
    "var_privacy_curve_figure": lambda: F.var_privacy_curve_figure(_var_sweep(), law="Laplace"),
    "var_breach_figure": lambda: F.var_breach_figure(_breach(), p=2, live=[(1000, 20, "attack run here (K = 20)")]),
    "var_message_flow_figure": lambda: F.var_message_flow_figure(_var_messages(), ["site 0", "site 1", "site 2"]),
    "edpls_coef_figure": lambda: F.edpls_coef_figure(AXIS, np.sin(AXIS), np.cos(AXIS),
                                                     axis_label="channel (column name)", private_label=PRIVATE_LABEL),
    "edpls_pred_figure": lambda: F.edpls_pred_figure(np.arange(10.0), np.arange(10.0) + 1, np.arange(10.0),
                                                     response="moisture", private_label=PRIVATE_LABEL),
    "edpls_rmsep_curve_figure": lambda: F.edpls_rmsep_curve_figure(_rmsep_curves(), sigma_y=0.37),
    "edpls_samples_needed_figure": lambda: F.edpls_samples_needed_figure(_samples_curve(), target=0.2),
    "audit_histogram_figure": lambda: F.audit_histogram_figure(RNG.normal(size=200), RNG.normal(1, 1, 200), 0.5,
                                                               statistic="first coefficient"),
    "audit_bound_figure": lambda: F.audit_bound_figure(["edPLS strict"], [1.0], [0.4]),
    "demo_leak_figure": lambda: F.demo_leak_figure(AXIS, np.sin(AXIS), np.cos(AXIS), secret_centre=1700.0,
                                                   correlation=0.97),
    "demo_cost_figure": lambda: F.demo_cost_figure(_rmsep_curves(("strict edPLS",)).rename(columns={"chain": "x"}),
                                                   sigma_y=0.37, epsilon=1.0, unit="%", response="moisture"),
    "dp_pcr_coef_figure": lambda: F.dp_pcr_coef_figure(np.arange(3.0), [1, 2, 3], [1, 2, 2], axis_label="channel",
                                                       private_label="DP-PCR"),
    "dp_pcr_pred_figure": lambda: F.dp_pcr_pred_figure(np.arange(4.0), np.arange(4.0) + 1, np.arange(4.0),
                                                       response="y", private_label="DP-PCR"),
    "dp_pcr_variance_figure": lambda: F.dp_pcr_variance_figure([0.5, 0.2], [0.6, 0.1]),
    "dp_pcr_rmsep_figure": lambda: F.dp_pcr_rmsep_figure(_dp_pcr_curves(), sigma_y=0.4),
}

# the chemometrics staples (issue #19) keep their small inputs in their own file
from figure_cases_chemometrics import CASES as _CHEMOMETRICS_CASES  # noqa: E402

CASES.update(_CHEMOMETRICS_CASES)
