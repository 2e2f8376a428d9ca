"""The recommended strict edPLS: (epsilon, delta)-DP linear calibration that is worth using (issue #18).

``StrictEDPLS`` (built by ``make_strict_edpls``) fits a linear model on spectra in four steps, and
only the releases of step 3 touch the private rows:

1. Public preprocessing (``basis.rowwise_chain``): a row-wise chemotools chain that fits nothing on
   data (default "snv+sg1": SNV, then a Savitzky-Golay first derivative). Each spectrum is transformed on
   its own, so one private row changes one transformed row: per-row bounds keep their meaning.
2. Public projection, centre and bounds: with ``X_public`` the top principal axes V of the preprocessed
   public spectra, their mean (the centre c) and x_bound = the 0.75 quantile (``x_bound_quantile``) of
   ||V'(p(x_i)) - c|| over the public rows (the rows beyond are clipped);
   without it a data-independent cubic B-spline basis along the channels, centre 0 and the data-free
   bound sqrt(m) ||V'M||_2 (SNV rows have norm sqrt(m); M is the linear filter after SNV). The response
   centre is the midpoint of ``y_range`` and its bound the half-width. A declared ``x_bound`` wins.
3. Gaussian releases, add/remove neighbours (issue #30: the count first; then, with ``y_range=None`` or
   ``refine_y_range``, a noisy histogram of y over a public log grid sets y's range (``engine.privacy.ranges``);
   ``estimator="auto"`` then picks TukeyEM on the public axes from the noisy count (``recommended_paths``);
   the two moment releases are calibrated jointly so that the whole fit meets (epsilon, delta) exactly
   under the Gaussian-DP accountant, which the ledger names; the paths are in ``recommended_paths``):

   a. the count n + N(0, sigma_n^2): sensitivity 1. It sets the released dimension d (post-processing):
      d = number of public axes whose expected signal n_hat * lambda_j / (2 x_bound^2) reaches
      ``dim_threshold`` times the noise sigma_xx of the moment release (noise grows with d, signal
      does not), capped at ``max_dim``;
   b. the X-moments Z'Z, z_i = [u_i f_i, x_bound] / (sqrt(2) x_bound), u_i = V'p(x_i) - c clipped to
      x_bound (f_i <= 1): ``engine.privacy.moments`` with private centring (the constant column carries the
      count and the column sums). Exact sensitivity ``add_remove_sensitivity([B], B)`` = sqrt(3)/2
      (proof: ``engine.privacy.moments``);
   c. the cross-moments Z'y~ with y~_i = clip(y_i - y_c, -y_bound, y_bound) / y_bound. Proof of the
      sensitivity: adding or removing row i changes the vector by z_i y~_i, and
      ||z_i y~_i|| <= ||z_i|| |y~_i| <= 1 * 1, attained by a row at both bounds. So Delta = 1.
      Its constant entry is the sum of y~, a DP estimate of the mean of y.

4. Post-processing (free): private centring of the noisy moments (``centred_moments``), ridge
   lambda = ``ridge_scale`` * sigma_xx * sqrt(d) (the order of the spectral norm of the noise, as
   AdaSSP scales its ridge to the noise; it keeps the regularised matrix positive definite), then
   ``n_components="auto"`` (default): in the eigenbasis of the regularised moments each coordinate
   gamma_j of the cross-moments is shrunk by the positive-part James-Stein factor
   max(0, 1 - c noise^2 / gamma_j^2), noise^2 = sigma_xy^2 + (sigma_xx ||beta_ridge||)^2 (public sigmas,
   c = ``shrink_scale``), so axes the noise swamps drop out, and the slopes stay only when a Stein estimate of
   their gain over the mean of y is positive (``_estimated_gain``); ``"ridge"``: plain ridge; an int k: PLS1 with
   k components on the regularised moments (``pls1_from_moments``). The mean of y (constant entry of the
   cross-moments over the noisy count) is clipped to ``y_range`` and, for the intercept, shrunk towards the
   public centre by the same James-Stein factor at its own noise level. When no axis reaches the
   threshold (step 3a), the fit releases only the noisy sum of y~ with the rest of the budget: it IS the
   private constant predictor (``engine.methods.baselines``), so it cannot be worse than it.

Measured defaults (``bench/bench_strict_utility.py``): chain "snv+sg1", max_dim 30, count share 0.05,
cross share 0.5, dim_threshold 2, ridge_scale 1, shrink_scale 1 (grids over 1-60, 0.25-16 and 1-2 on the
NIR generator at n = 100, 1000, 20000 and epsilon = 0.5, 1, 10).

At epsilon = inf nothing is noisy and lambda = 0: ridge becomes least squares on the projected,
clipped rows and PLS the plain PLS1 (a test checks both against scikit-learn on the same projected data).

Written by hand: no kept library composes public preprocessing, a public projection and separately
calibrated moment releases with a ledger (diffprivlib's LinearRegression perturbs the objective with
generic bounds and no projection).
"""
from __future__ import annotations

