"""Plotly figure builders of the pages (every figure in PrivaLab is plotly), one module per page.

``layout`` holds the house layout every builder finishes with (``finish``: legend, margins, axis titles,
log ticks) and the shared colours; each other module holds the builders of one page. This package
re-exports every builder and constant, so ``from ui.figures import edpls_coef_figure`` keeps working.
"""
from __future__ import annotations

from ui.figures.attack_lab import (
    ATTACK_COLOURS,
    ATTACK_METRICS,
    attack_party_spectra_figure,
    attack_reconstruction_figure,
    attack_success_figure,
)
from ui.figures.audit import (
    audit_bound_figure,
    audit_histogram_figure,
)
from ui.figures.calculator import (
    sigma_curve_figure,
)
from ui.figures.chemometrics import (
    chemometrics_loadings_figure,
    chemometrics_prediction_figure,
    chemometrics_rmsecv_figure,
    chemometrics_spectra_figure,
    chemometrics_t2_q_figure,
    chemometrics_vip_figure,
)
from ui.figures.demo import (
    demo_cost_figure,
    demo_leak_figure,
)
from ui.figures.dp_cca import (
    DP_CCA_COLOURS,
    DP_CCA_METRICS,
    DP_CCA_SWEEP_AXES,
    dp_cca_correlation_bars,
    dp_cca_loadings_figure,
    dp_cca_scores_figure,
    dp_cca_sweep_figure,
)
from ui.figures.edpls import (
    edpls_coef_figure,
    edpls_pred_figure,
    edpls_rmsep_curve_figure,
    edpls_samples_needed_figure,
)
from ui.figures.layout import (
    AXIS_TITLE_CHARS,
    DEFAULT_HEIGHT,
    GROUP_PALETTE,
    NONPRIVATE_COLOUR,
    PRIVATE_COLOUR,
    TITLE_CHARS,
    finish,
)
from ui.figures.p3ls import (
    P3LS_MODEL_COLOURS,
    P3LS_PHASE_COLOURS,
    p3ls_coefficients_figure,
    p3ls_contribution_figure,
    p3ls_kpi_error_figure,
    p3ls_sequence_figure,
    p3ls_validation_figure,
)
from ui.figures.pca_gauss import (
    PCA_GAUSS_COLOURS,
    pca_gauss_correlation_figure,
    pca_gauss_marginals_figure,
    pca_gauss_scatter_figure,
    pca_gauss_utility_figure,
)
from ui.figures.var_admm import (
    VAR_COLOURS,
    var_attack_error_figure,
    var_attack_series_figure,
    var_breach_figure,
    var_convergence_figure,
    var_forecast_figure,
    var_message_flow_figure,
    var_privacy_curve_figure,
    var_singular_values_figure,
    var_skill_figure,
)

__all__ = [
    "AXIS_TITLE_CHARS",
    "DEFAULT_HEIGHT",
    "GROUP_PALETTE",
    "NONPRIVATE_COLOUR",
    "PRIVATE_COLOUR",
    "TITLE_CHARS",
    "finish",
    "sigma_curve_figure",
    "edpls_coef_figure",
    "edpls_pred_figure",
    "edpls_rmsep_curve_figure",
    "edpls_samples_needed_figure",
    "chemometrics_loadings_figure",
    "chemometrics_prediction_figure",
    "chemometrics_rmsecv_figure",
    "chemometrics_spectra_figure",
    "chemometrics_t2_q_figure",
    "chemometrics_vip_figure",
    "PCA_GAUSS_COLOURS",
    "pca_gauss_correlation_figure",
    "pca_gauss_marginals_figure",
    "pca_gauss_scatter_figure",
    "pca_gauss_utility_figure",
    "DP_CCA_COLOURS",
    "DP_CCA_METRICS",
    "DP_CCA_SWEEP_AXES",
    "dp_cca_correlation_bars",
    "dp_cca_loadings_figure",
    "dp_cca_scores_figure",
    "dp_cca_sweep_figure",
    "P3LS_MODEL_COLOURS",
    "P3LS_PHASE_COLOURS",
    "p3ls_coefficients_figure",
    "p3ls_contribution_figure",
    "p3ls_kpi_error_figure",
    "p3ls_sequence_figure",
    "p3ls_validation_figure",
    "VAR_COLOURS",
    "var_attack_error_figure",
    "var_attack_series_figure",
    "var_breach_figure",
    "var_convergence_figure",
    "var_forecast_figure",
    "var_message_flow_figure",
    "var_privacy_curve_figure",
    "var_singular_values_figure",
    "var_skill_figure",
    "ATTACK_COLOURS",
    "ATTACK_METRICS",
    "attack_party_spectra_figure",
    "attack_reconstruction_figure",
    "attack_success_figure",
    "audit_bound_figure",
    "audit_histogram_figure",
    "demo_cost_figure",
    "demo_leak_figure",
]
