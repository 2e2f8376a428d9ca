"""DP-PCR: differentially private principal component regression (the sixth method, issue #17).

Modules: ``estimator`` (``DPPCR`` and the post-processing from the moments), ``evaluation`` (``compare``,
``rmsep_vs_epsilon`` beside strict edPLS), ``release`` (the shareable release and the owner's sheets) and
``audit_case`` (the privacy audit's worst-case neighbours, imported on use by the registry).
"""
from .estimator import DPPCR, STRICT_RELEASE, pcr_from_moments, prepare_rows
from .evaluation import CURVE_COLUMNS, METHOD_LABELS, compare, reference_coefficients, reference_model, rmsep_vs_epsilon
from .release import (
    FORMAT,
    estimator_from_release,
    no_release_reason,
    owner_sheets,
    public_parameters,
    shareable_release,
    to_json,
)

__all__ = ["CURVE_COLUMNS", "DPPCR", "FORMAT", "METHOD_LABELS", "STRICT_RELEASE", "compare", "estimator_from_release",
           "no_release_reason", "owner_sheets", "pcr_from_moments", "prepare_rows", "public_parameters",
           "reference_coefficients", "reference_model", "rmsep_vs_epsilon", "shareable_release", "to_json"]
