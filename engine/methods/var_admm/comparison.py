"""VAR-ADMM's entry point of the method contract: ``compare(train, test, ...) -> Comparison``.

The private model is the collaborative VAR fitted on the noise defence's release (every training value
clipped into the declared range, fresh noise calibrated to its width, :func:`.defence.noise_defence`);
the reference is the same VAR fitted on the clean training values (the noise-free collaborative fit:
the central solver, which equals the ADMM's fit, spec 4.4). Both forecast the test rows one step ahead
from the clean series, and the headline is their forecast RMSE. No streamlit here.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.methods.contract import Comparison
from engine.privacy.wording import ledger_text

from .checks import check_series
from .defence import DP_STATEMENTS, _check_range, calibrated_noise_scale, noise_defence
from .estimator import CollaborativeVAR
from .evaluation import var_forecasts
from .layout import normalise_lags

__all__ = ["MODES", "compare"]

#: "strict": values clipped into the declared range before the noise; "paper": the paper's pipeline (no
#: clipping, so one value moves the output without bound: no guarantee).
MODES = ("strict", "paper")


def compare(train, test, *, epsilon: float, delta: float, mode: str = "strict", random_state=None,
            **params) -> Comparison:
    """The noise-defended collaborative VAR beside the noise-free one, scored on the next rows in time.

    Parameters
    ----------
    train, test : array-like or DataFrame (T_train x n), (T_test x n): one column per owner on the raw
        scale the range is declared on, ``test`` the rows right after ``train`` in time.
    epsilon, delta : the per-value (event-level) budget the noise is calibrated to (δ for the Gaussian
        law only); ε = inf gives no noise.
    mode : "strict" (clip into ``public_range``) or "paper" (no clipping: no guarantee).
    random_state : None (fresh noise: the default of a release) or a known seed (teaching: not proven).
    **params : ``public_range`` (lo, hi), required; ``declared_public`` (bool, default False: the range
        then stays "not proven"); ``law`` ("laplace", default, or "gaussian"); ``lags`` (default 1); any
        other :class:`CollaborativeVAR` setting (penalty, alpha, trend, solver, ...).

    Returns
    -------
    :class:`engine.methods.contract.Comparison`: private and reference fitted models; headline
    "forecast RMSE (private)", "forecast RMSE (non-private)", "epsilon per value", "epsilon per series";
    the defence's ledger (one owner's whole series) and its sentence from :mod:`engine.privacy.wording`.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    law = params.pop("law", "laplace")
    if law not in ("laplace", "gaussian"):
        raise ValueError(f"law must be 'laplace' or 'gaussian' (the calibrated laws), got {law!r}")
    if params.get("public_range") is None:
        raise ValueError("compare needs public_range=(lo, hi): the range every value is clipped into")
    lo, hi = _check_range(params.pop("public_range"))
    declared = params.pop("declared_public", False)
    lags = normalise_lags(params.pop("lags", 1))
    Y_train, Y_test, names = _panels(train, test, lags)

    b = calibrated_noise_scale(law, epsilon, delta, hi - lo)
    release = noise_defence(Y_train, law, b, public_range=(lo, hi) if mode == "strict" else None,
                            declared_public=declared, delta=delta, random_state=random_state)
    private = CollaborativeVAR(lags, **params).fit(pd.DataFrame(release.noisy, columns=names))
    reference = CollaborativeVAR(lags, **params).fit(pd.DataFrame(Y_train, columns=names))

    Y = np.vstack([Y_train, Y_test])
    rows = np.arange(Y_train.shape[0], Y.shape[0])
    led = release.defence
    headline = {"forecast RMSE (private)": _rmse(var_forecasts(private, Y, rows), Y[rows]),
                "forecast RMSE (non-private)": _rmse(var_forecasts(reference, Y, rows), Y[rows]),
                "epsilon per value": float(led.eps_per_value), "epsilon per series": float(led.eps_per_series)}
    notes = (DP_STATEMENTS[law], led.headline().replace("**", ""),
             "The VAR is fitted on the noisy series (post-processing); both models forecast the test rows one step "
             "ahead from the clean series, which the forecasts' owners hold.")
    guarantee = ledger_text(led.ledger, None if law == "laplace" else delta)
    return Comparison(private=private, reference=reference, headline=headline, ledger=led.ledger,
                      guarantee=guarantee, notes=notes)


def _panels(train, test, lags) -> tuple[np.ndarray, np.ndarray, list]:
    """Checked float panels and the owners' names (the training frame's columns, else "series i")."""
    frame_names = [str(c) for c in train.columns] if isinstance(train, pd.DataFrame) else None
    Y_train, names = check_series(train, frame_names, min_rows=max(lags) + 2, what="train")
    Y_test, _ = check_series(test, names, min_rows=1, what="test")
    if Y_test.shape[1] != Y_train.shape[1]:
        raise ValueError(f"test has {Y_test.shape[1]} series, train {Y_train.shape[1]}")
    return Y_train, Y_test, names


def _rmse(pred: np.ndarray, actual: np.ndarray) -> float:
    return float(np.sqrt(np.mean((pred - actual) ** 2)))
