"""The recommended strict edPLS on the edPLS page (issue #18): its fit beside the references, what it chose
and why in words, its public parameters, and the owner's sheets.

- :func:`compare_recommended`: ``make_strict_edpls`` fitted on the training rows beside plain non-private
  PLS1 (the page's chain and number of components: the page's usual reference), the same estimator without
  noise (the reference of its coefficients) and the private constant predictor
  (``engine.methods.baselines.DPConstantRegressor``) at the same budget, all scored on the test rows;
- :func:`choice_rows`: the fit's ``choices_`` as (what, chose, why) rows for the page;
- :func:`recommended_public_parameters`, :func:`recommended_no_release_reason`: what the shareable report
  shows, and why there is no shareable model file (None when there is one: ``recommended_release.to_json``);
- :func:`recommended_owner_sheets`: the private sheets of the owner's workbook.

Written by hand: glue between the estimators and the page, no math of its own.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from engine.methods.baselines import DPConstantRegressor
from engine.methods.edpls.basis import chain_name
from engine.methods.edpls.estimator import EDPLS
from engine.methods.edpls.recommended import make_strict_edpls
from engine.privacy import noise_generator

__all__ = ["choice_rows", "compare_recommended", "recommended_no_release_reason", "recommended_owner_sheets",
           "recommended_public_parameters", "recommended_references"]


def recommended_references(X, y, train_idx, *, delta: float, y_range, X_public=None, x_bound=None,
                           X_reference=None, n_components_reference: int = 5, preprocessing="snv+sg1") -> tuple:
    """The two noise-free fits beside the recommended one: ``(noise_free, plain)``.

    noise_free: the recommended estimator at epsilon = inf (same public inputs); plain: non-private PLS1 (EDPLS at
    epsilon = inf) on ``X_reference`` (default X) with ``n_components_reference`` components. Neither draws noise,
    so both are fixed by the data and these settings: a server may keep them for every session that asks with the
    same inputs (unlike the private fit, whose noise each session draws afresh). Arguments as
    :func:`compare_recommended`.
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float).ravel()
    Xr = X if X_reference is None else np.asarray(X_reference, dtype=float)
    tr = np.asarray(train_idx)
    noise_free = make_strict_edpls(math.inf, delta, y_range=y_range, X_public=X_public, x_bound=x_bound,
                                   preprocessing=preprocessing).fit(X[tr], y[tr])
    plain = EDPLS(n_components=int(n_components_reference), epsilon=math.inf, mode="paper").fit(Xr[tr], y[tr])
    return noise_free, plain


