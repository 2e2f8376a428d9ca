"""AdaSSP's shareable release: built only with ``engine.release.manifest.build_release`` from the field list below.

==============================  ==========================================================================
field                           provenance
==============================  ==========================================================================
coef_, intercept_               dp: post-processing of the three releases (lambda_min, X'X, X'y)
ridge_lambda_                   dp: the adaptive ridge, from the lambda_min release and the public settings
n_features_in_                  public: the data's schema
params                          epsilon, delta, fit_intercept, rho, calibration (settings); x_bound, y_bound
                                and the centre when declared public
travel fields                   public (``engine.release.travel``): channels, response, unit, chain, versions
==============================  ==========================================================================

Never in it: the noise seed and anything computed from the rows without noise.
"""
from __future__ import annotations

import numpy as np

from engine.privacy.wording import ledger_text
from engine.release.manifest import PUBLIC_BOUND, PUBLIC_CENTRE, Field, build_release, release_to_json, setting_fields
from engine.release.manifest import estimator_from_release as _from_release
from engine.release.travel import ModelCard, travel_fields
from engine.reporting.report import plain_text

from .estimator import RELEASES, AdaSSP

__all__ = ["FORMAT", "estimator_from_release", "shareable_release", "to_json"]

#: Format tag of the shareable release.
FORMAT = "privalab.adassp.release/1"


def shareable_release(model: AdaSSP, *, card: ModelCard | None = None) -> dict:
    """The shareable release of a fitted AdaSSP (fields: module docstring).

    Parameters
    ----------
    model : fitted AdaSSP with a non-empty ledger (epsilon < inf).
    card : ModelCard or None, the declared-public channel names, response name and unit and the caller's chain.

    Returns
    -------
    dict from :func:`engine.release.manifest.build_release` (format :data:`FORMAT`).
    """
    if not isinstance(model, AdaSSP) or not hasattr(model, "coef_"):
        raise ValueError("a fitted AdaSSP is required")
    if not len(model.privacy_ledger_):
        raise ValueError("no shareable release: nothing was released with noise (ε = ∞, no privacy)")
    every = ", ".join(RELEASES)
    p = model.get_params(deep=False)
    fields = [Field("n_features_in_", int(model.n_features_in_), "public", "the data's schema (number of columns)"),
              Field("coef_", np.asarray(model.coef_, dtype=float), "dp", every),
              Field("intercept_", float(model.intercept_), "dp", every),
              Field("ridge_lambda_", float(model.ridge_lambda_), "dp", RELEASES[0])]
    fields += setting_fields(p, ["epsilon", "delta", "fit_intercept", "rho", "calibration"])
    fields += [Field(k, float(p[k]), "public", PUBLIC_BOUND, role="param") for k in ("x_bound", "y_bound")]
    if p["x_center"] is not None:
        fields += [Field("x_center", np.asarray(p["x_center"], dtype=float), "public", PUBLIC_CENTRE, role="param"),
                   Field("y_center", float(p["y_center"]), "public", PUBLIC_CENTRE, role="param")]
    fields += travel_fields(model, card)
    led = model.privacy_ledger_
    return build_release("adassp", FORMAT, fields, led, guarantee=plain_text(ledger_text(led)))


def to_json(model: AdaSSP, *, card: ModelCard | None = None, **json_kwargs) -> str:
    """The shareable release of ``model`` as strict JSON text."""
    return release_to_json(shareable_release(model, card=card), **json_kwargs)


def estimator_from_release(data) -> AdaSSP:
    """A predicting AdaSSP rebuilt from its shareable release (dict or JSON text)."""
    model = _from_release(data, AdaSSP, FORMAT)
    model.coef_ = np.asarray(model.coef_, dtype=float)
    return model
