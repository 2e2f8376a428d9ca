"""Privacy core: calibration, mechanisms, clipping and budget accounting.

Public interface (names other modules and checks rely on):
``analytic_gaussian_sigma``, ``classic_gaussian_sigma``, ``laplace_scale``, ``gaussian_delta``,
``gaussian_epsilon``, ``GaussianMechanism``, ``LaplaceMechanism``, ``AnalyzeGauss``,
``sample_gaussian_vector``, ``sample_symmetric_gaussian``, ``clip_rows_l2``, ``clip_abs``,
``PrivacyLedger``, ``Release``, ``Neighbouring``, ``gaussian_sigmas_for_budget``. Every release's noise is drawn by
``mechanisms.draw_noise`` (the hook of ``audit.planted_bug``).
"""
from .calibration import (
    UnprovenCalibrationWarning,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_delta,
    gaussian_epsilon,
    laplace_scale,
    noise_scale,
    resolve_calibration,
    zcdp_rho,
    zcdp_to_epsilon,
)
from .clipping import ClipReport, clip_abs, clip_rows_l2
from .ledger import Neighbouring, PrivacyLedger, Release, gaussian_sigmas_for_budget, ledger_totals
from .mechanisms import (
    GaussianMechanism,
    LaplaceMechanism,
    as_generator,
    sample_gaussian_vector,
    sample_symmetric_gaussian,
)
from .moments import AnalyzeGauss
from .noise import SEED_KNOWN_CAVEAT, FreshGenerator, fresh_generator, noise_generator

__all__ = [
    "SEED_KNOWN_CAVEAT",
    "AnalyzeGauss",
    "ClipReport",
    "FreshGenerator",
    "GaussianMechanism",
    "LaplaceMechanism",
    "Neighbouring",
    "PrivacyLedger",
    "Release",
    "UnprovenCalibrationWarning",
    "analytic_gaussian_sigma",
    "as_generator",
    "classic_gaussian_sigma",
    "clip_abs",
    "clip_rows_l2",
    "fresh_generator",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_sigmas_for_budget",
    "laplace_scale",
    "ledger_totals",
    "noise_generator",
    "noise_scale",
    "resolve_calibration",
    "sample_gaussian_vector",
    "sample_symmetric_gaussian",
    "zcdp_rho",
    "zcdp_to_epsilon",
]
