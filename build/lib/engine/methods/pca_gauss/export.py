"""The two kinds of export of a PCA-Gauss fit (issue #15): the shareable release and the owner's sheets.

:func:`shareable_release` builds the one shareable export with :func:`engine.release.build_release` from an
explicit field list (DP outputs and declared-public inputs only: never Algorithm 1's non-private W, never
bounds read off the private data, never exact class counts); :func:`model_from_release` rebuilds a sampler
from it; :func:`owner_sheets` gathers what only the owner may see (non-private W, data ranges, clip counts,
the noise log).
"""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from engine.export import decode_value
from engine.privacy.wording import ledger_text
from engine.release import Field, build_release, estimator_from_release, release_to_json
from engine.report import plain_text

from .estimator import PCAGauss
from .sensitivity import N_PUBLIC_NOTE

MODEL_FORMAT = "privalab.pca_gauss.release/1"
_PCA_RELEASE_PREFIXES = ("Lap-PCA", "AG-PCA", "OpenDP")


def _public_bounds(model) -> tuple[bool, bool]:
    """(feature bounds public?, y bounds public?) of a fitted model (declared, or a declared public data set)."""
    ok = {"declared"} | ({"public data"} if model.public_declared else set())
    feat = model.bounds_source_ in ok
    y_ok = model.scaling_.get("y_bounds_source") in ok if "y_centre" in model.scaling_ else feat
    return feat, y_ok


def can_map_back(model) -> bool:
    """Whether synthetic rows may be mapped back to the original features in a shareable file: W released
    (or public) and the box's centre and scale public."""
    return bool(model.released_projection_) and _public_bounds(model)[0]


