"""DP-CCA exports: the shareable release and the owner's sheets of one fit.

Exports (issue #15), never mixed: ``shareable_release(model)`` (and ``to_json``) holds the DP outputs
(canonical correlations, weights, the noisy moments and, with private centring, the noisy means:
all post-processing of the one release) and the declared-public inputs (budget, bounds, centre,
K, calibration), built with ``engine.release.build_release`` from an explicit field list;
``owner_sheets(...)`` holds what only the data owner may see (the non-private reference CCA,
correlations on the held-out private rows, clip counts, the exact row counts).

"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.methods.dp_cca.estimator import DPCCA, NOT_DP_PROJECTIONS, RELEASE_NAME
from engine.privacy.wording import ledger_text
from engine.release import (
    CALLER,
    PUBLIC_BOUND,
    PUBLIC_CENTRE,
    SETTING,
    Field,
    build_release,
    estimator_from_release,
    release_to_json,
)
from engine.report import plain_text

__all__ = ["FORMAT", "model_from_dict", "no_release_reason", "owner_sheets", "public_parameters",
           "shareable_release", "to_json"]

#: Format tag of the shareable release.
FORMAT = "privalab.dp_cca.release/1"

_SCHEMA = "the data's schema (number and names of columns: public)"
_CALIBRATION = "calibration from the public epsilon, delta, sensitivity and N (N is public under replace-one)"
_CONSTRUCTION = "the construction and the user-declared public bounds"


def _fitted(model) -> None:
    if not isinstance(model, DPCCA) or not hasattr(model, "x_weights_") or not hasattr(model, "privacy_ledger_"):
        raise ValueError("a fitted DPCCA is required")


def no_release_reason(model: DPCCA) -> str | None:
    """Why this fitted model has no shareable release (None when it has one).

    eps = inf: nothing was released with noise. Paper mode: the centre is the exact private mean and
    the weights are scaled by the private largest row norms, so the outputs carry those numbers.
    """
    _fitted(model)
    if not len(model.privacy_ledger_):
        return "nothing was released with noise (ε = ∞, no privacy): the model belongs in the owner's workbook"
    if model.mode == "paper":
        return ("paper mode centres at the exact private means and scales by the private largest row norms; the "
                "weights and the centre carry those numbers, so there is nothing to share (use strict mode)")
    return None


def _param_fields(model: DPCCA) -> list[Field]:
    p = model.get_params(deep=False)
    fields = [Field(n, p[n], "public", SETTING, role="param")
              for n in ("n_components", "epsilon", "delta", "mode", "calibration", "regularization")]
    if model.mode == "strict":
        names = ("row_bound",) if p["row_bound"] is not None else ("x_bound", "y_bound")
        fields += [Field(n, float(p[n]), "public", PUBLIC_BOUND, role="param") for n in names]
        if p["x_center"] is not None:
            for n in ("x_center", "y_center"):
                c = np.asarray(p[n], dtype=float)
                fields.append(Field(n, c if c.ndim else float(c), "public", PUBLIC_CENTRE, role="param"))
    return fields


def public_parameters(model: DPCCA, **declared) -> dict:
    """The declared-public parameters of a fit (name -> value) plus ``declared`` public inputs: what a page
    puts in ``RunReport.public_parameters``. Never a seed, never a data-derived number."""
    _fitted(model)
    out = {f.name: f.value for f in _param_fields(model)}
    out.update(declared)
    return out


def shareable_release(model: DPCCA, *, public_inputs: dict | None = None) -> dict:
    """The shareable release of a fitted strict-mode DPCCA, built with ``engine.release.build_release``.

    Fields (manifest provenance in brackets): canonical_correlations_, x_weights_, y_weights_,
    released_moments_ (the noisy centred moment matrix, z units), indefinite_ [dp: post-processing of
    the one release]; x_mean_, y_mean_ [dp: the noisy means of the same release with private centring;
    public: the declared centre otherwise]; sensitivity_, sigma_, tau_, calibration_, regularization_
    [public: calibration from public numbers]; preprocessing_ [public: the construction];
    n_features_in_, n_features_y_ (and feature_names_in_) [public: schema]; the parameters
    n_components, epsilon, delta, mode, calibration, regularization and the declared bounds and centre
    [public]. Never: the noise seed, clip counts, row counts, the non-private reference, held-out values.

    Parameters
    ----------
    model : fitted DPCCA (strict mode, eps < inf).
    public_inputs : dict name -> value the caller declares public (e.g. column names); "info" fields.

    Returns
    -------
    dict (format :data:`FORMAT`).

    Raises
    ------
    ValueError when there is nothing to share (:func:`no_release_reason`).
    """
    _fitted(model)
    why = no_release_reason(model)
    if why is not None:
        raise ValueError(f"no shareable release: {why}")
    src = RELEASE_NAME
    fields = [Field("n_features_in_", int(model.n_features_in_), "public", _SCHEMA),
              Field("n_features_y_", int(model.n_features_y_), "public", _SCHEMA)]
    if hasattr(model, "feature_names_in_"):
        fields.append(Field("feature_names_in_", np.asarray(model.feature_names_in_, dtype=object), "public", _SCHEMA))
    fields += [Field("canonical_correlations_", model.canonical_correlations_, "dp", src),
               Field("x_weights_", model.x_weights_, "dp", src), Field("y_weights_", model.y_weights_, "dp", src),
               Field("released_moments_", model.released_moments_, "dp", src),
               Field("indefinite_", bool(model.indefinite_), "dp", src)]
    private_centre = model.x_center is None
    fields += [Field(n, getattr(model, n), "dp" if private_centre else "public", src if private_centre else
                     PUBLIC_CENTRE) for n in ("x_mean_", "y_mean_")]
    fields += [Field("sensitivity_", float(model.sensitivity_), "public", _CONSTRUCTION),
               Field("sigma_", float(model.sigma_), "public", _CALIBRATION),
               Field("tau_", float(model.tau_), "public", _CALIBRATION),
               Field("calibration_", str(model.calibration_), "public", _CALIBRATION),
               Field("regularization_", float(model.regularization_), "public", _CALIBRATION),
               Field("preprocessing_", str(model.preprocessing_), "public", _CONSTRUCTION)]
    fields += _param_fields(model)
    for name, value in (public_inputs or {}).items():
        fields.append(Field(str(name), value, "public", CALLER, role="info"))
    led = model.privacy_ledger_
    return build_release("dp_cca", FORMAT, fields, led, guarantee=plain_text(ledger_text(led)),
                         extra_notes=[NOT_DP_PROJECTIONS])


def to_json(model: DPCCA, **json_kwargs) -> str:
    """The shareable release of ``model`` as strict JSON text (:func:`shareable_release`)."""
    return release_to_json(shareable_release(model), **json_kwargs)


def model_from_dict(data) -> DPCCA:
    """A DPCCA predictor (``transform``, ``score``) rebuilt from a shareable release (dict or JSON text)."""
    return estimator_from_release(data, DPCCA, FORMAT)


def owner_sheets(private: DPCCA, reference: DPCCA | None = None, *, comparison: dict | None = None,
                 n_test: int | None = None, x_names=None, y_names=None) -> dict:
    """The owner's private sheets of one fit (for ``RunReport.owner_workbook``): never to be shared.

    Parameters
    ----------
    private : the fitted DP model.   reference : the non-private CCA of the same rows (eps = inf).
    comparison : ``compare_fit`` output (held-out correlations, captured correlation, similarity).
    n_test : the exact number of held-out rows.   x_names, y_names : column names of the views.

    Returns
    -------
    dict sheet name -> DataFrame or dict: rows and clipping (exact counts, paper mode's data-derived
    scales), the private weights, the reference CCA (correlations and weights), held-out results.
    """
    _fitted(private)
    dx, dy = private.x_weights_.shape[0], private.y_weights_.shape[0]
    xn = [str(c) for c in (x_names if x_names is not None else [f"x{i + 1}" for i in range(dx)])]
    yn = [str(c) for c in (y_names if y_names is not None else [f"y{i + 1}" for i in range(dy)])]
    pairs = [f"pair {k + 1}" for k in range(private.x_weights_.shape[1])]
    rows = {"training rows N (exact)": int(private.n_rows_fit_), "rows clipped (exact)": int(private.n_clipped_),
            "clipping": " · ".join(private.clip_report_["notes"]) or "none (paper mode)",
            "guarantee of this fit": private.privacy_ledger_.status}
    if n_test is not None:
        rows["held-out rows (exact)"] = int(n_test)
    rows.update({f"{k} (paper mode, from the private rows)": float(v) for k, v in private.private_scales_.items()})
    if private.mode == "paper":
        rows["x_mean (exact private means)"] = private.x_mean_
        rows["y_mean (exact private means)"] = private.y_mean_
    sheets = {"rows and clipping": rows,
              "private U (DP)": pd.DataFrame(private.x_weights_, index=xn, columns=pairs).rename_axis("X column")
              .reset_index(),
              "private V (DP)": pd.DataFrame(private.y_weights_, index=yn, columns=pairs).rename_axis("Y column")
              .reset_index()}
    if reference is not None:
        _fitted(reference)
        sheets["reference correlations"] = pd.DataFrame({
            "pair": pairs, "non-private (training)": reference.canonical_correlations_,
            "private (training)": private.canonical_correlations_})
        sheets["reference U (non-private)"] = pd.DataFrame(reference.x_weights_, index=xn, columns=pairs) \
            .rename_axis("X column").reset_index()
        sheets["reference V (non-private)"] = pd.DataFrame(reference.y_weights_, index=yn, columns=pairs) \
            .rename_axis("Y column").reset_index()
    if comparison is not None:
        sheets["held-out correlations"] = pd.DataFrame({
            "pair": pairs, "private U,V": comparison["held_out_private"],
            "non-private U,V": comparison["held_out_nonprivate"]})
        sim = comparison["similarity"]
        sheets["held-out utility"] = {"captured correlation (held-out)": float(comparison["captured"]),
                                      "subspace similarity": float(sim["angle_cos"]),
                                      "subspace similarity X": float(sim["angle_cos_x"]),
                                      "subspace similarity Y": float(sim["angle_cos_y"])}
    return sheets

