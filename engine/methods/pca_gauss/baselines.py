"""Baselines of the PCA-Gauss paper that release noisy records instead of a model (spec Sec. 4).

- Jiang et al. [52]: dimensionality reduction with Pub-PCA, then the identity query: every record's
  projected features z = W'x/sqrt(M) plus Laplace noise of scale 2 P a / eps (Prop. 2).
- Li et al. [60]: the same with a public Bernoulli random projection R in {+-1/sqrt(M)}^(M x P)
  (no l1 sparse reconstruction; the paper does not mention one).

Labels: for classification the labels are kept as they are (not private; the ledger note says so, as
the paper does); for regression y is appended to the record and the sensitivity becomes 2 (P + 1) a.
The full-dimensional Gaussian of Liu et al. [62] is ``PCAGauss(pca_source="identity")``.

Modes as ``PCAGauss``: paper (training mean and max-abs scaling, the paper's 2 P a; sensitivity
marked "data") or strict (public bounds and centre, tight 2 sqrt(P) a for an orthonormal W; Li's
non-orthogonal R keeps the box bound 2 P a). The ledger uses replace-one neighbours (N public), noise
comes from :func:`engine.privacy.noise_generator` (a known seed is a caveat), and releasing every
record's exact label is a caveat too: a classification release of these baselines is never proven.
Written by hand (a few lines; no library has them).
"""
from __future__ import annotations

import math
from numbers import Integral
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from engine.methods.constraints import PRIVACY_PARAMETER_CONSTRAINTS
from engine.privacy import (
    SEED_KNOWN_CAVEAT,
    LaplaceMechanism,
    Neighbouring,
    PrivacyLedger,
    clip_abs,
    noise_generator,
)

from .estimator import PCAGauss
from .inputs import _ReleaseTransformer, read_public, read_records
from .sensitivity import CAVEATS, MODES, top_eigenvectors

#: Jiang's and Li's classification releases publish each record's label as it is.
LABELS_CAVEAT = "not proven: every record's label is released as it is (no noise)"

__all__ = ["IdentityQueryRelease", "identity_query_sensitivity"]


def identity_query_sensitivity(P: int, *, with_y: bool, rule: str = "paper", orthonormal: bool = True,
                               a: float = 1.0) -> float:
    """L1 sensitivity of one record's released vector [z; y] under replace-one (spec Prop. 2).

    paper: 2 P a (+ 2 a with y), from z in [-a, a]^P. tight (orthonormal W): 2 sqrt(P) a (+ 2 a).
    """
    if rule == "paper" or not orthonormal:
        core = 2 * P * a
    else:
        core = 2 * math.sqrt(P) * a
    return core + (2 * a if with_y else 0.0)


