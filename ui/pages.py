"""The page registry: one place that names every page, its file and its one-line purpose."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageInfo:
    file: str
    title: str
    icon: str
    summary: str


METHOD_PAGES = (
    PageInfo("pages/edpls.py", "edPLS", ":material/stacked_line_chart:",
             "(ε, δ)-differentially private PLS1 regression on spectra, with RMSEP-vs-ε curves."),
    PageInfo("pages/pca_gauss.py", "PCA-Gauss", ":material/scatter_plot:",
             "Differentially private synthetic data from a private projection and Gaussian model."),
    PageInfo("pages/dp_cca.py", "DP-CCA", ":material/join_inner:",
             "Private canonical correlation between two views (Analyze-Gauss)."),
    PageInfo("pages/p3ls.py", "P3LS simulation", ":material/hub:",
             "Vertically federated PLS across companies with removable masks, party by party."),
    PageInfo("pages/var_admm.py", "VAR-ADMM", ":material/timeline:",
             "Collaborative VAR forecasting across data owners, and what ADMM leaks."),
)

TOOL_PAGES = (
    PageInfo("pages/attack_lab.py", "Attack lab (PLS)", ":material/bug_report:",
             "What shared PLS components reveal about another party's data."),
    PageInfo("pages/calculator.py", "Noise & budget calculator", ":material/calculate:",
             "Gaussian/Laplace noise for a budget, and the total of many releases."),
    PageInfo("pages/privacy_audit.py", "Privacy audit", ":material/verified_user:",
             "Run a release many times on neighbouring data and bound its ε from below."),
)