def compare_recommended(X, y, train_idx, test_idx, *, epsilon: float, delta: float, y_range, X_public=None,
                        x_bound=None, X_reference=None, n_components_reference: int = 5,
                        random_state=None, references=None, preprocessing="snv+sg1") -> dict:
    """The recommended strict fit (``make_strict_edpls``) beside plain non-private PLS1 and the private
    constant predictor at the same budget, all scored on the test rows.

    Parameters
    ----------
    X : (n, m) raw spectra (the estimator applies its row-wise ``preprocessing``); y : (n,).
    train_idx, test_idx : row indices.
    epsilon, delta, y_range, X_public, x_bound : the recommended fit's budget and public inputs (``y_range=None``:
        the estimator's private range; the private constant predictor then clips to that released range,
        post-processing of the fit's DP output).
    preprocessing : the recommended fit's row-wise chain (a name such as "snv+sg1" or a list of steps), used by
        the private fit and its noise-free twin alike.
    X_reference : (n, m) rows for the non-private PLS1 (the page's chain; default X), with
        ``n_components_reference`` components.
    random_state : the private fits' noise (None: fresh OS entropy; a value: a known seed, not proven).
    references : ``(noise_free, plain)`` from :func:`recommended_references` with the same inputs (kept by the
        caller), or None to fit them here.

    Returns
    -------
    dict: private (fitted StrictEDPLS), noise_free (the same estimator at epsilon = inf: its coefficients are
    the private ones' reference), plain (fitted EDPLS at epsilon = inf), constant (fitted DPConstantRegressor,
    its own ledger), pred_private, pred_plain, pred_constant, y_test, rmsep_private, rmsep_plain,
    rmsep_constant, sigma_y_test, and for the data owner only n_train, n_test, max_row_norm_train,
    max_abs_y_train, y_range_train.
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float).ravel()
    Xr = X if X_reference is None else np.asarray(X_reference, dtype=float)
    tr, te = np.asarray(train_idx), np.asarray(test_idx)
    seeds, _ = noise_generator(random_state)  # one stream for both private fits (fresh stays fresh, known known)
    public = dict(y_range=None if y_range is None else tuple(y_range), X_public=X_public, x_bound=x_bound,
                  preprocessing=preprocessing)
    private = make_strict_edpls(epsilon, delta, random_state=seeds, **public).fit(X[tr], y[tr])
    if references is None:
        references = recommended_references(X, y, tr, delta=delta, X_reference=X_reference,
                                            n_components_reference=n_components_reference, **public)
    noise_free, plain = references
    # with no declared range the constant predictor clips to the range the private fit released (a DP output)
    constant_range = tuple(y_range) if y_range is not None else tuple(private.y_range_)
    constant = DPConstantRegressor(epsilon, delta, y_range=constant_range, random_state=seeds).fit(X[tr], y[tr])
    yte = y[te]
    pred_p, pred_0, pred_c = private.predict(X[te]), plain.predict(Xr[te]), constant.predict(X[te])

    def rmsep(pred):
        return float(np.sqrt(np.mean((yte - pred) ** 2)))

    Xtr = X[tr]
    return {
        "private": private, "noise_free": noise_free, "plain": plain, "constant": constant,
        "pred_private": pred_p, "pred_plain": pred_0, "pred_constant": pred_c,
        "y_test": yte, "rmsep_private": rmsep(pred_p), "rmsep_plain": rmsep(pred_0), "rmsep_constant": rmsep(pred_c),
        "sigma_y_test": float(yte.std()), "n_train": int(tr.size), "n_test": int(te.size),
        "max_row_norm_train": float(np.sqrt((Xtr**2).sum(axis=1)).max()),
        "max_abs_y_train": float(np.abs(y[tr]).max()), "y_range_train": (float(y[tr].min()), float(y[tr].max())),
    }


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return "(" + ", ".join(_fmt(x) for x in v) + ")"
    return str(v)


def _budget_text(budget: dict) -> str:
    return "; ".join(f"{name}: ε = {b['epsilon']:.3g}, δ = {b['delta']:.2g}" for name, b in budget.items())


def choice_rows(model) -> list[dict]:
    """What a fitted ``StrictEDPLS`` chose and why, from its ``choices_``: a list of {what, chose, why}.

    Known entries get a sentence each (preprocessing, projection and its dimension, centre, bounds, budget
    split, ridge, model); any other entry is listed as it is, so nothing the estimator reports is hidden.
    """
    c = dict(getattr(model, "choices_", {}) or {})
    rows = []

    def add(what, chose, why=""):
        rows.append({"what": what, "chose": chose, "why": why})

    if "path" in c:
        path = c.pop("path")
        add("Path", "TukeyEM" if path.startswith("TukeyEM") else "moment releases", path)
    if "chain" in c:
        add("Preprocessing", f"'{c.pop('chain')}'", "row-wise: each spectrum is transformed on its own, nothing is "
            "fitted on the private rows, so one row changes one transformed row")
    if "basis" in c:
        d, d_max = c.pop("d", None), c.pop("d_max", None)
        dim = "" if d is None else f"; {d} of {d_max} axes released" if d_max is not None else f"; {d} axes"
        add("Projection", f"{c.pop('basis')}{dim}", c.pop("d_why", "") or "")
    if "centre_source" in c:
        add("Centre of x", c.pop("centre_source"))
    if "x_bound" in c:
        add("Bound on x", _fmt(c.pop("x_bound")), c.pop("x_bound_source", "") or "")
    if "y_center" in c or "y_bound" in c:
        add("Centre and bound of y", f"{_fmt(c.pop('y_center', math.nan))} ± {_fmt(c.pop('y_bound', math.nan))}",
            c.pop("y_source", "") or "")
    if isinstance(c.get("budget"), dict):
        add("Budget split", _budget_text(c.pop("budget")), "the X-y cross-moments carry the first PLS weight and "
            "get their own release")
    lam = c.pop("ridge_lambda", None)
    if lam is not None:
        add("Ridge", f"λ = {_fmt(lam)}", "scaled to the noise of the released moments, as AdaSSP does")
    if "model" in c:
        k = c.pop("k", None)
        add("Model", c.pop("model"), "" if k in (None, "ridge", 0) else f"k = {k} components")
    if "intercept" in c:
        add("Intercept", c.pop("intercept"))
    c.pop("n_hat", None)  # a DP release used for the dimension; not a choice of its own
    for key, value in c.items():
        if value is not None:
            add(str(key), _fmt(value))
    return rows


def recommended_no_release_reason(model) -> str | None:
    """Why the recommended fit has no shareable model file, or None when it has one
    (``engine.methods.edpls.recommended_release.shareable_release`` / ``to_json``: every private fit, epsilon < inf)."""
    if not len(model.privacy_ledger_):
        return "nothing was released with noise (ε = ∞, no privacy): the model belongs in the owner's workbook"
    return None


def recommended_public_parameters(model, **declared) -> dict:
    """The recommended fit's public parameters (budget, declared inputs, its choices), plus ``declared``."""
    p = model.get_params(deep=False)
    out = {"estimator": "recommended strict edPLS (make_strict_edpls)", "epsilon": p["epsilon"],
           "delta": p["delta"],
           "y_range": list(p["y_range"]) if p["y_range"] is not None else
           f"none declared: estimated privately as {_fmt(tuple(float(v) for v in model.y_range_))}",
           "preprocessing": chain_name(p["preprocessing"]), "n_components": p["n_components"],
           "calibration": p["calibration"]}
    if p.get("x_bound") is not None:
        out["x_bound"] = p["x_bound"]
    out.update({f"chose: {r['what']}": r["chose"] for r in choice_rows(model)})
    out.update(declared)
    return out