import math
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from engine.methods.constraints import CALIBRATION_CONSTRAINT, PRIVACY_PARAMETER_CONSTRAINTS
from engine.methods.edpls.basis import (
    chain_name,
    chain_operator,
    data_free_x_bound,
    pca_basis,
    rowwise_chain,
    spline_basis,
    uses_reference,
)
from engine.methods.edpls.recommended_limits import MIN_CHANNELS, NOTES, RELEASES
from engine.methods.edpls.recommended_paths import PathsMixin, count_lower_bound
from engine.methods.edpls.strict import pls1_from_moments
from engine.privacy import (
    SEED_KNOWN_CAVEAT,
    GaussianMechanism,
    PrivacyLedger,
    as_generator,
    noise_generator,
)
from engine.privacy.chunked import is_lazy
from engine.privacy.moments import MomentsRelease, centred_moments, scale_rows
from engine.privacy.ranges import RANGE_RELEASE, half_mechanism, range_counts, zoom_counts
from engine.release.fingerprint import data_sha256

__all__ = ["NOTES", "RELEASES", "StrictEDPLS", "make_strict_edpls"]

#: Dimension of the data-independent B-spline basis when there is no X_public.
SPLINE_DIM = 12


class StrictEDPLS(PathsMixin, RegressorMixin, BaseEstimator):
    """(epsilon, delta)-DP linear calibration with public preprocessing, projection and bounds.

    Parameters
    ----------
    epsilon : float > 0 or np.inf (no noise: the non-private formula, empty ledger).
    delta : float in (0, 1).
    y_range : (low, high), the public physical range of the response: centre = midpoint, bound = half-width;
        or None (no bound to guess): a share ``range_share`` of (epsilon, delta) buys a noisy histogram of y
        over a public log-spaced grid (``engine.privacy.ranges.private_range``), whose occupied range then
        serves as the range (in ``choices_``, the ledger and the release).
    X_public : array (n_pub, m) or None, spectra the owner declares public (no labels needed).
    x_bound : float > 0 or None, a declared bound on ||V'p(x) - c||; None: from X_public or data-free.
    n_components : "auto", "ridge" or int >= 1 (PLS1 components on the regularised noisy moments).
    preprocessing : str or list of str, a row-wise chain of ``engine.data.preprocess`` (default "snv+sg1"; e.g.
        ["snv", "sg1"], ["msc_public", "sg2"] or "none"). "msc_public" (first step): MSC against the mean of
        ``X_public``, a declared-public reference. A step that learns from the rows ("msc", "autoscale", ...) is
        refused, naming it. The chain is part of the release (its name, and the reference spectrum of
        "msc_public"), and predictions rebuild it.
    max_dim : int, the most public axes released (default 30).
    count_share, cross_share : float in (0, 1), the budget shares (of epsilon and of delta) of the count
        and of the cross-moments; the X-moments get the rest.
    dim_threshold : float > 0, signal-to-noise an axis needs to be released (see the module docstring).
    ridge_scale : float >= 0, lambda = ridge_scale * sigma_xx * sqrt(d).
    calibration : "analytic", "classic" or "auto".
    range_share : float in (0, 1), the share of (epsilon, delta) of the private range (at least; more with few
        rows: ``_range_share``).
    refine_y_range : bool, with a declared y_range also estimate the range privately inside it, at the same share
        as ``y_range=None`` (a declared range is often wide; at 10 % of the budget the range's release costs the
        moments path under 1 % of its budget under the joint accountant, more with few rows). False: the declared
        range as is (the Dask path always uses it as is).
    estimator : "auto", "moments" or "tukey": the moments path (steps 3-4 of the module docstring), TukeyEM
        (``engine.methods.tukey_em``, no bounds) on the first ``tukey_axes`` public axes, or the choice between
        them by post-processing of the noisy count (``choose_estimator``; the count is shared, so the choice
        costs no budget).
    tukey_axes : int >= 1, the public axes TukeyEM fits on (default 5).
    x_bound_quantile : float in (0, 1], with X_public: x_bound is this quantile of the projected public rows'
        norms (1: their max). Default 0.75 (measured, NIR generator at epsilon = 1, two seeds: the max let one
        outlying public spectrum set the scale, so the moments' signal fell below the noise and 1,000 rows
        reached 0.37-0.60 sigma_y; the 0.75 quantile clips a quarter of the rows a little and reaches
        0.12-0.20; 0.5 clips too much at n = 1,000). Public: the private rows beyond it are clipped.
    random_state : None (fresh OS entropy) or a known seed (the ledger then says "not proven").

    Attributes
    ----------
    coef_ : array (m,), coefficients on the preprocessed channels (``preprocess_`` output).
    intercept_ : float.
    preprocess_ : fitted row-wise Pipeline (fitted on a public dummy row).
    msc_spectrum_ : array (m,), with "msc_public" only: its reference (the mean of X_public).
    components_ : array (m, d), the public projection V actually released.
    x_center_ : array (d,), the public centre on those axes.
    privacy_ledger_ : PrivacyLedger, the three releases (empty at epsilon = inf).
    choices_ : dict, what the fit chose and why (public facts and DP releases only).
    n_features_in_ : int.
    n_partitions_, n_clipped_ : fits on Dask collections only (``engine.methods.edpls.lazy_recommended``):
        partitions summed, rows clipped to x_bound (exact: the owner's view).

    Examples
    --------
    >>> import numpy as np
    >>> from engine.data.sample_generators import make_nir_spectra
    >>> pub = make_nir_spectra(n_samples=200, random_state=1).X
    >>> data = make_nir_spectra(n_samples=2000, random_state=2)
    >>> model = make_strict_edpls(1.0, 1e-5, y_range=(8.0, 12.5), X_public=pub).fit(data.X, data.Y[:, 0])
    >>> [r.name for r in model.privacy_ledger_.entries] == list(RELEASES)
    True
    >>> model.predict(data.X[:3]).shape
    (3,)
    """

    _parameter_constraints: ClassVar[dict] = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "y_range": [tuple, list, np.ndarray, None],
        "X_public": ["array-like", None],
        "x_bound": [Interval(Real, 0, math.inf, closed="neither"), None],
        "n_components": [StrOptions({"auto", "ridge"}), Interval(Integral, 1, None, closed="left")],
        "preprocessing": [str, list, tuple],
        "max_dim": [Interval(Integral, 1, None, closed="left")],
        "count_share": [Interval(Real, 0, 1, closed="neither")],
        "cross_share": [Interval(Real, 0, 1, closed="neither")],
        "dim_threshold": [Interval(Real, 0, None, closed="neither")],
        "ridge_scale": [Interval(Real, 0, None, closed="left")],
        "shrink_scale": [Interval(Real, 0, None, closed="left")],
        "calibration": CALIBRATION_CONSTRAINT,
        "range_share": [Interval(Real, 0, 1, closed="neither")],
        "refine_y_range": ["boolean"],
        "estimator": [StrOptions({"auto", "moments", "tukey"})],
        "tukey_axes": [Interval(Integral, 1, None, closed="left")],
        "x_bound_quantile": [Interval(Real, 0, 1, closed="right")],
    }

    def __init__(self, epsilon=1.0, delta=1e-5, *, y_range=(0.0, 1.0), X_public=None, x_bound=None,
                 n_components="auto", preprocessing="snv+sg1", max_dim=30, count_share=0.05, cross_share=0.5,
                 dim_threshold=2.0, ridge_scale=1.0, shrink_scale=1.0, calibration="analytic", range_share=0.1,
                 refine_y_range=True, estimator="moments", tukey_axes=5, x_bound_quantile=0.75, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.y_range = y_range
        self.X_public = X_public
        self.x_bound = x_bound
        self.n_components = n_components
        self.preprocessing = preprocessing
        self.max_dim = max_dim
        self.count_share = count_share
        self.cross_share = cross_share
        self.dim_threshold = dim_threshold
        self.ridge_scale = ridge_scale
        self.shrink_scale = shrink_scale
        self.calibration = calibration
        self.range_share = range_share
        self.refine_y_range = refine_y_range
        self.estimator = estimator
        self.tukey_axes = tukey_axes
        self.x_bound_quantile = x_bound_quantile
        self.random_state = random_state

    # ------------------------------------------------------------------ public quantities
    def public_setup(self, m: int) -> dict:
        """Everything public of a fit on m channels: chain, basis, centres, bounds, sigmas (no private rows).

        Returns a dict with chain, V (m, d_max), eigenvalues (d_max,) or None, x_center (d_max,), x_bound,
        y_center, y_bound, budget, sigmas and the ``choices_`` entries that say where each came from.
        """
        lo, hi = (0.0, 1.0) if self.y_range is None else (float(v) for v in self.y_range)  # None: set in fit
        if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
            raise ValueError(f"y_range must be two finite numbers low < high, got {self.y_range!r}")
        Xpub = None if self.X_public is None else np.asarray(self.X_public, dtype=float)
        if Xpub is not None and (Xpub.ndim != 2 or Xpub.shape[1] != m or Xpub.shape[0] < 2
                                 or not np.isfinite(Xpub).all()):
            raise ValueError(f"X_public must be a finite array (n_pub >= 2, {m}) with the same channels")
        reference = Xpub.mean(axis=0) if Xpub is not None and uses_reference(self.preprocessing) else None
        chain = rowwise_chain(self.preprocessing, m, reference)
        if Xpub is not None:
            P = chain.transform(Xpub)
            V, lam, mu = pca_basis(P, self.max_dim)
            U = (P - mu) @ V
            centre, basis = mu @ V, f"principal axes of the preprocessed X_public ({Xpub.shape[0]} spectra)"
            q = float(self.x_bound_quantile)
            xb = float(np.quantile(np.sqrt((U**2).sum(axis=1)), q))
            xb_src = ("max ||V'p(x) - c|| over X_public" if q == 1.0 else
                      f"the {q:g} quantile of ||V'p(x) - c|| over X_public (private rows beyond it are clipped)")
            centre_src = "mean of the preprocessed, projected X_public"
        else:
            d = min(SPLINE_DIM, self.max_dim, m)
            V, lam = spline_basis(m, max(4, d)), None
            centre, basis, centre_src = np.zeros(V.shape[1]), f"{V.shape[1]} cubic B-splines along the channels", \
                "0 (no X_public)"
            if not chain_name(self.preprocessing).startswith("snv"):
                if self.x_bound is None:
                    raise ValueError("without X_public, declare x_bound or start the chain with 'snv' "
                                     "(then every row has norm sqrt(m) and a data-free bound exists)")
                xb, xb_src = None, None
            else:
                M = chain_operator(self.preprocessing, m)
                xb, xb_src = data_free_x_bound(V, M, m), "data-free: sqrt(m) ||V'M||_2 (SNV rows have norm sqrt(m))"
        if self.x_bound is not None:
            xb, xb_src = float(self.x_bound), "declared x_bound"
        if not (xb and math.isfinite(xb) and xb > 0):
            raise ValueError("the public x bound is zero or not finite: X_public has no spread after preprocessing")
        budget, sigmas, sens, accountant = self._calibrate(0.0)
        return dict(range_share=0.0, chain=chain, reference=reference, V=V, eigenvalues=lam, x_center=centre,
                    x_bound=xb, y_center=(lo + hi) / 2, y_bound=(hi - lo) / 2, budget=budget, sensitivities=sens,
                    sigmas=sigmas, accountant=accountant, basis=basis, centre_source=centre_src, x_bound_source=xb_src)

    def _kept_public_setup(self, m: int) -> dict:
        """``public_setup(m)``, computed again only when a public input changed since the last fit.

        A sweep refits the same estimator with only ``random_state`` changed; with ``X_public`` the public
        setup (preprocessing and PCA of the public spectra) is nearly all of a fit's time (41 ms of 41 ms for
        500 public spectra of 350 channels), so it is kept. The key is every other parameter and the public
        spectra's contents (an in-process hash, never shown or stored).
        """
        params = {k: v for k, v in self.get_params(deep=False).items() if k not in ("random_state", "X_public")}
        Xpub = self.X_public
        key = (m, repr(sorted(params.items())),
               None if Xpub is None else data_sha256(np.asarray(Xpub, dtype=float)))
        kept = getattr(self, "_public_kept", None)
        if kept is None or kept[0] != key:
            kept = (key, self.public_setup(m))
            self._public_kept = kept
        return kept[1]

    def choose_dim(self, pub: dict, n_hat: float) -> tuple[int, str]:
        """The released dimension from public eigenvalues and the noisy count (post-processing)."""
        d_max = pub["V"].shape[1]
        lam = pub["eigenvalues"]
        sig = pub["sigmas"][RELEASES[1]]
        if lam is None:
            return d_max, "fixed data-independent basis"
        if sig == 0:
            return d_max, "no noise: every public axis up to max_dim"
        # A lower bound of the count, n_hat - 2 sigma_n: the count's share is small (at epsilon = 0.5, sigma_n =
        # 138), so with few rows n_hat alone was often several times n and opened axes whose moments the noise
        # swamps (corn, 60 rows, epsilon = 0.5: n_hat from -51 to 343; the model path then scored 6-7 sigma_y
        # against the private constant's 3.0). From a few thousand rows the bound is within a few % of n_hat.
        n_low = count_lower_bound(pub, n_hat)
        signal = max(n_low, 0.0) * lam / (2.0 * pub["x_bound"] ** 2)
        d = int(min(np.sum(signal >= self.dim_threshold * sig), d_max))
        if d == 0:
            return 0, (f"no public axis reaches the signal-to-noise {self.dim_threshold:g} at n_hat - 2 sigma_n = "
                       f"{n_low:.0f} (a DP release): the private constant predictor (noisy mean of y) is the better "
                       "model")
        return d, (f"axes whose expected signal n_low * lambda_j / (2 x_bound^2) >= {self.dim_threshold:g} * "
                   f"sigma_xx = {self.dim_threshold * sig:.3g} (n_low = n_hat - 2 sigma_n = {n_low:.0f}, a DP "
                   "release)")

    # ------------------------------------------------------------------ the private part
    def scaled_rows(self, X, y, pub: dict, d: int):
        """Clip and scale the private rows (z_i, y~_i) for the releases: (ScaledRows, y~ (n,))."""
        U = pub["chain"].transform(X) @ pub["V"][:, :d] - pub["x_center"][:d]
        rows = scale_rows([U], [pub["x_bound"]], private_centring=True)
        yt = np.clip(y - pub["y_center"], -pub["y_bound"], pub["y_bound"]) / pub["y_bound"]
        return rows, yt

    def fit(self, X, y, sample_weight=None, *, scheduler=None, progress=None):
        """Fit on spectra X (n, m) and responses y (n,): DP releases, then post-processing.

        Parameters
        ----------
        X : array (n, m); y : array (n,). Or a dask DataFrame / Array X with a dask Series / Array y: the
            releases are summed partition by partition (``engine.methods.edpls.lazy_recommended``) on
            ``scheduler``, calling ``progress(done, total)`` as partitions finish.
        sample_weight : None or array (n,) of non-negative integer counts. Row i counts ``sample_weight[i]``
            times, exactly as if it were repeated (the count, every sum and hence the sensitivity argument are
            those of the repeated rows; a count of 0 drops the row). Each repeat is one individual: the
            guarantee is per repeat, so pass counts only when each repeat is a distinct record (resampling
            simulations, deduplicated tables).

        Returns
        -------
        self
        """
        if is_lazy(X) or is_lazy(y):  # Dask collections: passes over the partitions
            from engine.methods.edpls.lazy_recommended import fit_lazy

            return fit_lazy(self, X, y, sample_weight, scheduler=scheduler, progress=progress)
        X, y, w = self._check_fit_data(X, y, sample_weight)
        self.y_range_ = None  # set only by a range this fit estimates (a refit must not show the last one's)
        pub = self._kept_public_setup(X.shape[1])
        rng, seed_known = noise_generator(self.random_state)
        led = PrivacyLedger()  # every release below records itself as it draws (nothing at epsilon = inf)
        n_hat = float(self.mechanisms(pub)[RELEASES[0]].randomise(float(w.sum()), rng, ledger=led, name=RELEASES[0],
                                                                  note=NOTES[RELEASES[0]]))
        pub = self.release_calibration(pub, n_hat)  # the range's share from the noisy count, then the sigmas
        tukey, why = self.choose_estimator(pub, n_hat)
        if RANGE_RELEASE in pub["budget"]:  # TukeyEM composes under basic composition: its range is one draw
            pub = self._private_y_range(y, w, pub, rng, led, zoom=not tukey)
        mechs = self.mechanisms(pub)
        d, d_why = (min(int(self.tukey_axes), pub["V"].shape[1]), why) if tukey else self.choose_dim(pub, n_hat)
        if tukey:
            pub = self._fit_tukey(X, y, w, pub, d, n_hat, rng, led)
        elif d == 0:
            pub = self._fit_constant(y, pub, n_hat, rng, w, ledger=led)
        else:
            rows, G0, b0 = self.moment_sums(X, y, w, pub, d)
            Gn = mechs[RELEASES[1]].randomise(G0, 1, rng, ledger=led, name=RELEASES[1], note=NOTES[RELEASES[1]])[0]
            b = mechs[RELEASES[2]].randomise(b0, rng, ledger=led, name=RELEASES[2], note=NOTES[RELEASES[2]])
            self._post_process(Gn, b, rows, pub, d)
        self._finish(pub, d, d_why, n_hat, led, seed_known)
        self.choices_["path"] = why  # TukeyEM or the moments, and why (``choose_estimator``)
        return self

    def _check_fit_data(self, X, y, sample_weight):
        """Validated (X, y, row counts) of an in-memory fit (ValueError for too few channels)."""
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, ensure_min_samples=2)
        w = _counts(sample_weight, X.shape[0])
        if X.shape[1] < MIN_CHANNELS:
            raise ValueError(f"the recommended strict fit is for spectra: it needs at least {MIN_CHANNELS} channels "
                             f"(its derivative filter and spline basis), got {X.shape[1]}; use EDPLS(mode='strict') "
                             "or AdaSSP for a few variables")
        return X, y, w

    def mechanisms(self, pub: dict) -> dict:
        """The fit's release objects, calibrated from the public setup: ``RELEASES`` name -> mechanism.

        The count and the cross-moments are ``GaussianMechanism``s, the X-moments a ``MomentsRelease``
        (``engine.privacy.mechanisms`` documents the interface: each draws and records in one call). ``fit``
        draws through these; ``sample_releases`` (the privacy audit's trials) batches through the same objects.
        At epsilon = inf they draw nothing and record nothing.
        """
        budget: dict[str, tuple[float, float]] = pub["budget"]  # name -> (epsilon, delta)
        sens = pub["sensitivities"]
        out = {RELEASES[0]: GaussianMechanism(*budget[RELEASES[0]], sens[RELEASES[0]], self.calibration),
               RELEASES[1]: MomentsRelease(*budget[RELEASES[1]], sens[RELEASES[1]], self.calibration),
               RELEASES[2]: GaussianMechanism(*budget[RELEASES[2]], sens[RELEASES[2]], self.calibration)}
        if RANGE_RELEASE in budget:  # the private range's histogram (``_private_y_range``)
            out[RANGE_RELEASE] = GaussianMechanism(*budget[RANGE_RELEASE], sens[RANGE_RELEASE], self.calibration)
        return out

    def moment_sums(self, X, y, w, pub: dict, d: int):
        """The exact (private) sums the moment releases perturb: (ScaledRows, Z'WZ (d+1, d+1), Z'W y~ (d+1,))."""
        rows, yt = self.scaled_rows(X, y, pub, d)
        G0 = MomentsRelease.gram(rows.Z * np.sqrt(w)[:, None])
        return rows, G0, rows.Z.T @ (w * yt)

    def sample_releases(self, X, y, n_replicates: int, random_state=None, sample_weight=None, *,
                        range_bins=None, zoom_bins=None, n_calibration=None) -> dict:
        """``n_replicates`` independent draws of a fit's releases on (X, y), batched (no ledger).

        The same checks, public setup, release objects (``mechanisms``) and private sums (``moment_sums``) as
        ``fit``; for the privacy audit, which needs many draws of the release itself. Only for a released
        dimension that does not depend on the noisy count (the data-independent basis, without X_public):
        otherwise ValueError.

        ``range_bins``: indices of the private range's histogram bins to draw (the noise is independent per bin,
        so a subset is the same law as the whole histogram restricted); None: every bin. ``zoom_bins``: the same for
        the zoom half (``engine.privacy.ranges``), drawn over equal bins of the declared y_range. ``n_calibration``: the
        count the releases are calibrated for (``release_calibration``, as ``fit`` calibrates for its noisy count;
        an audit passes the same count for both neighbouring data sets); None: the exact count of these rows.

        Returns
        -------
        dict with "count" (R,), "moments" (R, d + 1, d + 1), "cross" (R, d + 1), "d", and with the declared
        range refined privately (``refine_y_range``) "range" (R, bins): the histogram's draws (its first half on the
        moments path, and then "zoom" (R, zoom bins): the second half, as a zoom).
        """
        X, y, w = self._check_fit_data(X, y, sample_weight)
        if self.y_range is None:
            raise ValueError("sample_releases needs a declared y_range (y_range=None adds the range's release)")
        pub = self._kept_public_setup(X.shape[1])
        pub = self.release_calibration(pub, float(w.sum()) if n_calibration is None else float(n_calibration))
        if pub["eigenvalues"] is not None:
            raise ValueError("with X_public the released dimension depends on the noisy count: sample whole fits")
        rng, R = as_generator(random_state), int(n_replicates)
        mechs = self.mechanisms(pub)
        count = mechs[RELEASES[0]].randomise(np.full(R, float(w.sum())), rng)
        d, _ = self.choose_dim(pub, float(w.sum()))
        _, G0, b0 = self.moment_sums(X, y, w, pub, d)
        moments = mechs[RELEASES[1]].randomise(G0, R, rng)
        cross = mechs[RELEASES[2]].randomise(np.broadcast_to(b0, (R, b0.size)), rng)
        out = {"count": count, "moments": moments, "cross": cross, "d": d}
        if RANGE_RELEASE in mechs:
            y_in = self.range_input(y, w)
            h = range_counts(y_in)
            h = h if range_bins is None else h[np.asarray(range_bins, dtype=int)]
            half = None if self.choose_estimator(pub, float(w.sum()))[0] else half_mechanism(mechs[RANGE_RELEASE])
            out["range"] = (mechs[RANGE_RELEASE] if half is None else half).randomise(np.broadcast_to(h, (R, h.size)),
                                                                                     rng)
            if half is not None:
                # the zoom half: its grid is the first half's output in a fit; over any one public grid (here the
                # declared range's) it is the same Gaussian histogram, and the choice of grid is post-processing
                z = zoom_counts(y_in, *(float(v) for v in self.y_range))
                z = z if zoom_bins is None else z[np.asarray(zoom_bins, dtype=int)]
                out["zoom"] = half.randomise(np.broadcast_to(z, (R, z.size)), rng)
        return out

    def _finish(self, pub, d, d_why, n_hat, ledger, seed_known) -> None:
        """The fitted attributes every path sets after its releases: axes, centre, chain, ledger, choices."""
        noisy = len(ledger) > 0
        self.components_ = pub["V"][:, :d].copy()  # a copy: the kept public setup serves the next fit
        self.x_center_ = np.asarray(pub["x_center"][:d], dtype=float)
        self.preprocess_ = pub["chain"]
        if pub.get("reference") is not None:
            self.msc_spectrum_ = np.asarray(pub["reference"], dtype=float)
        if seed_known and noisy:
            ledger.add_caveat(SEED_KNOWN_CAVEAT)
        ledger.accountant = pub.get("accountant", "basic")
        self.privacy_ledger_ = ledger
        self.choices_.update({
            "chain": chain_name(self.preprocessing), "basis": pub["basis"], "d": d, "d_max": pub["V"].shape[1],
            "d_why": d_why,
            "centre_source": pub["centre_source"], "x_bound": pub["x_bound"], "x_bound_source": pub["x_bound_source"],
            "y_center": pub["y_center"], "y_bound": pub["y_bound"],
            "y_source": pub.get("y_source", "midpoint and half-width of y_range"),
            "budget": {k: {"epsilon": e, "delta": dl, "sigma": pub["sigmas"][k]}
                       for k, (e, dl) in pub["budget"].items()},
            "n_hat": n_hat if noisy else None,
        })

    def _post_process(self, G, b, rows, pub, d):
        """Noisy moments -> coefficients in data units (no access to the rows beyond their public scale)."""
        cz = rows.const_z
        C, mean, n_hat = centred_moments(G[None], cz)
        C, mean, n_hat = C[0], mean[0], float(n_hat[0])
        mean_y = float(np.clip(b[d] / (cz * n_hat), -1.0, 1.0))
        cxy = b[:d] - n_hat * mean * mean_y
        sig = pub["sigmas"][RELEASES[1]]
        lam = float(self.ridge_scale) * sig * math.sqrt(d)
        A = C + lam * np.eye(d)
        k = self._k(d)
        if k is None:
            vals, Q = np.linalg.eigh(A)
            vals = np.maximum(vals, max(lam, 1e-12 * max(float(vals[-1]), 1e-300)))
            gamma = Q.T @ cxy
            shrink = np.ones(d)
            if self.n_components == "auto" and sig > 0:
                # per-axis Wiener shrinkage: the noise on gamma_j is N(0, sigma_xy^2) plus the X-moment noise
                # acting on the ridge solution (sigma_xx ||beta||); both sigmas are public
                beta0 = Q @ (gamma / vals)
                noise2 = pub["sigmas"][RELEASES[2]] ** 2 + (sig * float(np.linalg.norm(beta0))) ** 2
                shrink = np.maximum(0.0, 1.0 - float(self.shrink_scale) * noise2 / np.maximum(gamma**2, 1e-300))
            beta = Q @ (shrink * gamma / vals)
            how = (f"ridge on the regularised noisy moments (lambda = {lam:.4g})"
                   + (", per-axis positive-part James-Stein shrinkage max(0, 1 - c noise^2 / gamma^2)"
                      if self.n_components == "auto" else ""))
            if self.n_components == "auto" and sig > 0 and np.any(shrink > 0):
                gain = _estimated_gain(beta, cxy, C, gamma, vals, shrink, noise2, pub["sigmas"][RELEASES[2]] ** 2,
                                       float(self.shrink_scale))
                if gain <= 0:
                    beta = np.zeros(d)
                    how += (f"; its estimated gain over the mean of y ({gain:.3g}, a Stein estimate from the noisy "
                            "moments) is not positive, so the slopes are 0: the private mean of y")
        else:
            beta = pls1_from_moments(A, cxy, k)["coef"]
            how = f"PLS1 with k = {k} components on the regularised noisy moments (lambda = {lam:.4g})"
        # z = u / S with S = sqrt(2) x_bound; y~ = (y - y_c) / y_bound
        S, By = rows.scale, pub["y_bound"]
        w = pub["V"][:, :d] @ (beta * By / S)
        self.coef_ = w
        # the intercept's mean of y, shrunk towards the public centre (positive-part James-Stein, public sigma)
        sm2 = (pub["sigmas"][RELEASES[2]] / (cz * n_hat)) ** 2
        mean_y_js = mean_y * max(0.0, 1.0 - sm2 / mean_y**2) if mean_y != 0 else 0.0
        self.intercept_ = float(pub["y_center"] + By * (mean_y_js - mean @ beta)
                                - (pub["x_center"][:d] @ beta) * By / S)
        if not (np.all(np.isfinite(w)) and math.isfinite(self.intercept_)):
            raise ValueError("the coefficients are not finite: rescale the data")
        self.choices_ = {"ridge_lambda": lam, "k": "ridge" if k is None else k, "model": how,
                         "intercept": "DP mean of y (cross-moment constant entry) clipped to y_range, shrunk towards "
                                      "the centre of y_range by positive-part James-Stein at its public noise level"}

    def _k(self, d: int):
        if self.n_components in ("ridge", "auto"):
            return None
        return int(min(self.n_components, d))

    def predict(self, X):
        """Predictions p(X) @ coef_ + intercept_, shape (n,)."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.preprocess_.transform(X) @ self.coef_ + self.intercept_


def _estimated_gain(beta, cxy, C, gamma, vals, shrink, noise2: float, sigma_xy2: float, c: float) -> float:
    """Stein's estimate of the fit's reduction of the residual sum of squares over the mean of y (a heuristic).

    The reduction is 2 beta'c_xy - beta'C beta on the exact centred moments (y~ units, sums). On the noisy ones
    beta'c^_xy is biased upwards by the noise beta fitted: Stein's lemma gives E[e'beta(c^)] = sigma_xy^2
    E[div beta] (e the cross-moments' noise, variance sigma_xy^2 per entry), and per eigen-axis the positive-part
    James-Stein coefficient shrink_j gamma_j / v_j has the derivative (1 + c noise^2 / gamma_j^2) / v_j where it
    is not 0. So 2 (beta'c^ - sigma_xy^2 div) - beta'C^beta, post-processing of the releases and their public
    sigmas. Not exactly unbiased: the shrinkage's noise^2 also moves with c^ (through ||beta_ridge||), and the
    X-moments' noise in C^ and in the eigenbasis is not corrected. Measured on corn (60 rows, starch, epsilon = 2
    and 10, 20 splits): without this test the slopes cost 1.25 -> 1.50 and 1.06 -> 1.13 sigma_y over the private
    mean alone."""
    active = shrink > 0
    div = float(np.sum((1.0 + c * noise2 / np.maximum(gamma[active] ** 2, 1e-300)) / vals[active]))
    return float(2.0 * (beta @ cxy - sigma_xy2 * div) - beta @ C @ beta)


def _counts(sample_weight, n: int) -> np.ndarray:
    """Row counts (n,) as floats: ones, or the given non-negative integers (anything else is refused)."""
    if sample_weight is None:
        return np.ones(n)
    w = np.asarray(sample_weight, dtype=float)
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0) or np.any(w != np.round(w)):
        raise ValueError("sample_weight must be non-negative integer counts, one per row (a row drawn c times "
                         "counts c times); fractional weights have no add/remove sensitivity argument here")
    if w.sum() < 1:
        raise ValueError("sample_weight counts no row")
    return w


def make_strict_edpls(epsilon, delta, *, y_range=None, X_public=None, x_bound=None, n_components="auto",
                      random_state=None, **params) -> StrictEDPLS:
    """The recommended strict edPLS estimator (``StrictEDPLS``) with the measured defaults.

    Parameters
    ----------
    epsilon, delta : the whole fit's budget (every release, the dimension choice included).
    y_range : (low, high), the response's public physical range, or None: a private range from a share of the
        budget (``StrictEDPLS``'s ``range_share``), no bound to guess.
    X_public : array (n_pub, m) or None, spectra declared public (centre, bounds and projection come from it).
    x_bound : float or None, a declared bound (overrides the one from X_public or the data-free one).
    n_components : "auto", "ridge" or int.
    random_state : None (fresh entropy) or a known seed (tests).
    params : other ``StrictEDPLS`` parameters (preprocessing, max_dim, shares, ...); ``estimator`` defaults to
        "auto" here (TukeyEM from the row count where it is ahead, the moments path below).

    Returns
    -------
    StrictEDPLS (unfitted).
    """
    params.setdefault("estimator", "auto")
    return StrictEDPLS(epsilon, delta, y_range=None if y_range is None else tuple(y_range), X_public=X_public,
                       x_bound=x_bound,
                       n_components=n_components, random_state=random_state, **params)
