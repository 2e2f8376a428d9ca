"""edPLS exports (issue #15): the shareable release of a fit and the owner's private sheets.

Two kinds, never mixed:

- :func:`shareable_release` (and :func:`to_json`): what a data owner may hand to others, built only with
  :func:`engine.release.manifest.build_release` from the explicit field list below. Each field is either a DP
  output (provenance "dp", naming the ledger release it is computed from) or an input the user declared
  public (provenance "public"). :func:`model_from_dict` / :func:`from_json` rebuild a predictor from it.
- :func:`owner_sheets`: everything else the owner may want for their own judgement (the non-private
  reference model, test-set values and predictions, exact counts, clipped rows, data ranges, the exact
  ledger, sweep tables), for the owner's workbook (:class:`engine.release.workbook.OwnerWorkbook`).

What the shareable release holds, per mode:

========================  =====================================  =====================================
field                     strict                                 paper (Algorithm 1)
========================  =====================================  =====================================
coef_                     dp: post-processing of Z'Z             dp: from w[j], p[j], c[j]
x_weights_, x_loadings_   dp: post-processing of Z'Z             dp: w[j] (renormalised), p[j]
y_loadings_               dp: post-processing of Z'Z             dp: c[j]
condition_number_         dp: post-processing                    dp: post-processing of w, p
intercept_, x_mean_,      dp (private centring: the noisy        left out: Algorithm 1 centres on the
y_mean_                   means of the same release) or public   exact private means and releases none
                          (a declared public centre; left out
                          with sensitivity_source="data")
n_features_in_            public: the data's schema              public: the data's schema
params                    n_components, epsilon, delta, mode,    n_components, epsilon, delta, mode,
                          calibration, centering, bounds and     calibration, noise_std, ymax, budget,
                          centre when declared public            centering
========================  =====================================  =====================================

Never in it: the noise seed (``random_state``), clip counts, row counts, the training scores (paper
mode's T has one entry per private row: its length is the exact row count), data-derived bounds
(strict with ``sensitivity_source="data"``) and the exact data-derived sensitivities of paper mode:
:func:`shareable_ledger` records those releases per unit sensitivity (their noise multiplier and
epsilon, which do not depend on the data when the noise std is sigma). Paper mode with the authors'
std sigma^2 has no shareable release: its noise multiplier and achieved epsilon are functions of the
private largest row norm (:func:`no_release_reason` says so).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from engine.methods.edpls.core import QUANTITIES
from engine.methods.edpls.estimator import EDPLS
from engine.methods.edpls.strict import STRICT_RELEASE
from engine.privacy import PrivacyLedger
from engine.privacy.wording import ledger_text
from engine.release.manifest import (
    CALLER,
    PUBLIC_CENTRE,
    Field,
    build_release,
    declared_bound_fields,
    release_to_json,
    setting_fields,
)
from engine.release.manifest import estimator_from_release as _from_release
from engine.release.travel import ModelCard, travel_fields
from engine.reporting.report import plain_text

__all__ = ["FORMAT", "estimator_from_release", "from_json", "model_from_dict", "no_release_reason", "owner_sheets",
           "public_parameters", "shareable_ledger", "shareable_release", "to_json"]

#: Format tag of the shareable release.
FORMAT = "privalab.edpls.release/1"

_SCHEMA = "the data's schema (number of columns: public)"


def _fitted(model: EDPLS) -> None:
    if not isinstance(model, EDPLS) or not hasattr(model, "coef_") or not hasattr(model, "privacy_ledger_"):
        raise ValueError("a fitted EDPLS is required")


def no_release_reason(model: EDPLS) -> str | None:
    """Why this fitted model has no shareable release (None when it has one).

    No noise (epsilon = inf): nothing is covered by a guarantee. Paper mode with the authors' noise std
    sigma^2: the applied noise and the achieved epsilon are functions of the private sensitivities.
    """
    _fitted(model)
    if not len(model.privacy_ledger_):
        return "nothing was released with noise (ε = ∞, no privacy): the model belongs in the owner's workbook"
    if model.mode == "paper" and model.noise_std == "sigma_squared":
        return ("with the authors' noise std σ² the applied noise and the achieved ε are functions of the private "
                "largest row norm and |y|, so even the ledger would publish them; use σ (or strict mode)")
    return None


def shareable_ledger(ledger_or_model) -> PrivacyLedger:
    """The ledger as it may be published: releases whose sensitivity was computed from the private data
    (paper mode; strict with data-derived bounds) are recorded per unit sensitivity (sensitivity 1, scale
    = the noise multiplier), so neither the data-derived bound nor the noise std that reveals it is
    published. Epsilon, delta, status, caveats and every total are unchanged (they depend on the
    multiplier only). Public-sensitivity releases are kept as they are.
    """
    led = ledger_or_model.privacy_ledger_ if isinstance(ledger_or_model, EDPLS) else ledger_or_model
    out = PrivacyLedger(neighbouring=led.neighbouring, caveats=list(led.caveats), unit=led.unit,
                        accountant=led.accountant)  # the accountant the fit was calibrated for, kept
    for r in led.entries:
        if r.sensitivity_source == "data" and r.sensitivity > 0:
            r = dataclasses.replace(r, sensitivity=1.0, scale=float(r.noise_multiplier),
                                    note=r.note + " [published per unit sensitivity: the data-derived sensitivity "
                                                  "and noise std are private]")
        out.add(r)
    return out


def _bounds_public(model: EDPLS) -> bool:
    return model.mode == "strict" and model.sensitivity_source == "public"


def _param_fields(model: EDPLS) -> list[Field]:
    p = model.get_params(deep=False)
    names = ["n_components", "epsilon", "delta", "mode", "calibration", "centering"]
    if model.mode == "paper":
        names += ["noise_std", "ymax", "budget"]
    fields = setting_fields(p, names)
    if model.mode == "strict":
        fields.append(Field("sensitivity_source", p["sensitivity_source"], "public", "the caller's declaration",
                            role="param"))
        fields += setting_fields(p, ["private_intercept"])
        if _bounds_public(model):
            fields += declared_bound_fields(p)
    return fields


def public_parameters(model: EDPLS, **declared) -> dict:
    """The parameters of the shareable release (name -> value), plus ``declared`` public inputs (e.g. the
    preprocessing name): what a page puts in ``RunReport.public_parameters``. Never a seed."""
    _fitted(model)
    out = {f.name: f.value for f in _param_fields(model)}
    out.update(declared)
    return out


def _paper_sources(k: int, which: str) -> str:
    return ", ".join(f"{q}[{j}]" for j in range(1, k + 1) for q in which)


def shareable_release(model: EDPLS, *, public_inputs: dict | None = None, card: ModelCard | None = None) -> dict:
    """The shareable release of a fitted EDPLS (see the module docstring for the field list).

    Parameters
    ----------
    model : fitted EDPLS with a non-empty ledger.
    public_inputs : dict name -> value, declared-public "info" fields that ``card`` does not carry (see ``ModelCard``).
    card : ModelCard or None, the declared-public channel names, response name and unit and the caller's chain
        (``engine.release.travel``): the release's travel fields, so that ``engine.release.predict`` can apply it.

    Returns
    -------
    dict from :func:`engine.release.manifest.build_release` (format :data:`FORMAT`).

    Raises
    ------
    ValueError
        When there is nothing to share (:func:`no_release_reason`).
    """
    _fitted(model)
    why = no_release_reason(model)
    if why is not None:
        raise ValueError(f"no shareable release: {why}")
    k = int(model.n_components)
    fields = [Field("n_features_in_", int(model.n_features_in_), "public", _SCHEMA)]
    if model.mode == "strict":
        src = STRICT_RELEASE
        fields += [Field("coef_", model.coef_, "dp", src), Field("intercept_", float(model.intercept_), "dp", src),
                   Field("x_weights_", model.x_weights_, "dp", src), Field("x_loadings_", model.x_loadings_, "dp", src),
                   Field("y_loadings_", model.y_loadings_, "dp", src),
                   Field("condition_number_", float(model.condition_number_), "dp", src)]
        # private centring (no public centre, or a public one with private_intercept): noisy means from the
        # same release (around the public centre, which must then be public itself)
        private = model.centering and (model.x_center is None or getattr(model, "private_intercept", False))
        if private and (model.x_center is None or _bounds_public(model)):
            fields += [Field("x_mean_", model.x_mean_, "dp", src), Field("y_mean_", float(model.y_mean_), "dp", src)]
        elif not private and _bounds_public(model):  # a public centre (or none: zeros)
            origin = PUBLIC_CENTRE if model.centering else "no centring (the constant 0)"
            fields += [Field("x_mean_", model.x_mean_, "public", origin),
                       Field("y_mean_", float(model.y_mean_), "public", origin)]
        else:  # a centre the caller may have read off the data: neither it nor the intercept built on it
            fields = [f for f in fields if f.name != "intercept_"]
    else:
        fields += [Field("coef_", model.coef_, "dp", _paper_sources(k, "wpc")),
                   Field("x_weights_", model.x_weights_, "dp", _paper_sources(k, "w")),
                   Field("x_loadings_", model.x_loadings_, "dp", _paper_sources(k, "p")),
                   Field("y_loadings_", model.y_loadings_, "dp", _paper_sources(k, "c")),
                   Field("condition_number_", float(model.condition_number_), "dp", _paper_sources(k, "wp"))]
    fields += _param_fields(model)
    for name, value in (public_inputs or {}).items():
        fields.append(Field(str(name), value, "public", CALLER, role="info"))
    fields += travel_fields(model, card)
    led = shareable_ledger(model)
    notes = []
    if model.mode == "paper":
        notes.append("Paper mode centres on the exact private training means, which Algorithm 1 does not release: "
                     "the intercept and the means are not in this release (predict needs a centre of your own).")
    return build_release("edpls", FORMAT, fields, led, guarantee=plain_text(ledger_text(led)), extra_notes=notes)


def to_json(model: EDPLS, *, card: ModelCard | None = None, **json_kwargs) -> str:
    """The shareable release of ``model`` as strict JSON text (:func:`shareable_release`)."""
    return release_to_json(shareable_release(model, card=card), **json_kwargs)


def estimator_from_release(data) -> EDPLS:
    """An EDPLS rebuilt from a shareable release (dict or JSON text): its public parameters, its DP
    attributes and the (published) ledger. A paper-mode release has no intercept: ``predict`` says so."""
    model = _from_release(data, EDPLS, FORMAT)
    if hasattr(model, "coef_"):
        model.coef_ = np.asarray(model.coef_, dtype=float)
    return model


#: The old names: both now read the shareable release.
model_from_dict = estimator_from_release
from_json = estimator_from_release


# =============================================================================================
# The owner's sheets
# =============================================================================================
def owner_sheets(result: dict, *, feature_names=None, test_rows=None, sweeps: dict | None = None) -> dict:
    """Private sheets for the owner's workbook from ``compare_private_plain`` output.

    Parameters
    ----------
    result : dict from :func:`engine.methods.edpls.compare_private_plain`.
    feature_names : (m,) channel names (default 0..m-1).
    test_rows : (n_test,) row numbers of the test rows in the owner's table (default 0..n_test-1).
    sweeps : extra tables (name -> DataFrame), e.g. the RMSEP sweep and the sample-size simulation.

    Returns
    -------
    dict sheet name -> DataFrame or dict: "reference model" (non-private and private coefficients),
    "test set" (y and both predictions), "private statistics" (exact counts, clipped rows, ranges,
    the exact means), "exact ledger" (with the data-derived sensitivities of paper mode), "paper
    sensitivities" (paper mode) and the sweeps.
    """
    private, plain = result["private"], result["plain"]
    m = private.coef_.shape[0]
    names = [str(c) for c in (range(m) if feature_names is None else feature_names)]
    ref = pd.DataFrame({"channel": [*names, "intercept"],
                        "coef_nonprivate": [*plain.coef_, plain.intercept_],
                        "coef_private": [*private.coef_, getattr(private, "intercept_", math.nan)]})
    yte = np.asarray(result["y_test"], dtype=float)
    rows = np.arange(yte.size) if test_rows is None else np.asarray(test_rows)
    test = pd.DataFrame({"row": rows, "y_test": yte, "pred_private": result["pred_private"],
                         "pred_nonprivate": result["pred_plain"]})
    stats = {
        "n_train (exact)": result.get("n_train"), "n_test (exact)": result.get("n_test"),
        "RMSEP private (test rows)": result["rmsep_private"], "RMSEP non-private (test rows)": result["rmsep_plain"],
        "σ_y (test rows)": result["sigma_y_test"],
        "largest training row norm": result["max_row_norm_train"], "largest training |y|": result["max_abs_y_train"],
        "training y range": result.get("y_range_train"),
    }
    if private.mode == "strict":
        rep = private.clip_report_ or {}
        stats.update({"rows clipped": rep.get("n_clipped"), "rows clipped (x)": rep.get("n_clipped_x"),
                      "rows clipped (y)": rep.get("n_clipped_y"), "row scale S": rep.get("row_scale")})
    else:
        stats.update({"exact training mean of y": private.y_mean_})
    out = {"reference model": ref, "test set": test, "private statistics": stats,
           "exact ledger": private.privacy_ledger_.to_frame()}
    if private.mode == "paper":
        sens = private.sensitivities_.reset_index()
        sens.columns = ["component", *(f"sensitivity {q}" for q in QUANTITIES)]
        out["paper sensitivities"] = sens
        out["exact training means of x"] = pd.DataFrame({"channel": names, "mean": private.x_mean_})
    for name, table in (sweeps or {}).items():
        if table is not None:
            out[str(name)[:31]] = table
    return out
