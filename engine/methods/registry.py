"""The method registry: one spec per method, and everything that lists methods derives from it.

Navigation and the home page (``ui.pages``), the privacy audit's catalogue (``engine.methods.audit_catalog``),
the command line's sub-commands and batch fits (``engine.cli``: ``CliSpec``), the Dask fits (``lazy``), the job
runner's preloads (``ui.runtime.jobs``: ``preload``), the audit bench, and the tests that must cover every method
(hostile uploads, exports, audit cases, reproduction scripts) all iterate ``METHODS``, read when they run (so a
spec added here, or patched in by a test, reaches all of them). Adding a method is: its package under
``engine/methods/``, its page (``pages/<key>.py``) and its folder ``ui/<key>/``, its reproduction script, and one
entry here.

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

__all__ = ["METHODS", "AuditTarget", "CliSpec", "MethodSpec", "method", "resolve"]


def _resolve(path: str):
    """"package.module:attribute" -> the attribute (imported now)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class AuditTarget:
    """One release the privacy audit can test: its catalogue key, label, the modes it has and its case.

    ``case`` names a function returning an ``engine.privacy.audit.AuditCase``; it is called with those of
    mode, epsilon and delta that it takes, plus ``fixed`` (pairs, e.g. (("law", "laplace"),)). Planted bugs
    are not the case's business: ``engine.methods.audit_catalog`` plants them in production (``planted_bug``).
    ``engine.methods.audit_catalog`` builds the audit catalogue from these.
    """

    key: str
    label: str
    modes: tuple
    case: str
    fixed: tuple = ()

    def resolve(self):
        """The audit case factory named by ``case``."""
        return _resolve(self.case)


