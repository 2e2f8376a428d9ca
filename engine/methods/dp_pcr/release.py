"""DP-PCR exports: the shareable release of a fit and the owner's private sheets, never mixed.

- :func:`shareable_release` / :func:`to_json`: built only with :func:`engine.release.manifest.build_release` from the
  explicit field list below; :func:`estimator_from_release` rebuilds a predictor from it.
- :func:`owner_sheets`: the reference model, the test rows and both predictions, the clip count and the
  exact ledger, for the owner's workbook.

==============================  ==========================================================================
field                           provenance
==============================  ==========================================================================
coef_, components_,             dp: post-processing of the one release Z'Z
explained_variance_(ratio_)
intercept_, x_mean_, y_mean_    dp (private centring: the noisy means of the same release) or public (a
                                declared public centre, or zeros without centring); left out when the
                                bounds (and so possibly the centre) were read off the data
n_features_in_                  public: the data's schema
params                          n_components, epsilon, delta, calibration, centring, sensitivity_source;
                                bounds and centre when declared public
==============================  ==========================================================================

Never in it: the noise seed, the clip count, row counts, test values, the reference model and data-derived
bounds (published ledger: releases with data-derived sensitivities per unit sensitivity, as for edPLS).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.methods.contract import Comparison
from engine.methods.edpls import shareable_ledger
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

from .estimator import DPPCR, STRICT_RELEASE
from .evaluation import reference_coefficients

__all__ = ["FORMAT", "estimator_from_release", "no_release_reason", "owner_sheets", "public_parameters",
           "shareable_release", "to_json"]

#: Format tag of the shareable release.
FORMAT = "privalab.dp_pcr.release/1"

_SCHEMA = "the data's schema (number of columns: public)"


def _fitted(model) -> None:
    if not isinstance(model, DPPCR) or not hasattr(model, "coef_"):
        raise ValueError("a fitted DPPCR is required")


def no_release_reason(model: DPPCR) -> str | None:
    """Why this fitted model has no shareable release (None when it has one): only epsilon = inf."""
    _fitted(model)
    if not len(model.privacy_ledger_):
        return "nothing was released with noise (ε = ∞, no privacy): the model belongs in the owner's workbook"
    return None


def _param_fields(model: DPPCR) -> list[Field]:
    p = model.get_params(deep=False)
    names = ["n_components", "epsilon", "delta", "calibration", "centring", "sensitivity_source"]
    fields = setting_fields(p, names)
    if model.sensitivity_source == "public":
        fields += declared_bound_fields(p)
    return fields


def _centre_fields(model: DPPCR) -> list[Field]:
    """The intercept and the means: DP under private centring, public for a declared centre (or none)."""
    private_centring = model.centring and model.x_center is None
    if private_centring:
        prov, origin = "dp", STRICT_RELEASE
    elif model.sensitivity_source == "public":
        prov, origin = "public", PUBLIC_CENTRE if model.centring else "no centring (the constant 0)"
    else:  # a centre the caller may have read off the data: neither it nor the intercept built on it
        return []
    fields = [Field("x_mean_", model.x_mean_, prov, origin), Field("y_mean_", float(model.y_mean_), prov, origin)]
    # the intercept mixes the DP coefficients with the centre: DP output computed with a public input
    return [*fields, Field("intercept_", float(model.intercept_), "dp", STRICT_RELEASE)]


def public_parameters(model: DPPCR, **declared) -> dict:
    """The parameters of the shareable release (name -> value) plus ``declared`` public inputs. Never a seed."""
    _fitted(model)
    return {**{f.name: f.value for f in _param_fields(model)}, **declared}


def shareable_release(model: DPPCR, *, public_inputs: dict | None = None, card: ModelCard | None = None) -> dict:
    """The shareable release of a fitted DPPCR (fields: module docstring).

    Parameters
    ----------
    model : fitted DPPCR with a non-empty ledger.
    public_inputs, card : as for :func:`engine.methods.edpls.release.shareable_release`.

    Returns
    -------
    dict from :func:`engine.release.manifest.build_release` (format :data:`FORMAT`).
    """
    why = no_release_reason(model)
    if why is not None:
        raise ValueError(f"no shareable release: {why}")
    src = STRICT_RELEASE
    fields = [Field("n_features_in_", int(model.n_features_in_), "public", _SCHEMA),
              Field("coef_", model.coef_, "dp", src), Field("components_", model.components_, "dp", src),
              Field("explained_variance_", model.explained_variance_, "dp", src),
              Field("explained_variance_ratio_", model.explained_variance_ratio_, "dp", src)]
    fields += _centre_fields(model) + _param_fields(model)
    fields += [Field(str(k), v, "public", CALLER, role="info") for k, v in (public_inputs or {}).items()]
    fields += travel_fields(model, card)
    led = shareable_ledger(model.privacy_ledger_)
    return build_release("dp_pcr", FORMAT, fields, led, guarantee=plain_text(ledger_text(led)))


def to_json(model: DPPCR, *, card: ModelCard | None = None, **json_kwargs) -> str:
    """The shareable release of ``model`` as strict JSON text."""
    return release_to_json(shareable_release(model, card=card), **json_kwargs)


def estimator_from_release(data) -> DPPCR:
    """A DPPCR rebuilt from a shareable release (dict or JSON text); without a centre it cannot predict."""
    model = _from_release(data, DPPCR, FORMAT)
    for name in ("coef_", "components_", "explained_variance_", "explained_variance_ratio_", "x_mean_"):
        if hasattr(model, name):
            setattr(model, name, np.asarray(getattr(model, name), dtype=float))
    return model


def owner_sheets(comparison: Comparison, test, *, feature_names=None, test_rows=None, sweeps: dict | None = None,
                 private_statistics: dict | None = None) -> dict:
    """Private sheets for the owner's workbook from :func:`engine.methods.dp_pcr.compare`.

    Parameters
    ----------
    comparison : the Comparison of one fit.
    test : (X_test, y_test), the test rows it was scored on.
    feature_names : (m,) channel names; test_rows : (n_test,) row numbers in the owner's table.
    sweeps : extra tables (name -> DataFrame), e.g. the RMSEP-vs-ε sweep.
    private_statistics : extra exact numbers for the owner (name -> value).

    Returns
    -------
    dict sheet name -> DataFrame or dict: "reference model", "test set", "private statistics", "exact ledger"
    and the sweeps.
    """
    private, reference = comparison.private, comparison.reference
    X_test, y_test = (np.asarray(a, dtype=float) for a in test)
    m = private.coef_.shape[0]
    names = [str(c) for c in (range(m) if feature_names is None else feature_names)]
    ref_coef, ref_intercept = reference_coefficients(reference)
    ref = pd.DataFrame({"channel": [*names, "intercept"], "coef_nonprivate": [*ref_coef, ref_intercept],
                        "coef_private": [*private.coef_, private.intercept_]})
    pred_p, pred_0 = private.predict(X_test), reference.predict(X_test)
    rows = np.arange(y_test.size) if test_rows is None else np.asarray(test_rows)
    test_sheet = pd.DataFrame({"row": rows, "y_test": y_test, "pred_private": pred_p, "pred_nonprivate": pred_0})
    stats = {**comparison.headline, "n_test (exact)": int(y_test.size), "rows clipped (training)": private.n_clipped_,
             "σ_y (test rows)": float(y_test.std()),
             **(private_statistics or {})}
    out = {"reference model": ref, "test set": test_sheet, "private statistics": stats,
           "exact ledger": private.privacy_ledger_.to_frame()}
    for name, table in (sweeps or {}).items():
        if table is not None:
            out[str(name)[:31]] = table
    return out
