"""The worker tasks several pages share (``ui.runtime.jobs``): the chemometric staples' reference fit (edPLS, DP-PCR).

A job's function must be importable by name in a worker process; a page module draws itself when imported, so
what a page composed from engine calls lives beside the page (``ui/<page>/tasks.py``), and what several pages
compose lives here. Nothing here decides what runs where: that is ``ui.runtime.jobs.run_upload`` (uploads in a
worker, sample sets in the server process).
"""
from __future__ import annotations

__all__ = ["reference_diagnostics"]


def reference_diagnostics(X_train, y_train, X_test, k: int, method: str, train_rows, test_rows) -> tuple:
    """The chemometric staples' reference fit (PLS or PCR, ``k`` components): its loadings, VIP (PLS only) and
    T² / Q diagnostics. X_train : (n_train, m), y_train : (n_train,), X_test : (n_test, m)."""
    from engine.methods.chemometrics import fit_reference, outlier_diagnostics, reference_loadings, vip

    model = fit_reference(X_train, y_train, k, method)
    return (reference_loadings(model), vip(model) if method == "pls" else None,
            outlier_diagnostics(model, X_train, X_test, train_rows=train_rows, test_rows=test_rows))