@dataclass(frozen=True)
class CliSpec:
    """A method on the command line (``python -m engine fit <name>``) and in the batch fits (``engine.cli.batch``).

    ``name``: the sub-command; ``help``: its one line; ``arguments``: "module:function" that adds the method's own
    flags to its sub-parser (``function(parser)``; the common flags --data, --epsilon, ... are added before);
    ``fit``: "module:function" of the batch fit, ``function(job) -> (estimator, shareable release, owner sheets)``
    (``engine.cli.batch.fit_dataset`` calls it); ``default_components``: ``n_components`` when none is given;
    ``lazy``: the fits (the method's key, or a variant such as "edpls_recommended") whose estimator takes the Dask
    collections and sums its release partition by partition (``engine.cli.batch.LAZY_METHODS``); a fit left out
    gets one in-memory array.
    """

    name: str
    help: str
    arguments: str
    fit: str
    default_components: object = 2
    lazy: tuple = ()


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
    cli : CliSpec or None (None: in the app only).
    preload : modules the job runner's forkserver imports once for the page's worker tasks (``ui.runtime.jobs``).
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
    cli: CliSpec | None = None
    preload: tuple = ()

    @property
    def upload_key(self) -> str:
        """The widget key of the page's data picker (``data_picker(key=...)``)."""
        return f"{self.key}_data"

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
                     "engine.methods.edpls.audit_case:strict_edpls_case"),
         AuditTarget("edpls_recommended_cross", "edPLS recommended strict (cross-moments)", ("strict",),
                     "engine.methods.edpls.audit_case:strict_edpls_case", fixed=(("part", "cross"),)),
         AuditTarget("tukey_em", "TukeyEM (the recommended fit's large-n path, whole fit)", ("strict",),
                     "engine.methods.tukey_em:tukey_em_case", fixed=(("n_rows", 600), ("n_models", 300)))),
        "bench/reproduce_edpls_corn.py",
        CliSpec("edpls", "strict edPLS (spectra, one response)", "engine.cli.commands:edpls_arguments",
                "engine.cli.batch:fit_edpls", "auto", ("edpls", "edpls_recommended")),
        ("engine.methods.edpls", "engine.methods.edpls.sweeps", "engine.methods.edpls.pipeline", "ui.edpls.tasks")),
    MethodSpec(
        "dp_pcr", "DP-PCR", ":material/ssid_chart:",
        "Differentially private principal component regression, beside edPLS on the same data.",
        "pages/dp_pcr.py", "engine.methods.dp_pcr:DPPCR", "spectra", "model_json", "engine.methods.dp_pcr:compare",
        (AuditTarget("dp_pcr", "DP-PCR", ("strict",), "engine.methods.dp_pcr.audit_case:dp_pcr_case"),),
        "bench/reproduce_dp_pcr.py",
        CliSpec("dp-pcr", "DP principal component regression", "engine.cli.commands:dp_pcr_arguments",
                "engine.cli.batch:fit_dp_pcr", 2, ("dp_pcr",)),
        ("engine.methods.dp_pcr",)),
    MethodSpec(
        "pca_gauss", "PCA-Gauss", ":material/scatter_plot:",
        "Differentially private synthetic data from a private projection and Gaussian model.",
        "pages/pca_gauss.py", "engine.methods.pca_gauss:PCAGauss", "table", "synthetic_csv",
        "engine.methods.pca_gauss:compare",
        (AuditTarget("pca_gauss", "PCA-Gauss (Lap-PCA covariance)", ("strict", "paper"),
                     "engine.methods.pca_gauss.audit_case:pca_gauss_case"),),
        "bench/reproduce_pca_gauss.py",
        CliSpec("pca-gauss", "DP PCA-Gauss synthetic-data model (strict)", "engine.cli.commands:pca_gauss_arguments",
                "engine.cli.batch:fit_pca_gauss", 2, ("pca_gauss",)),
        ("engine.methods.pca_gauss.utility", "ui.pca_gauss.tasks")),
    MethodSpec(
        "dp_cca", "DP-CCA", ":material/join_inner:",
        "Private canonical correlation between two views (Analyze-Gauss).",
        "pages/dp_cca.py", "engine.methods.dp_cca:DPCCA", "two_views", "model_json", "engine.methods.dp_cca:compare",
        (AuditTarget("dp_cca", "DP-CCA", ("strict", "paper"), "engine.methods.dp_cca.audit_case:dp_cca_case"),),
        "bench/reproduce_dp_cca.py",
        CliSpec("dp-cca", "DP canonical correlation of two column groups (strict)",
                "engine.cli.commands:dp_cca_arguments", "engine.cli.batch:fit_dp_cca", 1, ("dp_cca",)),
        ("engine.methods.dp_cca", "ui.dp_cca.tasks")),
    MethodSpec(
        "p3ls", "P3LS simulation", ":material/hub:",
        "Vertically federated PLS across companies with removable masks, party by party.",
        "pages/p3ls.py", "engine.methods.p3ls:P3LS", "party_blocks", "none", "engine.methods.p3ls:compare",
        (), "bench/reproduce_p3ls.py", None, ("engine.methods.p3ls", "ui.p3ls.tasks")),
    MethodSpec(
        "var_admm", "VAR-ADMM", ":material/timeline:",
        "Collaborative VAR forecasting across data owners, and what ADMM leaks.",
        "pages/var_admm.py", "engine.methods.var_admm:CollaborativeVAR", "panel", "model_json",
        "engine.methods.var_admm:compare",
        tuple(AuditTarget(f"var_admm_{law}", label, modes, "engine.methods.var_admm.audit_case:var_admm_case",
                          (("law", law),))
              for law, label, modes in (
                  ("laplace", "VAR-ADMM noise defence, Laplace", ("strict",)),
                  ("gaussian", "VAR-ADMM noise defence, Gaussian", ("strict",)),
                  ("uniform", "VAR-ADMM noise defence, uniform (no guarantee)", ("paper",)))),
        "bench/reproduce_var_admm.py", None, ("engine.methods.var_admm", "ui.var_admm.tasks")),
)


def resolve(path: str):
    """"package.module:attribute" -> the attribute (imported now): how the registry's dotted paths are used."""
    return _resolve(path)


def method(key: str) -> MethodSpec:
    """The spec of one registered method (KeyError names the registered keys)."""
    for spec in METHODS:
        if spec.key == key:
            return spec
    raise KeyError(f"no method {key!r}; registered: {', '.join(s.key for s in METHODS)}")
