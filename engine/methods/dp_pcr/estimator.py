"""DP-PCR: (epsilon, delta)-differentially private principal component regression, one release.

The fit spends its whole budget on ONE Gaussian release of the clipped second moments of [x, y]
(``engine.privacy.moments``, the same strict release as edPLS strict): every row is clipped to the
public bounds ``||x_i|| <= x_bound`` and ``|y_i| <= y_bound`` (after the public centre, if one is
declared) and scaled into the unit ball; the upper triangle of Z'Z gets symmetric Gaussian noise at
its exact add/remove sensitivity. Everything after that is post-processing, free of privacy cost:

1. centring: with private centring (no public centre) a constant column rides along in the same
   release and the moments are centred at the noisy mean (``centred_moments``); with a public centre
   the rows were centred by it before clipping; with ``centring=False`` nothing is centred;
2. PCA: the top-k eigenvectors V and eigenvalues L of the noisy X block C_xx;
3. regression of y on the scores T = X V: gamma = L^-1 V' c_xy (the X-y cross moments projected on
   the eigenvectors; T'T = L because the eigenvectors are orthonormal), coef = V gamma.

At epsilon = inf there is no noise and, when the bounds do not clip, the predictions equal
scikit-learn's ``make_pipeline(PCA(k), LinearRegression())`` (a test checks 1e-8). A noisy eigenvalue
at or below 0 carries no variance: its component gets gamma = 0 (the PSD projection of C_xx, which
``engine.privacy.moments.psd_project`` would do, restricted to the components used).

Written by hand: no kept library fits PCR from one clipped, privately centred moment release with an
exact sensitivity and a ledger (diffprivlib's PCA releases a covariance with a data-independent centre
and has no regression on top; scikit-learn has no private variant).
"""
from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from engine.methods.constraints import CALIBRATION_CONSTRAINT, PRIVACY_PARAMETER_CONSTRAINTS
from engine.methods.dp_pcr.rows import PreparedRows
from engine.privacy import SEED_KNOWN_CAVEAT, PrivacyLedger, noise_generator, resolve_calibration
from engine.privacy.chunked import is_lazy
from engine.privacy.gram import scaled_gram
from engine.privacy.moments import MomentsRelease, centred_moments
from engine.threads import one_blas_thread

__all__ = ["DPPCR", "STRICT_RELEASE", "PreparedRows", "pcr_from_moments", "prepare_rows"]

#: Name of the one ledger release of a fit (the same release as edPLS strict).
STRICT_RELEASE = "Z'Z"


def prepare_rows(X: np.ndarray, y: np.ndarray, *, x_bound: float, y_bound: float, centring: bool = True,
                 x_center=None, y_center=None, private_intercept: bool = False) -> PreparedRows:
    """Subtract the public centre (if any), clip to the public bounds and scale into the unit ball.

    Parameters
    ----------
    X : array (n, m); y : array (n,).
    x_bound, y_bound : public bounds on ||x_i|| and |y_i| (after the public centre).
    centring : centre the moments (privately when no public centre is given).
    x_center : array (m,) or float, y_center : float, or both None (private centring).
    private_intercept : with a public centre, centre privately around it too (a constant column in the same
        release), so a centre far from the data's mean costs nothing in the intercept.

    Returns
    -------
    PreparedRows
    """
    _, m = X.shape
    public = centring and x_center is not None
    if public:
        xc = np.broadcast_to(np.asarray(x_center, dtype=float), (m,)).copy()
        yc = float(y_center)
        with np.errstate(over="ignore", invalid="ignore"):
            Xs, ys = X - xc, y - yc
        if not (np.isfinite(Xs).all() and np.isfinite(ys).all()):
            raise ValueError("the data minus the public centre overflow float64: rescale the data and the centre")
    else:
        xc, yc, Xs, ys = np.zeros(m), 0.0, X, y
    private = centring and (not public or bool(private_intercept))
    rows = scaled_gram([Xs, ys[:, None]], [x_bound, y_bound], private_centring=private)
    return PreparedRows(rows, xc, yc, bool(centring), m)


def _flip_signs(V: np.ndarray) -> np.ndarray:
    """Each eigenvector's largest-|entry| made positive (scikit-learn's ``svd_flip`` on components)."""
    idx = np.argmax(np.abs(V), axis=0)
    signs = np.sign(V[idx, np.arange(V.shape[1])])
    return V * np.where(signs == 0, 1.0, signs)


