"""PCA-Gauss: differentially private synthetic data from a projection plus a Gaussian model.

Spec ``pca_gauss.md`` (Chanyaswad, Liu & Mittal, "Coupling Dimensionality Reduction with
Generative Model for Non-Interactive Private Data Release"). One estimator, ``PCAGauss``,
scikit-learn style, with the paper's three algorithms:

- ``task="unsupervised"`` with ``pca_source="nonprivate"``: Algorithm 1 exactly (spec 2.1). W is
  the top-P eigenvectors of the SAME private data, S = W'X'XW/(MN) = diag(top-P eigenvalues)/(MN),
  and only the noisy S is released. W is never released, so the synthetic data are **one
  axis-aligned Gaussian blob**, unrelated to the original features (``transform`` still maps real
  rows with the hidden W, for evaluation only). With an independent W (public, Lap-PCA,
  Analyze-Gauss, identity) the unsupervised task is "Algorithm 2 without y" (spec 9.4).
- ``task="regression"``: Algorithm 2 (spec 2.2): the (P+1)x(P+1) second moment of [W'x/sqrt(M); y]
  with Laplace noise, and samples from N(0, S_priv).
- ``task="classification"``: Algorithm 3 (spec 2.3): per class a Laplace mean and a Laplace
  covariance (budget split eps_mu = 0.1, eps_Sigma = 0.9 of the Gaussian budget), and N_C draws.

W sources (spec 2.4): ``"public"`` (PCA of a disjoint public slice, free), ``"laplace"``
(Lap-PCA, spec 2.4, scale M a^2/(N eps) as printed or M^2 a^2/(N eps) as Prop. 3 requires),
``"analyze_gauss"`` (AG-PCA, (eps_PCA, delta)), ``"nonprivate"`` (Algorithm 1 only) and
``"identity"`` (W = I and no 1/sqrt(M): Liu et al.'s full-dimensional Gaussian baseline, spec 4).
Lap-PCA and AG-PCA take eps_PCA = alpha eps; the Gaussian stage gets the rest.

Modes (spec 2.6 table):

- ``mode="paper"`` reproduces the paper: centring and max-abs scaling with the private training data,
  the paper's sensitivity formulas (``sens="paper"``; ``"tight"`` gives the spec's corrected and
  centring-safe bounds), Lap-PCA's printed scale (``lap_pca_scale="M"``; under-noised by a factor M:
  the ledger records the true epsilon M eps and the claimed one), exact class counts, and
  ``psd="numpy"`` (the raw, possibly indefinite, noisy matrix goes to numpy's SVD sampler, which
  samples with (C'C)^(1/2)). Every release is marked ``sensitivity_source="data"``: the scaling
  comes from the private data, so no total is a proven guarantee.
- ``mode="strict"`` is provably eps-DP (or (eps, delta) with AG-PCA) when every input it treats as
  public really is: the centre and bounds come from ``bounds=(lower, upper)`` (values the caller
  declares public: documentation, domain knowledge) or ``bounds="public"`` (the range of ``X_public``,
  a separate data set the caller declares public), never from the private rows; the centre is the
  midpoint of the bounds; every entry is clipped to the box; second moments are about that public
  centre (no data-dependent centring); means are released privately (a budget slice); the label
  set is the public parameter ``labels``; noisy class counts N_C + Lap(2/eps_cnt) with per-class sums
  and second moments divided by them; Lap-PCA at M^2; the PSD fix by eigenvalue clipping
  (post-processing); the Algorithm 1 eigenvalues released alone with the Lidskii-Mirsky bound
  min(P, 2) a^2/N. ``bounds="data"`` (or a label set read from y, a public slice not declared
  public, a known noise seed) still runs, but the ledger carries a "not proven: ..." caveat.

Neighbours are "bounded" (replace one record, **N public**) as in the paper; sensitivities are L1
(Laplace) or L2 (Analyze-Gauss), each computed for replace-one, and the ledger says so
(``neighbouring="replace"``): the number of training rows N is treated as public. Every release goes
through ``engine.privacy`` (``LaplaceMechanism``, ``AnalyzeGauss``) into ``privacy_ledger_``, with noise
from :func:`engine.privacy.noise_generator` (fresh OS entropy unless a seed is given; a known seed is a
ledger caveat). With ``epsilon=inf`` no noise is added and the ledger stays empty ("no privacy").

Sharing (issue #15): :func:`shareable_release` builds the one shareable export of a fit with
:func:`engine.release.manifest.build_release` from an explicit field list (DP outputs and declared-public
inputs only: never Algorithm 1's non-private W, never bounds read off the private data, never exact
class counts); :func:`owner_sheets` gathers what only the owner may see (non-private W, data ranges,
clip counts, the noise log). :func:`pipeline_audit_case` is the end-to-end audit of the page's strict
release.

Written by hand: the paper's algorithms (no public code exists, and no library implements them).
Linear algebra is scipy's ``eigh``; sampling is numpy's; the privacy core is ``engine.privacy``.

Package layout (issue #17, one concern per module; ``engine.methods.pca_gauss`` re-exports the public names):
``sensitivity`` (constants, the sensitivity table, noise-free queries), ``sampling`` (PSD handling),
``inputs`` (checked records and the public box), ``releases`` (W sources and the Gaussian stage),
``estimator`` (:class:`PCAGauss`), ``baselines`` (Jiang and Li), ``evaluation`` / ``utility`` / ``frames``
(the synthetic-utility harness and its sweeps), ``export`` (shareable release and owner's sheets),
``audit_case`` (the audit cases), ``comparison`` (:func:`compare`, the method contract's entry point).
"""
from __future__ import annotations

from .audit_case import pca_gauss_case, pipeline_audit_case
from .baselines import IdentityQueryRelease, identity_query_sensitivity
from .comparison import compare
from .estimator import PCAGauss
from .export import (
    MODEL_FORMAT,
    can_map_back,
    model_from_dict,
    model_from_release,
    owner_sheets,
    shareable_release,
    to_json,
)
from .inputs import read_public, read_records
from .sensitivity import (
    ALPHA_GRID,
    CAVEATS,
    FINDINGS,
    MODES,
    N_PUBLIC_NOTE,
    PCA_SOURCES,
    TASKS,
    alg1_release_query,
    alg3_class_moments,
    lap_pca_noise_scale,
    sensitivities,
    top_eigenvectors,
)

__all__ = [
    "ALPHA_GRID",
    "CAVEATS",
    "FINDINGS",
    "MODEL_FORMAT",
    "MODES",
    "N_PUBLIC_NOTE",
    "PCA_SOURCES",
    "TASKS",
    "IdentityQueryRelease",
    "PCAGauss",
    "alg1_release_query",
    "alg3_class_moments",
    "can_map_back",
    "compare",
    "identity_query_sensitivity",
    "lap_pca_noise_scale",
    "model_from_dict",
    "model_from_release",
    "owner_sheets",
    "pca_gauss_case",
    "pipeline_audit_case",
    "read_public",
    "read_records",
    "sensitivities",
    "shareable_release",
    "to_json",
    "top_eigenvectors",
]
