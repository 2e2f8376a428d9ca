"""The method registry: one spec per method, and everything that lists methods derives from it.

Navigation and the home page (``ui.pages``), the privacy audit's catalogue (``engine.audit_catalog``),
the audit bench, and the tests that must cover every method (hostile uploads, exports,
audit cases, reproduction scripts) all iterate ``METHODS``. Adding a method is: its package under
``engine/methods/``, its page, its figure module, its reproduction script, and one entry here.

Estimators, ``compare`` functions and audit cases are named by dotted path and imported on first use,
so that importing the registry (for the navigation) costs nothing and nothing here imports a method
module that imports the registry.

Examples
--------
>>> [spec.key for spec in METHODS]
['edpls', 'dp_pcr', 'pca_gauss', 'dp_cca', 'p3ls', 'var_admm']
>>> method("edpls").page
'pages/edpls.py'
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

__all__ = ["METHODS", "AuditTarget", "MethodSpec", "method"]


def _resolve(path: str):
    """"package.module:attribute" -> the attribute (imported now)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class AuditTarget:
    """One release the privacy audit can test: its catalogue key, label, the modes it has and its case.

    ``case`` names a function returning an ``engine.privacy.audit.AuditCase``; it is called with those of
    mode, epsilon, delta and bug that it takes, plus ``fixed`` (pairs, e.g. (("law", "laplace"),)).
    ``plants_bugs``: the catalogue also audits it with planted bugs (noise or sensitivity halved).
    ``engine.audit_catalog`` builds the audit catalogue from these.
    """

    key: str
    label: str
    modes: tuple
    case: str
    fixed: tuple = ()
    plants_bugs: bool = True

    def resolve(self):
        """The audit case factory named by ``case``."""
        return _resolve(self.case)


@dataclass(frozen=True)
class MethodSpec:
    """What the app, the audit, the benches and the tests need to know about one method.

    Attributes
    ----------
    key : short id ("edpls"); also the page's widget-key prefix.
    title, icon, summary : navigation and home page.
    page : the Streamlit page file.
    estimator_path : "module:Class" of the scikit-learn estimator (``estimator`` imports it).
    data_kind : "spectra" ((X, y), X many columns), "table" ((X, y)), "two_views" ((X, Y)),
        "party_blocks" ((X, y) split by columns between parties) or "panel" (time series, one per owner).
    export_format : what the shareable release is: "model_json", "synthetic_csv" or "none" (nothing leaves
        under DP: federated masking).
    compare_path : "module:function" of the method's ``compare(...) -> Comparison``.
    audit : tuple of AuditTarget (empty only for a method that releases nothing under DP).
    reproduction : the script under bench/ that reproduces the method's paper or claim.
    """

    key: str
    title: str
    icon: str
    summary: str
    page: str
    estimator_path: str
    data_kind: str
    export_format: str
    compare_path: str
    audit: tuple
    reproduction: str

    @property
    def estimator(self) -> type:
        """The estimator class named by ``estimator_path``."""
        return _resolve(self.estimator_path)

    @property
    def compare(self):
        """The comparison function named by ``compare_path``."""
        return _resolve(self.compare_path)


METHODS = (
    MethodSpec(
        "edpls", "edPLS", ":material/stacked_line_chart:",
        "(ε, δ)-differentially private PLS1 regression on spectra, with RMSEP-vs-ε curves.",
        "pages/edpls.py", "engine.methods.edpls:EDPLS", "spectra", "model_json", "engine.methods.edpls:compare",
        (AuditTarget("edpls", "edPLS", ("strict", "paper"), "engine.methods.edpls.audit_case:edpls_case"),
         AuditTarget("edpls_recommended", "edPLS recommended strict (whole fit)", ("strict",),
                     "engine.methods.edpls.audit_case:strict_edpls_case", plants_bugs=False),
         AuditTarget("edpls_recommended_cross", "edPLS recommended strict (cross-moments)", ("strict",),
                     "engine.methods.edpls.audit_case:strict_edpls_case", fixed=(("part", "cross"),))),
        "bench/reproduce_edpls_corn.py"),
    MethodSpec(
        "dp_pcr", "DP-PCR", ":material/ssid_chart:",
        "Differentially private principal component regression, beside edPLS on the same data.",
        "pages/dp_pcr.py", "engine.methods.dp_pcr:DPPCR", "spectra", "model_json", "engine.methods.dp_pcr:compare",
        (AuditTarget("dp_pcr", "DP-PCR", ("strict",), "engine.methods.dp_pcr.audit_case:dp_pcr_case"),),
        "bench/reproduce_dp_pcr.py"),
    MethodSpec(
        "pca_gauss", "PCA-Gauss", ":material/scatter_plot:",
        "Differentially private synthetic data from a private projection and Gaussian model.",
        "pages/pca_gauss.py", "engine.methods.pca_gauss:PCAGauss", "table", "synthetic_csv",
        "engine.methods.pca_gauss:compare",
        (AuditTarget("pca_gauss", "PCA-Gauss (Lap-PCA covariance)", ("strict", "paper"),
                     "engine.methods.pca_gauss.audit_case:pca_gauss_case"),),
        "bench/reproduce_pca_gauss.py"),
    MethodSpec(
        "dp_cca", "DP-CCA", ":material/join_inner:",
        "Private canonical correlation between two views (Analyze-Gauss).",
        "pages/dp_cca.py", "engine.methods.dp_cca:DPCCA", "two_views", "model_json", "engine.methods.dp_cca:compare",
        (AuditTarget("dp_cca", "DP-CCA", ("strict", "paper"), "engine.methods.dp_cca.audit_case:dp_cca_case"),),
        "bench/reproduce_dp_cca.py"),
    MethodSpec(
        "p3ls", "P3LS simulation", ":material/hub:",
        "Vertically federated PLS across companies with removable masks, party by party.",
        "pages/p3ls.py", "engine.methods.p3ls:P3LS", "party_blocks", "none", "engine.methods.p3ls:compare",
        (), "bench/reproduce_p3ls.py"),
    MethodSpec(
        "var_admm", "VAR-ADMM", ":material/timeline:",
        "Collaborative VAR forecasting across data owners, and what ADMM leaks.",
        "pages/var_admm.py", "engine.methods.var_admm:CollaborativeVAR", "panel", "model_json",
        "engine.methods.var_admm:compare",
        tuple(AuditTarget(f"var_admm_{law}", label, modes, "engine.methods.var_admm.audit_case:var_admm_case",
                          (("law", law),), plants_bugs=False)
              for law, label, modes in (
                  ("laplace", "VAR-ADMM noise defence, Laplace", ("strict",)),
                  ("gaussian", "VAR-ADMM noise defence, Gaussian", ("strict",)),
                  ("uniform", "VAR-ADMM noise defence, uniform (no guarantee)", ("paper",)))),
        "bench/reproduce_var_admm.py"),
)


def method(key: str) -> MethodSpec:
    """The spec of one registered method (KeyError names the registered keys)."""
    for spec in METHODS:
        if spec.key == key:
            return spec
    raise KeyError(f"no method {key!r}; registered: {', '.join(s.key for s in METHODS)}")