@one_blas_thread()  # many small eigen-decompositions: thread start-up costs more than it saves (20x on a busy host)
def pcr_from_moments(G: np.ndarray, prep: PreparedRows, k: int) -> dict:
    """(R, d, d) noisy (or clean) Gram matrices of the scaled rows -> R PCR models (post-processing).

    Parameters
    ----------
    G : array (R, d, d), Z'Z plus noise (d = m + 1, + 1 more under private centring).
    prep : PreparedRows of the same fit.
    k : number of principal components.

    Returns
    -------
    dict of arrays with a leading R axis: coef (R, m), intercept (R,), components (R, k, m),
    explained_variance (R, k) (eigenvalues of the noisy centred sum of squares, data units),
    explained_variance_ratio (R, k), x_mean (R, m), y_mean (R,), y_scale (R,): the standard deviation of y
    from the same noisy moments (post-processing; nan without private centring, whose count is not released).
    """
    m, S, R = prep.m, prep.rows.scale, G.shape[0]
    if prep.rows.private_centring:
        C, zmean, n_hat = centred_moments(G, prep.rows.const_z)
        y_scale = S * np.sqrt(np.maximum(C[:, m, m], 0.0) / n_hat)
    else:
        C, zmean = G, np.zeros((R, m + 1))
        y_scale = np.full(R, np.nan)
    coef, comps = np.empty((R, m)), np.empty((R, k, m))
    ev, ratio = np.empty((R, k)), np.empty((R, k))
    for r in range(R):
        Cxx, cxy = C[r, :m, :m], C[r, :m, m]
        vals, V = scipy.linalg.eigh(Cxx, subset_by_index=[m - k, m - 1])
        vals, V = vals[::-1], _flip_signs(V[:, ::-1])
        top = max(float(np.abs(vals).max()), np.finfo(float).tiny)
        keep = vals > 1e-12 * top
        gamma = np.where(keep, (V.T @ cxy) / np.where(keep, vals, 1.0), 0.0)
        coef[r], comps[r] = V @ gamma, V.T
        ev[r] = vals * S**2
        trace = float(np.trace(Cxx))
        ratio[r] = vals / trace if trace > 0 else np.nan
    x_mean = prep.x_center[None, :] + S * zmean[:, :m]
    y_mean = prep.y_center + S * zmean[:, m]
    intercept = y_mean - np.einsum("rm,rm->r", coef, x_mean)
    return {"coef": coef, "intercept": intercept, "components": comps, "explained_variance": ev,
            "explained_variance_ratio": ratio, "x_mean": x_mean, "y_mean": y_mean, "y_scale": y_scale}