def recommended_owner_sheets(result: dict, *, feature_names=None, test_rows=None, sweeps: dict | None = None) -> dict:
    """Private sheets of the owner's workbook from :func:`compare_recommended` output: "test set" (y and the
    three predictions), "private statistics", "choices", "coefficients" (private and noise-free, on the
    preprocessed channels), "exact ledger" and the sweeps."""
    private, noise_free = result["private"], result["noise_free"]
    yte = np.asarray(result["y_test"], dtype=float)
    rows = np.arange(yte.size) if test_rows is None else np.asarray(test_rows)
    test = pd.DataFrame({"row": rows, "y_test": yte, "pred_private": result["pred_private"],
                         "pred_nonprivate": result["pred_plain"], "pred_private_constant": result["pred_constant"]})
    m = len(private.coef_)
    names = [str(v) for v in (range(m) if feature_names is None else feature_names)]
    coef = pd.DataFrame({"channel (preprocessed)": [*names, "intercept"],
                         "coef_private": [*private.coef_, private.intercept_],
                         "coef_noise_free": [*noise_free.coef_, noise_free.intercept_]})
    stats = {
        "n_train (exact)": result["n_train"], "n_test (exact)": result["n_test"],
        "RMSEP private (test rows)": result["rmsep_private"], "RMSEP non-private (test rows)": result["rmsep_plain"],
        "RMSEP private constant predictor (test rows)": result["rmsep_constant"],
        "private constant": result["constant"].constant_, "σ_y (test rows)": result["sigma_y_test"],
        "largest training row norm": result["max_row_norm_train"], "largest training |y|": result["max_abs_y_train"],
        "training y range": result["y_range_train"],
    }
    out = {"test set": test, "private statistics": stats, "choices": pd.DataFrame(choice_rows(private)),
           "coefficients": coef, "exact ledger": private.privacy_ledger_.to_frame()}
    for name, table in (sweeps or {}).items():
        if table is not None:
            out[str(name)[:31]] = table
    return out