class IdentityQueryRelease(_ReleaseTransformer, BaseEstimator):
    """Noisy records in a reduced space: Jiang (``projection="public_pca"``) or Li (``"bernoulli"``).

    A scikit-learn transformer (``transform`` maps rows into the released space); y is required (tag) for
    the supervised tasks.

    Parameters
    ----------
    n_components : int, P.
    epsilon : float > 0 or inf.
    task : "unsupervised" | "regression" | "classification".
    projection : "public_pca" (Jiang) or "bernoulli" (Li).
    mode : "paper" | "strict". random_state : seed.
    bounds, y_bounds : public bounds for strict mode (as ``PCAGauss``: (lower, upper), "public" or "data").
    public_declared : whether X_public is declared public (as ``PCAGauss``).

    Fitted attributes: components_ (M, P), scaling_, released_ (N, P) noisy rows, released_y_ (N,) or None,
    privacy_ledger_, noise_scale_, sensitivity_.
    """

    # Declarative checks of one value at a time (scikit-learn's ``_validate_params``); random_state also takes a
    # numpy Generator or SeedSequence, as ``engine.privacy.noise_generator`` does.
    _parameter_constraints: ClassVar[dict] = {
        "epsilon": PRIVACY_PARAMETER_CONSTRAINTS["epsilon"],
        "random_state": [*PRIVACY_PARAMETER_CONSTRAINTS["random_state"], np.random.Generator,
                         np.random.SeedSequence],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "task": [StrOptions({"unsupervised", "regression", "classification"})],
        "projection": [StrOptions({"public_pca", "bernoulli"})],
        "mode": [StrOptions(set(MODES))],
        "bounds": "no_validation",  # (lower, upper), "public" or "data": checked as PCAGauss checks them
        "y_bounds": "no_validation",
        "public_declared": ["boolean"],
    }

    def __init__(self, n_components=2, epsilon=1.0, task="classification", projection="public_pca", mode="paper",
                 random_state=None, *, bounds=None, y_bounds=None, public_declared=True):
        self.n_components = n_components
        self.epsilon = epsilon
        self.task = task
        self.projection = projection
        self.mode = mode
        self.random_state = random_state
        self.bounds = bounds
        self.y_bounds = y_bounds
        self.public_declared = public_declared

    def fit(self, X, y=None, X_public=None, y_public=None):
        """Release every training record's projection with Laplace noise. X (N, M); returns self."""
        self._validate_params()
        X, y = read_records(self, X, y, self.task)  # named ValueError for text, NaN, inf, over/underflow
        N, M = X.shape
        P = int(self.n_components)
        if not 1 <= P <= M:
            raise ValueError(f"n_components must be in [1, n_features] (n_features = {M}), got {self.n_components}")
        eps = float(self.epsilon)
        rng, seed_known = noise_generator(self.random_state)
        # Reuse PCAGauss's scaling rules (paper: training data; strict: public bounds).
        helper = PCAGauss(P, eps, task=self.task if self.task != "unsupervised" else "unsupervised",
                          pca_source="public", mode=self.mode, bounds=self.bounds, y_bounds=self.y_bounds,
                          public_declared=self.public_declared)
        Xp = read_public(X_public, M, "X_public") if X_public is not None else None
        task_for_scaling = "regression" if self.task == "regression" else "unsupervised"
        self.scaling_ = helper._fit_scaling(X, np.asarray(y, dtype=float) if task_for_scaling == "regression" else y,
                                            Xp, y_public, self.mode, task_for_scaling)
        Xs, _ = clip_abs((X - self.scaling_["centre"]) / self.scaling_["scale"], 1.0)
        if self.projection == "public_pca":
            if Xp is None or len(Xp) < 2:
                raise ValueError("Jiang's baseline uses Pub-PCA: pass X_public")
            W = top_eigenvectors(helper._box(Xp, self.scaling_).T @ helper._box(Xp, self.scaling_), P)[1]
        else:
            W = rng.choice([-1.0, 1.0], size=(M, P)) / math.sqrt(M)  # public, data-independent
        self.components_ = W
        Z = Xs @ W / math.sqrt(M)
        with_y = self.task == "regression"
        V = np.column_stack([Z, np.clip((np.asarray(y, float) - self.scaling_["y_centre"]) / self.scaling_["y_scale"],
                                        -1, 1)]) if with_y else Z
        rule = "paper" if self.mode == "paper" else "tight"
        self.sensitivity_ = identity_query_sensitivity(P, with_y=with_y, rule=rule,
                                                       orthonormal=self.projection == "public_pca")
        # replace-one sensitivities, N public
        self.privacy_ledger_ = led = PrivacyLedger(neighbouring=Neighbouring.REPLACE_ONE)
        for reason in self.scaling_.pop("caveats"):
            led.add_caveat(reason)
        if self.projection == "public_pca" and not self.public_declared:
            led.add_caveat(CAVEATS["public_undeclared"])
        if seed_known:
            led.add_caveat(SEED_KNOWN_CAVEAT)
        if self.task == "classification":
            led.add_caveat(LABELS_CAVEAT)
        if math.isfinite(eps):
            mech = LaplaceMechanism(eps, self.sensitivity_)
            V = mech.randomise(V, rng)
            label_note = "; labels released as they are (not private)" if self.task == "classification" else ""
            name = "Jiang: identity query on Pub-PCA" if self.projection == "public_pca" else \
                "Li: identity query on Bernoulli projection"
            self.privacy_ledger_.add(mech.release(
                f"{name} ({N} x {V.shape[1]})", sensitivity_source="data" if self.mode == "paper" else "public",
                note=f"every record released with Laplace noise per entry{label_note}"))
            self.noise_scale_ = mech.scale
        else:
            self.noise_scale_ = 0.0
        self.released_ = V[:, :P]
        self.released_y_ = V[:, P] if with_y else (np.asarray(y) if y is not None else None)
        return self

    def sample(self, n=None, random_state=None):
        """The released noisy records (the identity query releases exactly N rows; n is ignored)."""
        check_is_fitted(self, "released_")
        if self.task == "unsupervised" or self.released_y_ is None:
            return self.released_
        return self.released_, self.released_y_

    def transform(self, X):
        """Real rows into the released space: W'clip((x - centre)/scale)/sqrt(M). (n, P)."""
        check_is_fitted(self, "components_")
        X = validate_data(self, X, dtype=float, reset=False)
        Xs = np.clip((X - self.scaling_["centre"]) / self.scaling_["scale"], -1.0, 1.0)
        return Xs @ self.components_ / math.sqrt(X.shape[1])

    def transform_y(self, y):
        """y scaled by the public centre and scale, clipped to [-1, 1]."""
        check_is_fitted(self, "scaling_")
        return np.clip((np.asarray(y, float) - self.scaling_["y_centre"]) / self.scaling_["y_scale"], -1.0, 1.0)