class DPPCR(RegressorMixin, BaseEstimator):
    """(epsilon, delta)-DP principal component regression from one release of the clipped moments.

    Parameters
    ----------
    n_components : int >= 1, the number of principal components k, or None: all of them, min(n - 1, m)
        (min(n, m) without centring), which makes PCR least squares (as scikit-learn's ``PCA(None)``).
    epsilon : float > 0 or np.inf (no noise: plain PCR with an empty ledger).
    delta : float in (0, 1).
    x_bound, y_bound : float > 0, public bounds on ||x_i||_2 and |y_i| (required at finite epsilon), fixed
        without looking at the private rows. They apply after the public centre when one is given, else to the
        raw rows. At epsilon = inf they may be None: nothing is clipped (no noise, plain PCR).
    calibration : "analytic", "classic" (only epsilon <= 1) or "auto"
        (``engine.privacy.calibration.resolve_calibration``).
    centring : bool, centre the moments (default True). Without a public centre the centre is private and
        comes from the same release (a constant column; no budget is split off).
    x_center : array (m,) or float, y_center : float. A public centre (both or neither; needs centring).
    private_intercept : bool (default True), with a public centre also centre privately around it (the
        constant column of the same release: no budget split), so the intercept is learned privately.
    random_state : None (default: fresh OS entropy), int, SeedSequence or Generator (a known noise seed:
        reproducible, and the ledger says "not proven: the noise seed is known").
    sensitivity_source : "public" (the bounds were fixed without the private rows) or "data" (the caller
        read them off the private rows: recorded as not proven).
    caveats : tuple of str, other reasons the caller knows the fit is not proven (copied into the ledger,
        prefixed "not proven: " when missing).

    Attributes
    ----------
    coef_ : array (m,), regression coefficients in data units.
    intercept_ : float.
    components_ : array (k, m), the private principal axes (unit rows, largest entry positive).
    explained_variance_ : array (k,), eigenvalues of the noisy centred sum of squares of X (data units):
        scikit-learn's ``PCA.explained_variance_`` times (n - 1) (the row count is private, so it is not used).
    explained_variance_ratio_ : array (k,), the same over the noisy total (count-free, as scikit-learn's).
    x_mean_ : array (m,), y_mean_ : float, the centre (noisy under private centring, else the public one).
    y_scale_ : float, the standard deviation of y computed from the same noisy moments (post-processing of the
        release; nan without private centring). Used only to warn about a declared range far wider than y's spread.
    n_components_ : int, the number of components used.
    n_features_in_ : int.
    privacy_ledger_ : PrivacyLedger, one release (empty at epsilon = inf).
    n_clipped_ : int, training rows clipped in x or y (private: for the owner only).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5)) / 5
    >>> y = X @ np.array([1.0, -1.0, 0.5, 0.0, 0.0]) + 0.01 * rng.normal(size=200)
    >>> model = DPPCR(n_components=3, epsilon=np.inf, x_bound=5.0, y_bound=5.0).fit(X, y)
    >>> model.coef_.shape, model.components_.shape, len(model.privacy_ledger_)
    ((5,), (3, 5), 0)
    >>> private = DPPCR(n_components=3, epsilon=1.0, x_bound=5.0, y_bound=5.0).fit(X, y)
    >>> private.privacy_ledger_.status
    'proven'
    """

    _parameter_constraints: ClassVar[dict] = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "x_bound": [Interval(Real, 0, math.inf, closed="neither"), None],
        "y_bound": [Interval(Real, 0, math.inf, closed="neither"), None],
        "calibration": CALIBRATION_CONSTRAINT,
        "centring": ["boolean"],
        "private_intercept": ["boolean"],
        "x_center": ["array-like", Real, None],
        "y_center": [Real, None],
        "sensitivity_source": [StrOptions({"public", "data"})],
        "caveats": [tuple, list],
        # the shared entry accepts no Generator or SeedSequence, which noise_generator takes (and FreshGenerator is)
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
    }

    def __init__(self, n_components=2, epsilon=1.0, delta=1e-5, x_bound=None, y_bound=None, calibration="analytic",
                 centring=True, x_center=None, y_center=None, random_state=None, sensitivity_source="public",
                 caveats=(), private_intercept=True):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.calibration = calibration
        self.centring = centring
        self.x_center = x_center
        self.y_center = y_center
        self.random_state = random_state
        self.sensitivity_source = sensitivity_source
        self.caveats = caveats
        self.private_intercept = private_intercept

    # ------------------------------------------------------------------ cross-parameter rules
    def _check_cross_params(self) -> None:
        """The rules that tie parameters together (the single-parameter ones are declarative)."""
        if (self.x_bound is None or self.y_bound is None) and not math.isinf(float(self.epsilon)):
            raise ValueError("DP-PCR needs public bounds: set x_bound (max ||x_i||_2) and y_bound (max |y_i|) "
                             "before seeing the data")
        if (self.x_center is None) != (self.y_center is None):
            raise ValueError("give both x_center and y_center (a public centre) or neither (private centring)")
        if self.x_center is not None and not self.centring:
            raise ValueError("x_center/y_center are a public centre: they need centring=True")
        if not all(isinstance(c, str) and c.strip() for c in self.caveats):
            raise ValueError(f"caveats must be non-empty strings, got {self.caveats!r}")
        if not math.isinf(float(self.epsilon)):
            resolve_calibration(self.calibration, float(self.epsilon))  # "classic" above epsilon = 1 is refused

    def _check_data(self, X, y, *, reset: bool = True):
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, ensure_min_samples=2, reset=reset)
        n, m = X.shape
        limit = min(n - int(bool(self.centring)), m)
        if self.n_components is not None and self.n_components > limit:
            raise ValueError(f"n_components={self.n_components} exceeds min(n_samples"
                             f"{' - 1' if self.centring else ''}, n_features) = {limit}")
        if self.x_center is not None:
            xc = np.asarray(self.x_center, dtype=float)
            if xc.shape not in ((), (m,)) or not np.all(np.isfinite(xc)) or not math.isfinite(self.y_center):
                raise ValueError(f"x_center must be finite with shape ({m},) and y_center a finite number")
        self.n_components_ = limit if self.n_components is None else int(self.n_components)
        return X, y

    def _prepare(self, X, y) -> PreparedRows:
        """Validated parameters and data -> the clean part of a fit (used by fit, sweeps and the audit)."""
        self._validate_params()
        self._check_cross_params()
        X, y = self._check_data(X, y)
        xb, yb = self.x_bound, self.y_bound
        if xb is None or yb is None:  # epsilon = inf only: bounds that clip nothing (no release depends on them)
            xc = 0.0 if self.x_center is None else np.asarray(self.x_center, dtype=float)
            yc = 0.0 if self.y_center is None else float(self.y_center)
            xb = xb or max(float(np.linalg.norm(X - xc, axis=1).max()), 1e-300)
            yb = yb or max(float(np.abs(y - yc).max()), 1e-300)
        return prepare_rows(X, y, x_bound=xb, y_bound=yb, centring=self.centring, x_center=self.x_center,
                            y_center=self.y_center, private_intercept=self.private_intercept)

    def _release(self, prep: PreparedRows) -> MomentsRelease:
        return MomentsRelease(float(self.epsilon), float(self.delta), prep.sensitivity, self.calibration)

    def _record(self, prep: PreparedRows) -> dict:
        """The ledger record's name, note and sensitivity source (``MomentsRelease.randomise``/``record``)."""
        from_data = self.sensitivity_source == "data"
        note = (f"Analyze-Gauss on the upper triangle of Z'Z, Z = {prep.describe()} scaled into the unit ball; "
                "add/remove neighbours; rows clipped to ||x|| <= x_bound and |y| <= y_bound; exact worst-case "
                "sensitivity. PCA of the noisy X block and the regression on its top-k scores are post-processing."
                + (" The bounds were read off the private rows, so this is not a proven guarantee."
                   if from_data else ""))
        return {"name": STRICT_RELEASE, "note": note, "sensitivity_source": "data" if from_data else "public"}

    def _replicate_ledger(self, prep: PreparedRows, release: MomentsRelease, *, seed_known: bool) -> PrivacyLedger:
        """The ledger of each of a batch's replicates (sweeps draw R fits at once without a ledger: every one is
        this one release); a fit's own ledger is written by its draw."""
        led = PrivacyLedger()
        if release.noisy:
            led.add(release.record(**self._record(prep)))
        return self._add_caveats(led, seed_known=seed_known)

    def _add_caveats(self, led: PrivacyLedger, *, seed_known: bool) -> PrivacyLedger:
        """The caller's caveats and the known-seed caveat, on a ledger that holds a release (none at inf)."""
        if not len(led):
            return led
        for reason in self.caveats:
            led.add_caveat(reason if reason.startswith("not proven: ") else f"not proven: {reason}")
        if seed_known:
            led.add_caveat(SEED_KNOWN_CAVEAT)
        return led

    # ------------------------------------------------------------------ fit / predict
    def fit(self, X, y, *, scheduler=None, progress=None):
        """Fit on (X (n, m), y (n,)): one noisy release of the clipped moments, then PCR from it.

        X and y may be Dask collections (``ddf[x_cols], ddf[response]``): the release is then summed
        partition by partition on ``scheduler`` (``engine.methods.dp_pcr.lazy``; ``progress(done, total)``
        is called as partitions finish); both are ignored for in-memory data.
        """
        if is_lazy(X) or is_lazy(y):
            from engine.methods.dp_pcr.lazy import lazy_prepare

            prep = lazy_prepare(self, X, y, scheduler=scheduler, progress=progress)
        else:
            prep = self._prepare(X, y)
        release = self._release(prep)
        rng, seed_known = noise_generator(self.random_state)
        led = PrivacyLedger()  # the release records itself as it draws (nothing at epsilon = inf)
        G = release.randomise(prep.gram(), 1, rng, ledger=led, **self._record(prep))
        out = pcr_from_moments(G, prep, self.n_components_)
        if not (np.all(np.isfinite(out["coef"])) and np.all(np.isfinite(out["intercept"]))):
            raise ValueError("the coefficients are not finite float64 numbers: rescale the data (other units)")
        self.coef_ = out["coef"][0]
        self.intercept_ = float(out["intercept"][0])
        self.components_ = out["components"][0]
        self.explained_variance_ = out["explained_variance"][0]
        self.explained_variance_ratio_ = out["explained_variance_ratio"][0]
        self.x_mean_ = out["x_mean"][0]
        self.y_mean_ = float(out["y_mean"][0])
        self.y_scale_ = float(out["y_scale"][0])
        self.n_clipped_ = int(prep.rows.n_clipped)
        self.privacy_ledger_ = self._add_caveats(led, seed_known=seed_known)
        return self

    def predict(self, X):
        """Predictions X @ coef_ + intercept_, shape (n,)."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_

    def sample_releases(self, X, y, n_replicates: int, random_state=None) -> dict:
        """R independent private fits on the same data, batched (the Gram matrix is computed once).

        The noise comes from ``noise_generator(random_state)`` (the estimator's ``random_state`` when None).
        Returns the arrays of :func:`pcr_from_moments` and ``ledger`` (one fit's ledger).
        """
        if int(n_replicates) < 1:
            raise ValueError("n_replicates must be >= 1")
        prep = self._prepare(X, y)
        release = self._release(prep)
        rng, seed_known = noise_generator(self.random_state if random_state is None else random_state)
        G0, k = prep.gram(), self.n_components_
        parts = [pcr_from_moments(G, prep, k) for G in release.iter_noisy(G0, int(n_replicates), rng)]
        out: dict[str, Any] = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
        out["ledger"] = self._replicate_ledger(prep, release, seed_known=seed_known)
        return out
