"""Chemometrics staples for the regression pages (issue #19): the owner's non-private diagnostics a
chemometrician expects beside a private model.

- :mod:`.cv`: RMSECV against the number of latent variables (K-fold on the training rows) and the suggested
  number (minimum and one-standard-error rule); what the private fit chose (read off the fitted model, never
  recomputed);
- :mod:`.metrics`: RMSEP, R², RPD and bias; predictions outside a y range; the "no better than predicting the
  mean" check;
- :mod:`.diagnostics`: the reference PLS, its loadings and VIP, Hotelling T² and Q residuals (SPE) with their
  95 % / 99 % limits, and the training rows drawn in the raw vs preprocessed spectra plot.

Everything here is computed on the owner's rows WITHOUT noise: it is the owner's view, not private, and
belongs on the page and in the owner's workbook, never in a shareable file.

scikit-learn does the models and the cross-validation (``PLSRegression``, ``PCA`` + ``LinearRegression``,
``KFold``, ``cross_val_predict``, ``r2_score``); scipy the F, chi² and normal quantiles. Written by hand (no
kept library has them): VIP, T² / Q and their limits, RPD, and the one-standard-error rule.
"""
from engine.methods.chemometrics.cv import (
    RMSECVCurve,
    latent_model,
    max_cv_components,
    private_k_choice,
    rmsecv_curve,
)
from engine.methods.chemometrics.diagnostics import (
    OutlierDiagnostics,
    example_rows,
    fit_reference,
    outlier_diagnostics,
    q_limit,
    reference_loadings,
    t2_limit,
    vip,
    vip_from_weights,
)
from engine.methods.chemometrics.metrics import (
    mean_baseline,
    means_not_beaten,
    metrics_table,
    no_better_than_mean,
    range_check,
    regression_metrics,
)

__all__ = [
    "OutlierDiagnostics", "RMSECVCurve", "example_rows", "fit_reference", "latent_model", "max_cv_components",
    "mean_baseline", "means_not_beaten", "metrics_table", "no_better_than_mean", "outlier_diagnostics",
    "private_k_choice", "q_limit", "range_check", "reference_loadings", "regression_metrics", "rmsecv_curve",
    "t2_limit", "vip", "vip_from_weights",
]
