"""The two kinds of export of the collaborative VAR (issue #15): the shareable release and the owner's sheets.

The shareable release holds only the noise defence's DP output (values clipped into a declared public
range, fresh noise) and post-processing of it, built with :func:`engine.release.manifest.build_release`; the
owner's sheets (workbook) hold everything the guarantee does not cover. :func:`model_to_dict` is the
owner's private full export for notebooks. No streamlit here.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from engine.privacy import PrivacyLedger
from engine.privacy.wording import ledger_text
from engine.release.export import estimator_from_dict, estimator_to_dict
from engine.release.manifest import Field, build_release, estimator_from_release, release_to_json

from .defence import DP_STATEMENTS, NoiseRelease
from .estimator import CollaborativeVAR
from .layout import normalise_lags

__all__ = [
    "MODEL_FORMAT",
    "NOT_DP_MODEL",
    "NO_DEFENCE_REASON",
    "RELEASE_FORMAT",
    "coef_table",
    "model_from_dict",
    "model_from_release",
    "model_to_dict",
    "owner_sheets",
    "privacy_statement",
    "release_refusal",
    "shareable_release",
    "to_json",
]

MODEL_FORMAT = "privalab.var_admm/1"
RELEASE_FORMAT = "privalab.var_admm.release/1"
NOT_DP_MODEL = ("The collaborative VAR fitted by ADMM carries no differential-privacy guarantee: the exchanged "
                "matrices let the central node and every owner rebuild the other owners' series (Prop. 2-4).")
NO_DEFENCE_REASON = "no noise defence ran: the coefficients are not differentially private"


def release_refusal(release: NoiseRelease | None) -> str | None:
    """Why there is no shareable release for this run (None: there is one)."""
    if release is None:
        return NO_DEFENCE_REASON
    led = release.defence
    if led.status == "no privacy":
        return f"{NO_DEFENCE_REASON} ({led.no_privacy_reason()})"
    if not led.declared_public:
        return ("the range the values were clipped into is not declared public, so the noise proves nothing and the "
                "range (read off or typed for your data) must stay private: declare it only if it is the plants' "
                "rating")
    return None


def privacy_statement(release: NoiseRelease | None) -> str:
    """What the run's report says about privacy (markdown), decided from the release alone.

    Shareable (a DP law on a range declared public, :func:`release_refusal` gives no reason): the
    defence's guarantee; a DP law on an undeclared range: not proven, nothing shareable; otherwise no
    guarantee at all.
    """
    if release is not None and release_refusal(release) is None:
        return ("**The collaborative VAR is not differentially private; the noise defence is.** Every value was "
                "clipped into the declared public range and noised once before anything else; the fit is "
                "post-processing. " + release.defence.headline())
    if release is not None and release.defence.status != "no privacy":
        return ("**The collaborative VAR is not differentially private.** The noise defence ran with a range that "
                "is not declared public, so its guarantee is **not proven**; its ledger (which would reveal the "
                "range) is kept in the owner's workbook and nothing is shareable.")
    return ("**The collaborative VAR is not differentially private.** No defence with calibrated noise on "
            "clipped values ran: nothing here carries a guarantee.")


def coef_table(model: CollaborativeVAR) -> pd.DataFrame:
    """A fitted VAR's coefficients in long form: lag, source owner, target owner, coefficient (+ intercepts)."""
    names = list(getattr(model, "owner_names_", None) or [f"owner {i + 1}" for i in range(model.n_owners_)])
    rows = [{"lag": ell, "source": names[i], "target": names[j], "coefficient": float(model.coefs_[ell - 1][j, i])}
            for ell in model.lags_ for i in range(len(names)) for j in range(len(names))]
    rows += [{"lag": "intercept", "source": "", "target": names[j], "coefficient": float(model.intercept_[j])}
             for j in range(len(names))]
    return pd.DataFrame(rows)


