"""The shareable release of the recommended strict edPLS (``StrictEDPLS``): its explicit field list with provenance
(``shareable_release``), its JSON text (``to_json``) and the predicting estimator rebuilt from it
(``estimator_from_release``). The estimator and its fit are ``engine.methods.edpls.recommended``; this module only
reads a fitted model (as ``engine.methods.edpls.release`` does for plain ``EDPLS``).
"""
from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from engine.methods.edpls.basis import chain_name, rowwise_chain
from engine.methods.edpls.recommended import StrictEDPLS
from engine.methods.edpls.recommended_limits import RELEASES
from engine.privacy.ranges import RANGE_RELEASE, RANGE_RELEASE_2, ZOOM_RELEASE
from engine.privacy.wording import ledger_text
from engine.release.manifest import CALLER, PUBLIC_BOUND, SETTING, Field, build_release, release_to_json
from engine.release.manifest import estimator_from_release as _from_release
from engine.release.travel import ModelCard, travel_fields
from engine.reporting.report import plain_text

__all__ = ["FORMAT", "estimator_from_release", "shareable_release", "to_json"]

#: Format tag of the shareable release (``shareable_release``).
FORMAT = "privalab.edpls_recommended.release/1"


def shareable_release(model: StrictEDPLS, *, public_inputs: dict | None = None, card: ModelCard | None = None) -> dict:
    """The shareable release of a fitted ``StrictEDPLS``, from an explicit field list (``build_release``).

    ==========================  ==================================================================================
    field                       provenance
    ==========================  ==================================================================================
    coef_, intercept_           dp: post-processing of every release in the fit's ledger (the count sets d; the
                                moments, or the sum of y~ for the constant fallback, set the values)
    components_                 dp: the public axes (principal axes of the preprocessed X_public, or the
                                data-independent B-splines) truncated at d, set by the count release
    x_center_                   public: the centre on those axes (mean of the projected X_public, or 0)
    n_features_in_              public: the data's schema
    params                      epsilon, delta, y_range, preprocessing, n_components, calibration (settings);
                                x_bound (the declared or X_public-derived public bound)
    ==========================  ==================================================================================

    Never in it: X_public itself, the noisy count n_hat, the seed, row counts. Predict with
    ``estimator_from_release`` (the row-wise chain is rebuilt from its public name).

    Parameters
    ----------
    model : fitted StrictEDPLS with a non-empty ledger (epsilon < inf).
    public_inputs : dict name -> value, declared-public "info" fields that ``card`` does not carry (see ``ModelCard``).
    card : ModelCard or None, the declared-public channel names, response name and unit (``engine.release.travel``);
        the chain field is the estimator's own ``preprocessing``.

    Returns
    -------
    dict from :func:`engine.release.manifest.build_release` (format :data:`FORMAT`).
    """
    check_is_fitted(model, "coef_")
    if not len(model.privacy_ledger_):
        raise ValueError("no shareable release: nothing was released with noise (ε = ∞, no privacy)")
    c = model.choices_
    names = [r.name for r in model.privacy_ledger_.entries]
    p = model.get_params(deep=False)
    fields = [Field("n_features_in_", int(model.n_features_in_), "public", "the data's schema (number of channels)"),
              Field("coef_", np.asarray(model.coef_, dtype=float), "dp", ", ".join(names)),
              Field("intercept_", float(model.intercept_), "dp", ", ".join(names)),
              Field("components_", np.asarray(model.components_, dtype=float), "dp", RELEASES[0]),
              Field("x_center_", np.asarray(model.x_center_, dtype=float), "public", c["centre_source"])]
    fields += [Field(k, p[k], "public", SETTING, role="param")
               for k in ("epsilon", "delta", "preprocessing", "n_components", "calibration")]
    fields += [Field("y_range", [float(v) for v in p["y_range"]], "public", "user-declared physical range of y",
                     role="param") if p["y_range"] is not None else
               Field("y_range", [float(v) for v in model.y_range_], "dp",
                     ", ".join(n for n in names if n in (RANGE_RELEASE, RANGE_RELEASE_2, ZOOM_RELEASE)), role="param"),
               Field("x_bound", float(c["x_bound"]), "public",
                     PUBLIC_BOUND if p["x_bound"] is not None else c["x_bound_source"], role="param")]
    if getattr(model, "msc_spectrum_", None) is not None:
        fields.append(Field("msc_spectrum_", np.asarray(model.msc_spectrum_, dtype=float), "public",
                            "mean of the declared-public X_public: the 'msc_public' step's reference spectrum"))
    fields += [Field(str(k), v, "public", CALLER, role="info") for k, v in (public_inputs or {}).items()]
    fields += travel_fields(model, card, chain=chain_name(model.preprocessing))
    led = model.privacy_ledger_
    return build_release("edpls_recommended", FORMAT, fields, led, guarantee=plain_text(ledger_text(led)))


def to_json(model: StrictEDPLS, *, card: ModelCard | None = None, **json_kwargs) -> str:
    """The shareable release of ``model`` as strict JSON text."""
    return release_to_json(shareable_release(model, card=card), **json_kwargs)


def estimator_from_release(data) -> StrictEDPLS:
    """A predicting ``StrictEDPLS`` rebuilt from its shareable release (dict or JSON text): the row-wise chain
    is rebuilt from its public name, coef_ and intercept_ come from the release."""
    model = _from_release(data, StrictEDPLS, FORMAT)
    model.y_range = None if model.y_range is None else tuple(model.y_range)
    for name in ("coef_", "components_", "x_center_"):
        setattr(model, name, np.asarray(getattr(model, name), dtype=float))
    model.preprocess_ = rowwise_chain(model.preprocessing, int(model.n_features_in_),
                                      getattr(model, "msc_spectrum_", None))
    return model