def shareable_release(model: PCAGauss, *, extra_notes=None) -> dict:
    """The shareable release of a fitted ``PCAGauss``, built by :func:`engine.release.build_release`.

    Fields, each with its provenance: the constructor parameters the user declared (ε, δ, task, k,
    W source, budget shares, public bounds, the public label set); the budget split; N (public under
    replace-one); W only when it is itself a DP release (Lap-PCA, AG-PCA, OpenDP) or public (Pub-PCA on a
    declared public data set, identity, a given W); the box's centre and scale only when the bounds are
    public; the DP Gaussian (mean, noisy and PSD-fixed covariance) or per-class Gaussians (noisy class
    sizes, means, covariances); the PSD log (post-processing). Never Algorithm 1's non-private W, bounds
    read off the private data, exact class counts, clip counts or the noise log.

    Raises
    ------
    ValueError : nothing released with noise (ε = ∞: no privacy), or a classification fit whose label
        set was read from the private labels (paper mode, or strict mode without ``labels``).
    """
    check_is_fitted(model, "privacy_ledger_")
    led = model.privacy_ledger_
    if not len(led):
        raise ValueError("nothing was released with noise (ε = ∞: no privacy): a non-private model is not a "
                         "shareable release; it belongs in the owner's workbook")
    p = model._params
    task, mode, source = p["task"], p["mode"], p["source"]
    if task == "classification" and not getattr(model, "labels_declared_", False):
        why = ("paper-faithful Algorithm 3 uses the exact class counts and the label set of the private labels"
               if mode == "paper" else "the label set was read from the private labels")
        raise ValueError(f"no shareable release: {why}. Declare the label set public (labels=...) in strict mode.")
    names = [r.name for r in led.entries]
    pca_rel = [n for n in names if n.startswith(_PCA_RELEASE_PREFIXES)]
    gauss = ", ".join(n for n in names if n not in pca_rel)
    declared = "declared public by the user"
    F = []
    params = {"n_components": model.n_components, "epsilon": model.epsilon, "task": task, "pca_source": source,
              "mode": mode, "alpha": model.alpha, "mean_share": model.mean_share, "delta": model.delta,
              "psd": model.psd, "lap_pca_scale": model.lap_pca_scale, "sens": model.sens,
              "public_declared": model.public_declared, "ag_neighbouring": model.ag_neighbouring,
              "calibration": model.calibration, "n_synthetic": model.n_synthetic}
    feat_public, y_public = _public_bounds(model)
    for key, value in (("bounds", model.bounds), ("y_bounds", model.y_bounds)):
        if value is None or isinstance(value, str):
            params[key] = value  # None, "public" or "data": a word, not a value of the data
        else:
            params[key] = tuple(np.asarray(v, dtype=float) for v in value)
    if model.labels is not None and mode == "strict":
        params["labels"] = np.asarray(model.classes_)
    F += [Field(k, v, "public", declared, role="param") for k, v in params.items()]
    split = {"epsilon_pca": model.epsilon_pca_, "epsilon_gauss": model.epsilon_gauss_,
             "epsilon_class_sizes": model.epsilon_count_, "epsilon_mu": model.epsilon_mu_,
             "epsilon_sigma": model.epsilon_sigma_, "delta_pca": model.delta_pca_,
             "class_size_share": model.count_share}
    F.append(Field("budget_split", split, "public", "the declared ε, δ and budget shares", role="info"))
    F.append(Field("n_samples", int(model.n_train_), "public",
                   "the number of training rows N (public under replace-one neighbours)", role="info"))
    F.append(Field("n_features_in_", int(model.n_features_in_), "public", "the table's schema"))
    F.append(Field("n_released_", int(model.n_released_), "public", "k (and y) declared by the user"))
    F.append(Field("released_projection_", bool(model.released_projection_), "public", "the W source"))
    notes = [N_PUBLIC_NOTE]
    # Pub-PCA's W is the PCA of the public rows *in the box*: public only when the box itself is public (with
    # paper scaling or bounds read off the data it depends on the private rows without noise).
    w_shareable = model.released_projection_ and (source != "public" or feat_public)
    if w_shareable:
        if source in ("laplace", "analyze_gauss") or (source == "given" and pca_rel):
            F.append(Field("components_", model.components_, "dp", ", ".join(pca_rel)))
        else:
            why = {"public": "PCA of the separate data set declared public", "identity": "identity (no reduction)",
                   "given": "W given by the caller, declared independent of the private data"}[source]
            F.append(Field("components_", model.components_, "public", why))
    else:
        notes.append("W is not part of this release: " + (
            "Algorithm 1 computes it from the private rows without noise, so the synthetic rows live in an "
            "anonymous k-dimensional space." if source == "nonprivate" else
            "it was computed from rows nobody declared public." if not model.released_projection_ else
            "the public rows were scaled with a box read off the private data."))
    if feat_public:
        scaling = {"centre": model.scaling_["centre"], "scale": model.scaling_["scale"],
                   "source": model.scaling_["source"], "bounds_source": model.bounds_source_}
        if "y_centre" in model.scaling_ and y_public:
            scaling.update(y_centre=model.scaling_["y_centre"], y_scale=model.scaling_["y_scale"],
                           y_bounds_source=model.scaling_["y_bounds_source"])
        F.append(Field("scaling_", scaling, "public", "midpoint and half-range of the public bounds"))
        F.append(Field("bounds_source_", model.bounds_source_, "public", "the bounds declaration"))
    else:
        notes.append("The box's centre and scale are not part of this release (they were read off the private "
                     "data): the synthetic rows stay in the scaled space.")
    if task == "classification":
        F.append(Field("classes_", np.asarray(model.classes_), "public", "the label set declared public"))
        F.append(Field("noisy_class_sizes", np.asarray(model.class_counts_, dtype=float), "dp",
                       next(n for n in names if n.startswith("class counts")), role="info"))
        F.append(Field("class_means_", model.class_means_, "dp", gauss))
        F.append(Field("class_covariances_raw_", model.class_covariances_raw_, "dp", gauss))
        F.append(Field("class_covariances_", model.class_covariances_, "dp", gauss))
        F.append(Field("class_min_eig_before_fix_", model.class_min_eig_before_fix_, "dp", gauss))
        F.append(Field("mean_", model.mean_, "dp", gauss))
    else:
        zero_mean = mode == "paper" or source == "nonprivate"
        F.append(Field("mean_", model.mean_, "public", "zero mean (the model's assumption)") if zero_mean
                 else Field("mean_", model.mean_, "dp", gauss))
        F.append(Field("covariance_raw_", model.covariance_raw_, "dp", gauss))
        F.append(Field("covariance_", model.covariance_, "dp", gauss))
    F.append(Field("min_eig_before_fix_", float(model.min_eig_before_fix_), "dp", gauss))
    F.append(Field("psd_fixed_", bool(model.psd_fixed_), "dp", gauss))
    guarantee = plain_text(ledger_text(led))
    return build_release("pca_gauss", MODEL_FORMAT, F, led, guarantee=guarantee,
                         extra_notes=notes + list(extra_notes or []))


