"""AdaSSP (Wang 2018): sufficient-statistics perturbation with an adaptive ridge, the issue #18 baseline.

Layout: ``estimator`` holds ``AdaSSP`` (scikit-learn regressor with a privacy ledger).
"""
from engine.methods.adassp.estimator import RELEASES, AdaSSP

__all__ = ["RELEASES", "AdaSSP"]
