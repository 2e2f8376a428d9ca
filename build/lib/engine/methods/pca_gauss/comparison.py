"""PCA-Gauss's entry point of the method contract: ``compare(train, test, ...) -> Comparison``.

Train on synthetic, test on real (spec Sec. 5): the private model is a fitted :class:`PCAGauss`; its synthetic
rows train the task's downstream models (SVM and logistic regression, kernel ridge and linear regression, or
K-Means), which are scored on the held-out real rows mapped by the model's own W and box. The reference is the
same models trained on the real training rows (full dimension, no privacy), as the harness's ``real`` row.
"""
from __future__ import annotations

import numpy as np

from engine.methods.contract import Comparison
from engine.privacy.wording import ledger_text
from engine.threads import one_blas_thread

from .estimator import PCAGauss
from .evaluation import Split, _real_space, evaluate

__all__ = ["compare"]

#: headline name of each metric (``evaluation.METRICS`` holds the long labels).
_HEADLINE_NAMES = {
    "svm_accuracy": "SVM accuracy", "logreg_accuracy": "logistic-regression accuracy",
    "krr_rmse": "kernel-ridge RMSE", "linear_rmse": "linear RMSE",
    "silhouette": "silhouette", "transfer_ari": "transfer ARI", "label_ari": "label ARI",
}
_RMSE = ("krr_rmse", "linear_rmse")


def compare(train, test, *, epsilon, delta, mode="strict", random_state=None, **params) -> Comparison:
    """Fit PCA-Gauss on ``train``, and score its synthetic data and the real training data on ``test``.

    Parameters
    ----------
    train, test : tuples (X, y): X (n, M); y (n,) labels (classification), responses (regression), or None /
        optional labels (unsupervised, where ``test`` may be ``train``: clustering has no held-out set).
    epsilon, delta : the fit's budget (delta is AG-PCA's; None in paper mode means 1/N).
    mode : "strict" (needs public ``bounds``, and ``y_bounds`` / ``labels`` for the supervised tasks) or "paper".
    random_state : the release's noise seed (None: fresh noise; a known seed makes the ledger "not proven").
        The evaluation models are seeded with 0: they are not part of the release.
    **params : ``PCAGauss`` parameters (``task`` defaults to the estimator's "unsupervised", ``n_components``,
        ``pca_source``, ``bounds``, ...), plus ``X_public`` / ``y_public`` (the public data set passed to
        ``fit``) and ``K`` (clusters, default 10).

    Returns
    -------
    Comparison : private (the fitted ``PCAGauss``), reference (the non-private full-dimensional box model the
    real rows are scored in), headline ("<metric> (synthetic)" and "<metric> (real)" for every metric of the
    task; RMSEs in the units of y), the fit's ledger and its guarantee sentence.
    """
    params = dict(params)
    X_public, y_public, K = params.pop("X_public", None), params.pop("y_public", None), int(params.pop("K", 10))
    (X_train, y_train), (X_test, y_test) = train, test
    private = PCAGauss(epsilon=epsilon, delta=delta, mode=mode, random_state=random_state, **params)
    private.fit(X_train, y_train, X_public=X_public, y_public=y_public)
    task = private.task
    X_train = np.asarray(X_train, dtype=float)
    split = Split(X_train, None if y_train is None else np.asarray(y_train), np.empty((0, X_train.shape[1])), None,
                  np.asarray(X_test, dtype=float), None if y_test is None else np.asarray(y_test), task)
    with one_blas_thread(openmp=True):  # many small fits: thread start-up costs more than it saves (see run_method)
        reference, real_scores = _reference_scores(split, K)
        synthetic_scores = _synthetic_scores(private, split, K, real_scores.get("silhouette"))
    headline = {}
    for metric in real_scores:
        if metric not in synthetic_scores or metric not in _HEADLINE_NAMES:
            continue
        name = _HEADLINE_NAMES[metric]
        to_units = (lambda model: model.scaling_["y_scale"]) if metric in _RMSE else (lambda model: 1.0)
        headline[f"{name} (synthetic)"] = float(synthetic_scores[metric] * to_units(private))
        headline[f"{name} (real)"] = float(real_scores[metric] * to_units(reference))
    ledger = private.privacy_ledger_
    notes = ["Synthetic rows are drawn from the released model (post-processing); the real test rows are mapped "
             "into the released space by the model's W and box for scoring only."]
    if task == "regression":
        notes.append("RMSEs are in the units of y (each model's scaled RMSE times its half-range of y; test "
                     "responses outside a model's box are clipped to it).")
    if not private.released_projection_:
        notes.append("W is not released (Algorithm 1 or undeclared public rows): the synthetic rows live in an "
                     "anonymous space.")
    return Comparison(private=private, reference=reference, headline=headline, ledger=ledger,
                      guarantee=ledger_text(ledger), notes=tuple(notes))


def _reference_scores(split: Split, K: int):
    """The real training rows' utility: the harness's ``real`` reference (full-dimensional box, no privacy)."""
    reference, Z_fit, y_fit = _real_space(split, "train")
    Z_test = reference.transform(split.X_test)
    if split.task == "unsupervised":
        return reference, evaluate("unsupervised", Z_fit, None, Z_test, None, K=K, labels_real=split.y_test,
                                   random_state=0)
    y_test = reference.transform_y(split.y_test) if split.task == "regression" else split.y_test
    return reference, evaluate(split.task, Z_fit, y_fit, Z_test, y_test, random_state=0)


def _synthetic_scores(private: PCAGauss, split: Split, K: int, real_silhouette) -> dict:
    """The synthetic rows' utility on the held-out real rows (train on synthetic, test on real)."""
    drawn = private.sample()
    Z_syn, y_syn = drawn if isinstance(drawn, tuple) else (drawn, None)
    Z_test = private.transform(split.X_test)
    if split.task == "unsupervised":
        return evaluate("unsupervised", Z_syn, None, Z_test, None, K=K, real_silhouette=real_silhouette,
                        labels_real=split.y_test, random_state=0)
    y_test = private.transform_y(split.y_test) if split.task == "regression" else split.y_test
    return evaluate(split.task, Z_syn, y_syn, Z_test, y_test, random_state=0)