def shareable_release(release: NoiseRelease, *, owner_names, lags, model: CollaborativeVAR | None = None,
                      calibration: str = "chosen by the user") -> dict:
    """The shareable release of a noise-defence run, built only with :func:`engine.release.manifest.build_release`.

    Parameters
    ----------
    release : :class:`NoiseRelease` of a DP law (Laplace, Gaussian) whose range was declared public.
    owner_names : the series' names (schema). lags : the lag set (public setting).
    model : the VAR fitted on ``release.noisy`` with public settings and public rows only (then its
        coefficients are post-processing of the release); None leaves the coefficients out (e.g.
        when the fitted rows, such as daylight hours, were read from the private series).
    calibration : where b came from (public): "calibrated from ε and the declared range" or "chosen
        by the user".

    Returns
    -------
    dict: the noisy series (T x n), the coefficients when given, and the public inputs (law, b,
    declared range, ε per value and per series, δ), with manifest, ledger (one owner's whole
    series) and guarantee. Raises ValueError when :func:`release_refusal` gives a reason.
    """
    why = release_refusal(release)
    if why is not None:
        raise ValueError(f"no shareable release: {why}")
    led = release.defence
    assert led.public_range is not None, "a DP law ran (release_refusal gave no reason): its range is declared"
    src = led.ledger.entries[0].name
    declared = "user-declared public range (the plants' rating, not the data)"
    fields = [
        Field("noisy_series", np.asarray(release.noisy, dtype=float), "dp", src, role="info"),
        Field("owner_names", [str(s) for s in owner_names], "public", "column names of the shared series (schema)",
              role="info"),
        Field("noise_law", led.law, "public", "defence chosen by the user", role="info"),
        Field("noise_scale_b", float(led.b), "public", f"noise scale {calibration}", role="info"),
        Field("public_range", [float(led.public_range[0]), float(led.public_range[1])], "public", declared,
              role="info"),
        Field("epsilon_per_value", float(led.eps_per_value), "public", "the ledger's per-value (event-level) ε",
              role="info"),
        Field("epsilon_per_series", float(led.eps_per_series), "public", "the ledger's whole-series ε", role="info"),
        Field("delta", 0.0 if led.law == "laplace" else float(led.delta), "public", "δ chosen by the user",
              role="info"),
        Field("lags", list(normalise_lags(lags)), "public", "model setting chosen by the user", role="param"),
    ]
    if release.naive:
        fields.append(Field("releases_of_each_value", int(led.copies), "public",
                            "naive design: p + 1 noisy copies (+ 1 for noisy forecast inputs)", role="info"))
    if model is not None:
        check_is_fitted(model, "coefs_")
        fields += [
            Field("penalty", model.penalty, "public", "model setting chosen by the user", role="param"),
            Field("alpha", float(model.alpha), "public", "model setting chosen by the user", role="param"),
            Field("trend", model.trend, "public", "model setting chosen by the user", role="param"),
            Field("lags_", tuple(int(x) for x in model.lags_), "public", "model setting chosen by the user"),
            Field("n_owners_", int(model.n_owners_), "public", "number of shared series (schema)"),
            Field("coefs_", np.asarray(model.coefs_, dtype=float), "dp", "*"),
            Field("intercept_", np.asarray(model.intercept_, dtype=float), "dp", "*"),
        ]
    notes = [DP_STATEMENTS["naive" if release.naive else led.law],
             "The values were clipped into the declared range and noised once per value before anything else; any "
             "centring and the VAR fit are post-processing of the noisy series."]
    if model is None:
        notes.append("No coefficients: fit the VAR on the noisy series (the page's fit reads which rows to use from "
                     "the private data, so its coefficients are not post-processing of this release).")
    guarantee = (led.headline().replace("**", "") + " Ledger (one owner's whole series): "
                 + ledger_text(led.ledger, None if led.law == "laplace" else led.delta).replace("**", ""))
    return build_release("var_admm", RELEASE_FORMAT, fields, led.ledger, guarantee=guarantee, extra_notes=notes)


def to_json(release: dict, **json_kwargs) -> str:
    """A shareable release (:func:`shareable_release`) as strict JSON text."""
    if not isinstance(release, dict) or release.get("format") != RELEASE_FORMAT:
        raise TypeError("to_json takes a shareable release from shareable_release(...); a fitted model alone is not "
                        "shareable (its coefficients are not differentially private)")
    return release_to_json(release, **json_kwargs)


def model_from_release(data) -> CollaborativeVAR:
    """A CollaborativeVAR rebuilt from a shareable release that holds coefficients (``forecast`` works)."""
    return estimator_from_release(data, CollaborativeVAR, RELEASE_FORMAT)


def owner_sheets(*, reference_model: CollaborativeVAR | pd.DataFrame | None = None, skill: pd.DataFrame | None = None,
                 defended_skill: pd.DataFrame | None = None, release: NoiseRelease | None = None,
                 Y=None, owner_names=None, forecasts: pd.DataFrame | None = None) -> dict:
    """The owner's private sheets (workbook): what the guarantee does not cover.

    reference_model : the non-private VAR (central or ADMM) fitted on the clean series, or its
        :func:`coef_table`.
    skill / defended_skill : per-owner errors on the private test rows (clean / with the defence).
    release : the defence run (its range when not declared public, the exact number of values
        clipped, both ε and the status). Y : the clean series (T x n), for the observed ranges.
    forecasts : forecasts on the private test rows.
    """
    sheets: dict = {}
    if reference_model is not None:
        sheets["reference VAR (non-private)"] = (reference_model if isinstance(reference_model, pd.DataFrame)
                                                 else coef_table(reference_model))
    if skill is not None:
        sheets["skill on private rows"] = skill
    if defended_skill is not None:
        sheets["skill with the defence"] = defended_skill
    if forecasts is not None:
        sheets["forecasts (private rows)"] = forecasts
    if Y is not None:
        Y = np.asarray(Y, dtype=float)
        names = list(owner_names) if owner_names is not None else [f"owner {i + 1}" for i in range(Y.shape[1])]
        sheets["observed range (private)"] = pd.DataFrame({"owner": names, "min": Y.min(axis=0), "max": Y.max(axis=0)})
    if release is not None:
        led = release.defence
        sheets["noise defence"] = {
            "noise law": led.law, "noise scale b": led.b,
            "range the values were clipped into": "none" if led.public_range is None else list(led.public_range),
            "range declared public": led.declared_public, "status": led.status,
            "epsilon per value (event level)": led.eps_per_value,
            "epsilon for one owner's whole series": led.eps_per_series,
            "values outside the range before clipping (exact, private)": release.n_outside,
            "statement": led.headline().replace("**", ""),
        }
    return sheets


def model_to_dict(model: CollaborativeVAR, ledger: PrivacyLedger | None = None) -> dict:
    """The owner's full export of a fitted model (every fitted attribute but the training design and the
    trace): private, for notebooks; the page offers :func:`shareable_release` and the owner's workbook."""
    check_is_fitted(model, "coefs_")
    privacy = NOT_DP_MODEL + ((" " + DP_STATEMENTS["admm_noise"]) if (model.coef_noise or model.message_noise) else "")
    return estimator_to_dict(model, MODEL_FORMAT, exclude=("design_", "trace_"), ledger=ledger, privacy=privacy)


def model_from_dict(data) -> CollaborativeVAR:
    """A CollaborativeVAR with the exported params and fitted attributes (``predict`` works; the trace does not)."""
    return estimator_from_dict(data, CollaborativeVAR, MODEL_FORMAT)
