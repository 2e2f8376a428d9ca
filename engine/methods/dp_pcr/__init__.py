"""DP-PCR: differentially private principal component regression (the sixth method, issue #17).

Modules: ``estimator`` (``DPPCR`` and the post-processing from the moments), ``evaluation`` (``compare``,
``rmsep_vs_epsilon`` beside strict edPLS), ``release`` (the shareable release and the owner's sheets) and
``audit_case`` (the privacy audit's worst-case neighbours).
"""
from .estimator import DPPCR, STRICT_RELEASE, pcr_from_moments, prepare_rows

__all__ = ["DPPCR", "STRICT_RELEASE", "pcr_from_moments", "prepare_rows"]
