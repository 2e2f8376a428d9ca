"""What a regression release needs to travel: its channels, response, unit, chain, estimator and versions.

A shareable release of a regression (edPLS in every mode, the recommended ``StrictEDPLS``, DP-PCR, AdaSSP)
carries, beside its DP outputs, the declared-public facts a reader needs to apply it to new spectra
(``engine.release.predict``): the channel names in order, the response's name and unit, the preprocessing
chain, the estimator's name, the engine's version and the schema version of these fields. Every one is a
``Field`` with provenance "public" and a source saying where it came from: the user chose the columns (names
are structure, not values), typed the unit, picked the chain; the estimator and the engine version are facts of
the software. Nothing here reads a private value.

Written by hand: a handful of provenance fields on top of ``engine.release.manifest``; no kept library has them.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from engine.release.manifest import SETTING, Field

__all__ = ["SCHEMA_VERSION", "TRAVEL_FIELDS", "ModelCard", "engine_version", "travel_fields"]

#: The schema of the travel fields below; ``predict_from_release`` refuses any other.
SCHEMA_VERSION = "privalab.model/1"
#: Names of the travel fields in a release's ``fields``.
TRAVEL_FIELDS = ("schema_version", "channels", "response", "response_unit", "preprocessing_chain", "estimator",
                 "engine_version")


@dataclass(frozen=True)
class ModelCard:
    """The declared-public names of a regression fit: channel (X column) names in the order of the fit's
    columns, the response's name and unit, the chain the caller applied before the estimator ("none": none).

    channels=None: the estimator's ``feature_names_in_`` when it was fitted on a frame, else x1 ... xm.

    The card is the one place for these facts: a regression's ``shareable_release(..., public_inputs=)`` takes only
    other declared-public inputs (e.g. ``privalab fit``'s declared response range ``y_range``), and a travel field's
    name there is refused as a field named twice.
    """

    channels: tuple[Any, ...] | list[Any] | None = None
    response: str = "y"
    unit: str = ""
    preprocessing: str = "none"


def engine_version() -> str:
    """The installed privalab version (package metadata), "unknown" when not installed."""
    try:
        return version("privalab")
    except PackageNotFoundError:  # a bare checkout: say so instead of guessing
        return "unknown"


def _channels(model: Any, card: ModelCard) -> tuple[list[str], str]:
    m = int(model.n_features_in_)
    if card.channels is not None:
        names = [str(c) for c in card.channels]
        if len(names) != m:
            raise ValueError(f"the release names {len(names)} channels but the model was fitted on {m}")
        return names, "column names the user chose for X (structure, not values)"
    fitted = getattr(model, "feature_names_in_", None)
    if fitted is not None:
        return [str(c) for c in fitted], "column names of the frame the model was fitted on (structure, not values)"
    return [f"x{j + 1}" for j in range(m)], "no names given: positional names x1 ... xm"


def travel_fields(model: Any, card: ModelCard | None = None, *, chain: str | None = None) -> list[Field]:
    """The travel fields (``TRAVEL_FIELDS``) of a fitted regression, all public "info" fields.

    Parameters
    ----------
    model : the fitted estimator (its class name and ``n_features_in_`` are read: public schema facts).
    card : ModelCard or None (defaults: positional channel names, response "y", no unit, chain "none").
    chain : the chain the estimator applies itself (``StrictEDPLS.preprocessing``); None: ``card.preprocessing``.

    Returns
    -------
    list of Field, in ``TRAVEL_FIELDS`` order.
    """
    card = card or ModelCard()
    channels, channels_src = _channels(model, card)
    steps = str(chain) if chain is not None else str(card.preprocessing or "none")
    chain_src = "the estimator's own preprocessing setting (public)" if chain is not None else SETTING
    return [Field("schema_version", SCHEMA_VERSION, "public", "the release format of PrivaLab", role="info"),
            Field("channels", channels, "public", channels_src, role="info"),
            Field("response", str(card.response), "public", "the response column the user chose", role="info"),
            Field("response_unit", str(card.unit), "public", "unit declared by the user (public input)", role="info"),
            Field("preprocessing_chain", steps, "public", chain_src, role="info"),
            Field("estimator", type(model).__name__, "public", "the estimator class that was fitted", role="info"),
            Field("engine_version", engine_version(), "public", "privalab package metadata", role="info")]