def model_from_release(data) -> PCAGauss:
    """A ``PCAGauss`` rebuilt from :func:`shareable_release` output (dict or JSON): it samples synthetic rows,
    and maps rows when the release holds W and the public box. Private state is absent by construction."""
    if isinstance(data, (str, bytes)):
        data = json.loads(data)
    model = estimator_from_release(data, PCAGauss, MODEL_FORMAT)
    types = data.get("types", {})
    info = {k: decode_value(v, f"fields.{k}", types) for k, v in data["fields"].items()}
    split = info["budget_split"]
    model.count_share = split["class_size_share"]
    model.epsilon_pca_, model.epsilon_gauss_ = split["epsilon_pca"], split["epsilon_gauss"]
    model.epsilon_count_, model.epsilon_mu_ = split["epsilon_class_sizes"], split["epsilon_mu"]
    model.epsilon_sigma_, model.delta_pca_ = split["epsilon_sigma"], split["delta_pca"]
    model.n_train_ = int(info["n_samples"])
    model._params = model._resolved()
    model._norm = 1.0 if model._params["source"] == "identity" else math.sqrt(model.n_features_in_)
    if model._params["task"] == "classification":
        model.class_counts_ = np.asarray(info["noisy_class_sizes"], dtype=float)
        model._syn_weights = np.clip(model.class_counts_, 0.0, None)
        model.covariance_raw_ = model.covariance_ = None
        model.labels_declared_ = True
    model._sample_rng = np.random.default_rng()  # sampling is post-processing: a fresh stream
    return model


def to_json(model: PCAGauss, **json_kwargs) -> str:
    """The shareable release of ``model`` as strict JSON (:func:`shareable_release`)."""
    return release_to_json(shareable_release(model), **json_kwargs)


#: Kept name: reads the shareable release (the old full-attribute export is gone).
model_from_dict = model_from_release


def owner_sheets(model: PCAGauss, feature_names=None) -> dict:
    """What only the data owner may see about a fit (for :class:`engine.workbook.OwnerWorkbook`): the box's
    centre and scale with their source (data ranges when read off the data), clip counts, a W that is not
    released (Algorithm 1), the full noise log (per-class exact N_C in paper mode) and the sizes."""
    check_is_fitted(model, "privacy_ledger_")
    M = model.n_features_in_
    sc = model.scaling_
    box = pd.DataFrame({"lower": sc["centre"] - sc["scale"], "upper": sc["centre"] + sc["scale"],
                        "centre": sc["centre"], "half-range": sc["scale"]},
                       index=pd.Index(list(feature_names) if feature_names is not None and len(feature_names) == M
                                      else [f"x{i + 1}" for i in range(M)], name="feature"))
    out = {"box (bounds and centre)": box,
           "box source": {"features": sc["source"], "bounds source": model.bounds_source_,
                          **({"y centre": sc["y_centre"], "y scale": sc["y_scale"],
                              "y bounds source": sc.get("y_bounds_source")} if "y_centre" in sc else {})},
           "sizes (exact)": {"N training rows": int(model.n_train_), "M features": int(M),
                             "rows clipped to the box": int(model.clip_report_.n_clipped),
                             "clipping": model.clip_report_.describe("rows")},
           "noise log": model.noise_log_}
    if not model.released_projection_:
        out["W not released (private)"] = pd.DataFrame(
            model.components_, columns=[f"w{i + 1}" for i in range(model.components_.shape[1])])
    if model._params["task"] == "classification" and not getattr(model, "labels_declared_", False):
        out["label set (private)"] = {"labels read from y": ", ".join(map(str, model.classes_))}
    return out
