"""edPLS: (epsilon, delta)-differentially private PLS1 regression (spec ``edpls.md``).

Two modes, one estimator (``EDPLS``, scikit-learn compatible):

- ``mode="paper"``: Nikzad-Langerodi et al.'s Algorithm 1 exactly (spec Sec. 2). The hidden
  path is ordinary NIPALS PLS1 on the mean-centred data; per component the unit weight w, the
  unit score t, the loading p and the y-loading c are released with Gaussian noise calibrated
  to sample bounds taken from the *current deflated residuals* (Eqs. 7-11), and
  b = W_dp (P_dp' W_dp)^-1 c_dp. Flags reproduce the authors' code: ``noise_std="sigma_squared"``
  (diPLSlib draws with std sigma^2, spec Sec. 4.4) and ``ymax="signed"`` (max f, not max |f|).
  The sensitivities come from the private data, so the ledger marks every release
  ``sensitivity_source="data"``: the paper's per-release (eps, delta) is *claimed*, not proven.
- ``mode="strict"``: actually (eps, delta)-DP. Rows are clipped to public bounds
  (||x_i|| <= x_bound, |y_i| <= y_bound) and scaled into the unit ball, the (d x d) second-moment
  matrix Z'Z is released ONCE with Analyze-Gauss for the whole budget, and PLS1 is computed
  from the noisy moments (Dayal & MacGregor's improved kernel algorithm #1, PLS1 case) as
  post-processing. Centring: with a public centre (``x_center``, ``y_center``) the rows are
  centred by it before clipping. Without one (the default) the centre is private and comes
  from the SAME release: a constant column a = sqrt(x_bound^2 + y_bound^2) is appended to every
  row, so Z'Z also carries the clipped column sums and the count, and the moments are centred
  at the noisy mean as post-processing. No budget is split off; the price is that the rows are
  scaled by sqrt(2 (x_bound^2 + y_bound^2)) instead of sqrt(x_bound^2 + y_bound^2) (noise on the
  moments x2 in std), and that the bounds then apply to the raw (uncentred) rows. The ledger
  holds exactly one public-sensitivity release, calibrated to the exact worst-case L2 change of the
  released upper triangle (``strict_sensitivity``: at most sqrt(3)/2 with private centring, below 1
  with a public centre; the proof is in its docstring). The noisy centred moment matrix is projected
  onto the PSD cone (eigenvalues clipped at 0) before PLS, which is post-processing. Strict
  mode releases W, P, c and b (and the noisy means) but no training scores (``x_scores_`` is
  None): per-row scores of the training data cannot be released privately.

Written by hand because no library implements it correctly: diPLSlib's ``edpls`` (the
authors' code) applies std sigma^2, uses the signed y-max, never centres inside the function,
has no strict mode and no replicate batching; its ``EDPLS`` class no longer runs on current
scikit-learn. The privacy core (calibration, Analyze-Gauss, clipping, ledger) is
``engine.privacy``, used here, not re-implemented.

Speed. The clean path is NIPALS PLS1 computed without forming the deflated residual E (two
row-blocked, threaded passes over X per component, X never copied or deflated; ``edpls_core``). The
clean path is computed once per data set; replicate fits, epsilon sweeps and sweeps over the number of
components only draw noise and solve k x k systems, batched over replicates.

Numerics and input (issue #16). X and y are checked column by column (``column_checks``): NaN, inf,
text, overflow, underflow, constant and duplicate columns are refused with a ``ValueError`` naming the
column (a column-vector y is ravelled with scikit-learn's ``DataConversionWarning``). Extreme scales are
handled by exact power-of-two rescaling and every tolerance is relative (``edpls_core``), so c X, c' y
gives the fit of X, y in the new units for c, c' in [1e-150, 1e150]; a fit refuses only when X has run
out of numerical rank or y is explained to machine precision, and then says which.

Noise. Every release draws its noise through ``engine.privacy.noise_generator(random_state)``:
``random_state=None`` (the default) is fresh OS entropy; any other value is a noise seed somebody
knows, and the fit's ledger then carries ``SEED_KNOWN_CAVEAT`` (not proven). The same holds for
``sample_releases``, ``fit_replicates`` and every sweep; sweep tables take their ``status`` column
("proven", "not proven", "no privacy") from the ledger of the very fit of each row.

Replicates and random streams: a fit draws all its noise in one block of shape
(k, 2m + n + 1) per component order w, t, p, c (the order diPLSlib draws in), and
``fit_replicates(..., R, g)`` draws (R, k, 2m + n + 1) from the same Generator, which is the
same stream as R sequential fits sharing ``g``: replicate r equals the r-th separate fit.
"""
from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import check_array, check_consistent_length, check_is_fitted, validate_data

from engine.methods.column_checks import (
    check_columns,
    column_label,
    frame_names,
    raise_if_non_numeric,
    series_name,
)

from engine.privacy import (
    SEED_KNOWN_CAVEAT,
    GaussianMechanism,
    PrivacyLedger,
    Release,
    ledger_totals,
    noise_generator,
    sample_symmetric_gaussian,
)

__all__ = [
    "EDPLS",
    "QUANTITIES",
    "STRICT_RELEASE",
    "chain_caveat",
    "compare_private_plain",
    "edpls_replicates",
    "estimator_from_release",
    "from_json",
    "model_from_dict",
    "no_release_reason",
    "owner_sheets",
    "pipeline_audit_case",
    "pls1_from_moments",
    "public_parameters",
    "rmsep_curve",
    "rmsep_vs_components",
    "rmsep_vs_preprocessing",
    "samples_needed",
    "samples_needed_curve",
    "shareable_ledger",
    "shareable_release",
    "strict_sensitivity",
    "to_json",
]

#: Name of the one ledger release of a strict fit (the manifest of a shareable release names it).
STRICT_RELEASE = "Z'Z"

#: The four released quantities per component, in release (and random-draw) order.
QUANTITIES = ("w", "t", "p", "c")

# The numerics (clean NIPALS path, PLS1 from moments, strict-mode rows) live in ``edpls_core``; the
# names are imported here so that ``engine.methods.edpls.<name>`` keeps working.
from engine.methods.edpls_core import (  # noqa: E402,F401
    _STRICT_CHUNK_ENTRIES,
    _STRICT_PSD,
    _batched_solve,
    _nipals_path,
    _PaperPath,
    _per_release_budget,
    _psd_project,
    _row_block,
    _RowPasses,
    _strict_postprocess,
    _strict_state,
    _StrictState,
    _unit_sigma,
    pls1_from_moments,
    strict_sensitivity,
)

# =============================================================================================
# Prepared data: the clean part of a fit, reused by fits, replicates and sweeps
# =============================================================================================
class _Prepared:
    """Everything about a fit that does not depend on the noise (and, in paper mode, on eps)."""

    def __init__(self, est: "EDPLS", X: np.ndarray, y: np.ndarray, K: int, info: dict | None = None):
        self.params = est.get_params(deep=False)
        self.mode = est.mode
        self.n, self.m = X.shape
        self.K = int(K)
        #: column names and per-column scales of the input (for messages that name a column)
        self.info = info or {}
        x_stats, y_stats = self.info.get("x_stats"), self.info.get("y_stats")
        if self.mode == "paper":
            self.path = _nipals_path(X, y, self.K, centering=est.centering, ymax_rule=est.ymax,
                                     x_largest=None if x_stats is None else x_stats.largest,
                                     y_largest=None if y_stats is None else y_stats.largest,
                                     y_label=self.info.get("y_label", "y"))
            self.strict = None
        else:
            self.path = None
            self.strict = _strict_state(
                X, y, x_bound=est.x_bound, y_bound=est.y_bound, centering=est.centering,
                x_center=est.x_center, y_center=est.y_center, x_names=self.info.get("x_names"),
            )
        self._clean = {}

    def scale_problem(self) -> str:
        """Why outputs in data units left float64's range: the columns whose scales combine badly."""
        info = self.info
        xs, ys = info.get("x_stats"), info.get("y_stats")
        if xs is None or ys is None:
            return "the data's scale"
        nz = np.where(xs.absmax > 0, xs.absmax, np.inf)
        j_small, j_big = int(np.argmin(nz)), int(np.argmax(xs.absmax))
        names = info.get("x_names")
        return (f"{info.get('y_label', 'y')} (values up to {ys.largest:.3g}) against "
                f"{column_label('X', j_small, names)} (up to {xs.absmax[j_small]:.3g}) and "
                f"{column_label('X', j_big, names)} (up to {xs.absmax[j_big]:.3g})")

    # ------------------------------------------------------------------ noise tables
    def noise_arrays(self, k: int, epsilon: float):
        """Paper mode: (sensitivity, sigma, std_applied) arrays of shape (k, 4), and (eps_i, delta_i)."""
        p, path = self.params, self.path
        sens = np.maximum(np.column_stack([path.xmax * path.ymax, path.xmax, path.xmax, path.ymax])[:k], 0.0)
        if math.isinf(float(epsilon)):
            unit, eps_i, delta_i = 0.0, math.inf, 0.0
        else:
            eps_i, delta_i = _per_release_budget(epsilon, p["delta"], k, p["budget"])
            unit = _unit_sigma(eps_i, delta_i, p["calibration"])
        with np.errstate(over="ignore", invalid="ignore"):
            sig = unit * sens
            applied = sig if p["noise_std"] == "sigma" else sig**2
        if not (np.all(np.isfinite(sens)) and np.all(np.isfinite(applied))):
            raise ValueError(
                "overflow: the noise std of the paper's releases (calibrated to sensitivities in data units, max |y| "
                f"times max ||x||{', squared as in the authors code' if p['noise_std'] != 'sigma' else ''}) is not a "
                f"finite float64 number for {self.scale_problem()}; rescale the data (other units)")
        return sens, sig, applied, (eps_i, delta_i)

    def noise_table(self, k: int, epsilon: float) -> pd.DataFrame:
        """Long table: one row per component and quantity (paper) or one row (strict)."""
        p = self.params
        if self.mode == "strict":
            eps = float(epsilon)
            st = self.strict
            sig = 0.0 if math.isinf(eps) else self.strict_mechanism(eps).sigma
            return pd.DataFrame([{
                "component": 0, "quantity": "ZtZ", "sensitivity": st.sensitivity, "sigma": sig, "std_applied": sig,
                "std_data_units": sig * st.scale**2, "epsilon": eps, "delta": p["delta"] if sig else 0.0,
            }])
        sens, sig, applied, (eps_i, delta_i) = self.noise_arrays(k, epsilon)
        return pd.DataFrame({
            "component": np.repeat(np.arange(1, k + 1), 4), "quantity": list(QUANTITIES) * k,
            "sensitivity": sens.ravel(), "sigma": sig.ravel(), "std_applied": applied.ravel(),
            "epsilon": eps_i, "delta": delta_i,
        })

    def strict_mechanism(self, epsilon: float) -> GaussianMechanism:
        """The Gaussian mechanism of the strict release: (eps, delta) at the exact sensitivity
        ``strict_sensitivity`` of the released upper triangle of Z'Z (Analyze-Gauss with a tight Delta)."""
        p = self.params
        return GaussianMechanism(float(epsilon), p["delta"], self.strict.sensitivity, p["calibration"])

    # ------------------------------------------------------------------ draws
    def draw(self, k: int, epsilon: float, n_replicates: int, rng, *, keep_raw: bool = False,
             want_scores: bool = True) -> dict:
        """R private releases (noise only; the clean part is shared). Arrays have a leading R axis."""
        if not 1 <= k <= self.K:
            raise ValueError(f"k must be in 1..{self.K}")
        R = int(n_replicates)
        if self.mode == "strict":
            return self._draw_strict(k, epsilon, R, rng)
        return self._draw_paper(k, epsilon, R, rng, keep_raw=keep_raw, want_scores=want_scores)

    def _draw_paper(self, k, epsilon, R, rng, *, keep_raw, want_scores) -> dict:
        path, m, n = self.path, self.m, self.n
        W0, T0, P0, c0 = path.W[:, :k].T, path.T[:, :k].T, path.P[:, :k].T, path.c[:k]
        noisy = not math.isinf(float(epsilon))
        out = {}
        if noisy:
            applied = self.noise_arrays(k, epsilon)[2]
            # One block per fit, in diPLSlib's order w (m), t (n), p (m), c (1) per component; the
            # noisy releases are formed in place in the random block (no further (R, k, m) arrays).
            Z = rng.standard_normal((R, k, 2 * m + n + 1))
            Wr = Z[..., :m]
            Wr *= applied[:, 0, None]
            Wr += W0
            Pd = Z[..., m + n:2 * m + n]
            Pd *= applied[:, 2, None]
            Pd += P0
            cd = Z[..., 2 * m + n]
            cd *= applied[:, 3]
            cd += c0
            if want_scores:
                Tr = Z[..., m:m + n]
                Tr *= applied[:, 1, None]
                Tr += T0
            else:
                Tr = None
        else:
            Wr = np.broadcast_to(W0, (R, k, m)).copy()
            Pd = np.broadcast_to(P0, (R, k, m)).copy()
            cd = np.broadcast_to(c0, (R, k)).copy()
            Tr = np.broadcast_to(T0, (R, k, n)).copy() if want_scores else None
        if keep_raw:
            out["W_raw"] = Wr.copy()
            out["T_raw"] = None if Tr is None else Tr.copy()
        Wd = _normalise_rows(Wr)
        Td = None if Tr is None else _normalise_rows(Tr)
        M = np.matmul(Pd, Wd.transpose(0, 2, 1))  # (R, k, k) = P_dp' W_dp
        sol = _batched_solve(M, cd)
        coef = np.matmul(sol[:, None, :], Wd)[:, 0, :]
        intercept = path.y_mean - coef @ path.x_mean
        cond = np.full(R, np.nan)
        ok = np.isfinite(M).all(axis=(1, 2))
        with np.errstate(all="ignore"):
            cond[ok] = np.linalg.cond(M[ok]) if ok.any() else cond[ok]
        out.update({
            "coef": coef, "intercept": intercept, "W": Wd.transpose(0, 2, 1), "P": Pd.transpose(0, 2, 1),
            "c": np.array(cd), "T": None if Td is None else Td.transpose(0, 2, 1), "cond": cond,
            "x_mean": np.broadcast_to(path.x_mean, (R, m)), "y_mean": np.full(R, path.y_mean),
        })
        return out

    def _gram(self) -> np.ndarray:
        if "gram" not in self._clean:
            Z = self.strict.Z
            self._clean["gram"] = Z.T @ Z
        return self._clean["gram"]

    def _draw_strict(self, k, epsilon, R, rng) -> dict:
        """Analyze-Gauss releases of Z'Z at the exact sensitivity (``strict_mechanism``): the Gram matrix
        is computed once and the symmetric noise drawn per replicate exactly as ``AnalyzeGauss.randomise``
        does (same distribution, same random stream; only sigma follows the tighter Delta)."""
        st = self.strict
        d = st.d
        if math.isinf(float(epsilon)):
            key = ("clean", k)
            if key not in self._clean:
                self._clean[key] = _strict_postprocess(self._gram()[None], st, k, noisy=False)
            one = self._clean[key]
            return {name: (None if v is None else np.repeat(v, R, axis=0)) for name, v in one.items()}
        mech = self.strict_mechanism(epsilon)
        G0 = self._gram()
        chunk = max(1, min(R, _STRICT_CHUNK_ENTRIES // (d * d)))
        parts = []
        for start in range(0, R, chunk):
            rc = min(chunk, R - start)
            G = G0 + sample_symmetric_gaussian(mech.sigma, d, rng, rc)
            parts.append(_strict_postprocess(G, st, k, noisy=True))
        return {name: (None if parts[0][name] is None else np.concatenate([q[name] for q in parts]))
                for name in parts[0]}

    # ------------------------------------------------------------------ ledger
    def ledger(self, k: int, epsilon: float, *, seed_known: bool = False) -> PrivacyLedger:
        """The ledger of one fit at (k, epsilon): its releases, the caller's caveats (``EDPLS.caveats``)
        and, when the noise came from a known seed, ``SEED_KNOWN_CAVEAT``. Empty for epsilon = inf
        (no privacy). Notes carry no private number (no clip count, no data-derived bound)."""
        led = PrivacyLedger()
        if math.isinf(float(epsilon)):
            return led
        p = self.params
        if self.mode == "strict":
            st = self.strict
            what = ("[x - x_center, y - y_center] (public centre)" if (st.centering and not st.private_centring)
                    else "[x, y, a] (constant column a: private centring from the same release)"
                    if st.private_centring else "[x, y] (no centring)")
            from_data = p.get("sensitivity_source", "public") == "data"
            rel = self.strict_mechanism(epsilon).release(
                STRICT_RELEASE,
                sensitivity_source="data" if from_data else "public",
                note=(f"Analyze-Gauss on the upper triangle of Z'Z, Z = {what} scaled into the unit ball; "
                      "add/remove neighbours; rows clipped to ||x|| <= x_bound and |y| <= y_bound; exact "
                      "worst-case sensitivity (strict_sensitivity). PLS1 from the noisy moments (PSD-projected) "
                      "is post-processing."
                      + (" The bounds were read off the private rows, so this is not a proven guarantee."
                         if from_data else "")),
            )
            led.add(rel)
        else:
            tab = self.noise_table(k, epsilon)
            eps_i, delta_i = _per_release_budget(epsilon, p["delta"], k, p["budget"])
            for row in tab.itertuples(index=False):
                name = f"{row.quantity}[{row.component}]"
                note = (f"paper Algorithm 1, sensitivity from the private data ({'max|f|' if p['ymax'] == 'abs' else 'max f'}"
                        f" for y); std applied = {'sigma' if p['noise_std'] == 'sigma' else 'sigma^2 (authors code)'}")
                if p["noise_std"] == "sigma" or row.sensitivity == 0:
                    rel = Release(name, "gaussian", float(row.sensitivity), float(row.std_applied), eps_i, delta_i,
                                  p["calibration"], "data", note, eps_i, delta_i)
                else:
                    rel = Release.gaussian(name, float(row.std_applied), float(row.sensitivity), delta_i,
                                           claimed_epsilon=eps_i, claimed_delta=delta_i, calibration=p["calibration"],
                                           sensitivity_source="data", note=note)
                led.add(rel)
        for reason in p.get("caveats") or ():
            reason = str(reason)
            led.add_caveat(reason if reason.startswith("not proven: ") else f"not proven: {reason}")
        if seed_known:
            led.add_caveat(SEED_KNOWN_CAVEAT)
        return led



# =============================================================================================
# The estimator
# =============================================================================================
class EDPLS(RegressorMixin, BaseEstimator):
    """(eps, delta)-DP PLS1 regression: the edPLS paper's Algorithm 1, or a strict DP variant.

    Parameters
    ----------
    n_components : int, number of latent variables k.
    epsilon : float > 0 or np.inf. np.inf gives plain PLS1 with an empty ledger.
    delta : float in (0, 1).
    mode : "paper" (Algorithm 1, data-dependent sensitivities) or "strict" (provably DP,
        one Analyze-Gauss release of the clipped second moments).
    x_bound, y_bound : public bounds on ||x_i||_2 and |y_i| (strict mode; required there). They
        apply to rows after subtracting the public centre if one is given, else to the raw rows.
    calibration : "analytic" (Balle & Wang) or "classic" (only eps <= 1).
    noise_std : "sigma" (correct) or "sigma_squared" (the authors' code; paper mode only).
    ymax : "abs" (max |f|, the spec) or "signed" (max f, diPLSlib); paper mode only.
    budget : "per_release" (each of the 4k releases gets (eps, delta), the paper) or "split"
        ((eps/(4k), delta/(4k)) each); paper mode only (strict always spends (eps, delta) once).
    centering : subtract the training means (paper) / centre the moments (strict).
    x_center, y_center : public centre for strict mode (both or neither). Without them strict
        mode centres privately from the same release (module docstring).
    random_state : None (default: fresh OS entropy for every release), int, SeedSequence or numpy
        Generator (a known noise seed: reproducible, and the ledger says "not proven: the noise seed is
        known"). See ``engine.privacy.noise_generator``.

        Clones and cross-validation: ``sklearn.base.clone`` copies ``random_state``. With None (the
        default) every fit of every clone draws fresh noise, so the folds of ``cross_val_score`` or
        ``GridSearchCV`` get independent noise, as independent private fits should. With an int or a
        Generator every clone starts from the same seed (a Generator is deep-copied in its current state),
        so every fold draws the SAME noise: reproducible, but the folds are then not independent private
        fits, and every fit's ledger says "not proven: the noise seed is known".
    sensitivity_source : strict mode: "public" (the bounds were fixed without looking at the private
        rows) or "data" (the caller read the bounds off the private rows: the same release, recorded as
        not proven, and the bounds are kept out of the shareable release). Paper mode is always "data".
    caveats : tuple of str, other reasons the caller knows the fit is not proven (e.g. "not proven: the
        preprocessing 'msc' was fitted on the private rows", see ``chain_caveat``); copied into the
        ledger's caveats (prefixed "not proven: " when missing).

    Attributes
    ----------
    coef_ (m,), intercept_ (float), x_weights_ (m, k), x_loadings_ (m, k), y_loadings_ (k,),
    x_scores_ (n, k) (paper mode: the released noisy unit scores; strict mode: None, since
    per-row training scores cannot be released privately), x_mean_, y_mean_,
    sigmas_ / noise_std_ / sensitivities_ (DataFrames, index component, columns w, t, p, c in
    paper mode; one row "ZtZ" in strict mode), noise_table_ (long form), privacy_ledger_,
    condition_number_ (cond(P_dp' W_dp)), n_clipped_ (strict; None in paper mode),
    n_features_in_.
    """

    def __init__(self, n_components=2, epsilon=1.0, delta=0.01, mode="paper", x_bound=None, y_bound=None,
                 calibration="analytic", noise_std="sigma", ymax="abs", budget="per_release", centering=True,
                 x_center=None, y_center=None, random_state=None, sensitivity_source="public", caveats=()):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.mode = mode
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.calibration = calibration
        self.noise_std = noise_std
        self.ymax = ymax
        self.budget = budget
        self.centering = centering
        self.x_center = x_center
        self.y_center = y_center
        self.random_state = random_state
        self.sensitivity_source = sensitivity_source
        self.caveats = caveats

    # ------------------------------------------------------------------ validation
    def _check_params(self) -> None:
        def choice(name, options):
            v = getattr(self, name)
            if v not in options:
                raise ValueError(f"{name} must be one of {options}, got {v!r}")

        choice("mode", ("paper", "strict"))
        choice("calibration", ("analytic", "classic"))
        choice("noise_std", ("sigma", "sigma_squared"))
        choice("ymax", ("abs", "signed"))
        choice("budget", ("per_release", "split"))
        choice("sensitivity_source", ("public", "data"))
        if isinstance(self.caveats, str) or not all(isinstance(c, str) and c.strip() for c in (self.caveats or ())):
            raise ValueError(f"caveats must be a tuple of non-empty strings, got {self.caveats!r}")
        if not isinstance(self.n_components, Integral) or isinstance(self.n_components, bool) or self.n_components < 1:
            raise ValueError(f"n_components must be an integer >= 1, got {self.n_components!r}")
        eps = self.epsilon
        if not isinstance(eps, Real) or isinstance(eps, bool) or not (eps > 0):
            raise ValueError(f"epsilon must be a number > 0 (np.inf for no privacy), got {eps!r}")
        if not isinstance(self.delta, Real) or not (0 < self.delta < 1):
            raise ValueError(f"delta must be in (0, 1), got {self.delta!r}")
        if self.mode == "strict":
            for name in ("x_bound", "y_bound"):
                v = getattr(self, name)
                if v is None:
                    raise ValueError(
                        f"strict mode needs public bounds: set x_bound (max ||x_i||_2) and y_bound (max |y_i|) "
                        f"before seeing the data; {name} is missing"
                    )
                if not isinstance(v, Real) or not (math.isfinite(v) and v > 0):
                    raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
            if self.noise_std != "sigma":
                raise ValueError("noise_std='sigma_squared' reproduces the authors' bug and exists only in paper mode")
            if (self.x_center is None) != (self.y_center is None):
                raise ValueError("give both x_center and y_center (a public centre) or neither (private centring)")
            if self.x_center is not None and not self.centering:
                raise ValueError("x_center/y_center are a public centre: they need centering=True")

    def _validate_xy(self, X, y, full=True):
        """Checked float64 X (n, m) and y (n,), plus names and column scales for messages.

        Refuses, with a ``ValueError`` naming the column: text, NaN/inf, overflow, underflow, a
        constant or duplicated column (``column_checks``), a constant y; a column-vector y is ravelled
        with scikit-learn's ``DataConversionWarning``.
        """
        x_names = frame_names(X)
        y_name = series_name(y)
        y_label = f"y '{y_name}'" if y_name is not None else "y"
        if y is None:
            raise ValueError("EDPLS requires y to be passed, but the target y is None")
        try:
            X = validate_data(self, X, dtype=np.float64, ensure_all_finite=False, ensure_min_samples=2)
        except (ValueError, TypeError) as exc:
            raise_if_non_numeric(X, "X", x_names, cause=exc)
            raise
        try:
            y = check_array(y, ensure_2d=False, dtype=np.float64, ensure_all_finite=False, input_name="y",
                            ensure_min_samples=2)
        except (ValueError, TypeError) as exc:
            raise_if_non_numeric(y, "y", [y_name], single=True, cause=exc)
            raise
        if y.ndim == 2:
            if y.shape[1] != 1:
                raise ValueError(
                    f"EDPLS is PLS1 (one response): y has {y.shape[1]} columns; fit one model per response"
                )
            warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape of "
                          "y to (n_samples,), for example using ravel().", DataConversionWarning, stacklevel=3)
            y = y[:, 0]
        elif y.ndim != 1:
            raise ValueError(f"y must be 1-D (n_samples,), got shape {y.shape}")
        check_consistent_length(X, y)
        x_stats = check_columns(X, "X", x_names, constant=full, duplicates=full)
        y_stats = check_columns(y[:, None], "y", [y_name], single=True, constant=full)
        n, m = X.shape
        limit = min(n - int(bool(self.centering)), m)
        if self.n_components > limit:
            raise ValueError(
                f"n_components={self.n_components} exceeds the rank bound min(n_samples{' - 1' if self.centering else ''}, "
                f"n_features) = {limit}"
            )
        if self.mode == "strict" and self.x_center is not None:
            xc = np.asarray(self.x_center, dtype=float)
            if xc.shape not in ((), (m,)) or not np.all(np.isfinite(xc)) or not np.isfinite(float(self.y_center)):
                raise ValueError(f"x_center must be finite with shape ({m},) and y_center a finite number")
        return X, y, {"x_names": x_names, "y_label": y_label, "x_stats": x_stats, "y_stats": y_stats}

    def _prepare(self, X, y, K=None, full_checks=False):
        """The clean part of a fit. Values are always checked; ``full_checks`` (every public entry point: fit,
        sample_releases, sweeps) also refuses constant and duplicate columns and a constant y, which the
        privacy analyses' constructed rows may have."""
        self._check_params()
        X, y, info = self._validate_xy(X, y, full=full_checks)
        return _Prepared(self, X, y, self.n_components if K is None else K, info)

    # ------------------------------------------------------------------ fit / predict
    def fit(self, X, y):
        prep = self._prepare(X, y, full_checks=True)
        k, eps = int(self.n_components), float(self.epsilon)
        rng, seed_known = noise_generator(self.random_state)
        out = prep.draw(k, eps, 1, rng)
        _check_finite_fit(prep, out, k, eps)
        self.coef_ = out["coef"][0]
        self.intercept_ = float(out["intercept"][0])
        self.x_weights_ = out["W"][0]
        self.x_loadings_ = out["P"][0]
        self.y_loadings_ = out["c"][0]
        self.x_scores_ = None if out["T"] is None else out["T"][0]
        self.x_mean_ = np.array(out["x_mean"][0])
        self.y_mean_ = float(out["y_mean"][0])
        self.condition_number_ = float(out["cond"][0])
        tab = prep.noise_table(k, eps)
        self.noise_table_ = tab
        if self.mode == "paper":
            wide = lambda col: tab.pivot(index="component", columns="quantity", values=col)[list(QUANTITIES)]  # noqa: E731
            self.sigmas_ = wide("sigma")
            self.noise_std_ = wide("std_applied")
            self.sensitivities_ = wide("sensitivity")
            self.n_clipped_ = None
            self.clip_report_ = None
        else:
            st = prep.strict
            self.sigmas_ = tab.set_index("quantity")[["sigma"]]
            self.noise_std_ = tab.set_index("quantity")[["std_applied", "std_data_units"]]
            self.sensitivities_ = tab.set_index("quantity")[["sensitivity"]]
            self.n_clipped_ = st.n_clipped
            self.clip_report_ = {"n_clipped": st.n_clipped, "n_clipped_x": st.n_clipped_x,
                                 "n_clipped_y": st.n_clipped_y, "notes": list(st.clip_notes),
                                 "private_centring": st.private_centring, "row_scale": st.scale}
        self.privacy_ledger_ = prep.ledger(k, eps, seed_known=seed_known)
        return self

    def predict(self, X):
        check_is_fitted(self, "coef_")
        if getattr(self, "intercept_", None) is None:
            raise ValueError("this model has no intercept: it was rebuilt from a paper-mode shareable release, "
                             "which leaves out the exact private training means (Algorithm 1 releases none)")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_

    # ------------------------------------------------------------------ replicates
    def sample_releases(self, X, y, n_replicates: int, random_state=None, *, keep_raw: bool = False) -> dict:
        """R independent private releases on the same data, vectorised over replicates.

        The clean path is computed once; only the noise and the k x k solves are per replicate.
        Drawing from a Generator ``g`` gives exactly the releases of R sequential ``fit`` calls
        with ``random_state=g``. The noise comes from ``noise_generator(random_state)`` (or the
        estimator's ``random_state`` when None): fresh by default, a known seed adds the caveat.
        Returns a dict of arrays with a leading R axis: coef, intercept,
        W, P, c, T (paper), cond, x_mean, y_mean (and W_raw / T_raw, the noisy vectors before
        renormalisation, with ``keep_raw``), plus ``noise_table`` and ``ledger`` (one replicate's).
        """
        if int(n_replicates) < 1:
            raise ValueError("n_replicates must be >= 1")
        prep = self._prepare(X, y, full_checks=True)
        rs = self.random_state if random_state is None else random_state
        rng, seed_known = noise_generator(rs)
        with _small_blas(self.mode):
            out = prep.draw(int(self.n_components), float(self.epsilon), int(n_replicates), rng, keep_raw=keep_raw)
        out["noise_table"] = prep.noise_table(int(self.n_components), float(self.epsilon))
        out["ledger"] = prep.ledger(int(self.n_components), float(self.epsilon), seed_known=seed_known)
        return out

    def fit_replicates(self, X, y, n_replicates: int, random_state=None):
        """Coefficients (R, m) and intercepts (R,) of R independent private fits (batched)."""
        out = self.sample_releases(X, y, n_replicates, random_state)
        return out["coef"], out["intercept"]


def _normalise_rows(A: np.ndarray) -> np.ndarray:
    """A / ||A|| along the last axis, in place; rows whose entries are far from 1 (a noise std near the top of
    float64's range, in data units) are first divided by their largest |entry|, so squaring cannot overflow."""
    top = np.abs(A).max(axis=-1, keepdims=True)
    if np.any(top > 2.0**256) or np.any((top < 2.0**-256) & (top > 0)):
        A /= np.where(top > 0, top, 1.0)
    A /= np.sqrt(np.einsum("...i,...i->...", A, A))[..., None]
    return A


def _check_finite_fit(prep: _Prepared, out: dict, k: int, eps: float) -> None:
    """A single fit returns finite numbers or a ValueError that says why (never silent NaN or inf).

    Causes: the coefficients in data units (y units per X unit) leave float64's range; the noisy k x k
    system P_dp' W_dp is exactly singular. (A paper-mode noise std that overflows is refused earlier, by
    ``_Prepared.noise_arrays``.)
    """
    parts = [out["coef"], out["intercept"], out["W"], out["P"], out["c"]]
    if all(np.all(np.isfinite(np.asarray(a, dtype=float))) for a in parts):
        return
    if not (np.all(np.isfinite(out["coef"])) and np.isfinite(out["intercept"]).all()):
        if prep.mode == "paper" and np.all(np.isfinite(out["W"])) and np.all(np.isfinite(out["P"])):
            with np.errstate(all="ignore"):
                M = np.asarray(out["P"][0]).T @ np.asarray(out["W"][0])
                singular = not np.isfinite(np.linalg.cond(M)) if np.all(np.isfinite(M)) else False
            if singular and not math.isinf(eps):
                raise ValueError("the noisy system P_dp' W_dp is singular for this draw: no coefficients exist; "
                                 "fit again (fresh noise) or use fewer components")
        raise ValueError(
            "overflow: the coefficients in data units (y units per X unit) leave float64's range for "
            f"{prep.scale_problem()}; rescale y or X (other units)")
    raise ValueError(f"overflow: the released loadings are not finite for {prep.scale_problem()}; rescale the data")


def edpls_replicates(X, y, n_replicates: int, random_state=None, **params):
    """Module-level ``EDPLS(**params).fit_replicates(X, y, n_replicates, random_state)``."""
    return EDPLS(**params).fit_replicates(X, y, n_replicates, random_state)


# =============================================================================================
# Sweeps
# =============================================================================================
def _rmsep_stats(rmsep: np.ndarray) -> dict:
    r = np.asarray(rmsep, dtype=float)
    r = np.where(np.isfinite(r), r, np.inf)
    fin = r[np.isfinite(r)]
    return {
        "median": float(np.median(r)),
        "q25": float(np.quantile(r, 0.25)),
        "q75": float(np.quantile(r, 0.75)),
        "mean": float(r.mean()) if fin.size == r.size else math.inf,
        "sem": float(r.std(ddof=1) / math.sqrt(r.size)) if r.size > 1 and fin.size == r.size else math.nan,
        "n_failed": int(r.size - fin.size),
    }


def _rmsep_of(out: dict, X_test: np.ndarray, y_test: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        pred = X_test @ out["coef"].T + out["intercept"][None, :]
        return np.sqrt(np.mean((pred - y_test[:, None]) ** 2, axis=0))


def _status_columns(led: PrivacyLedger) -> dict:
    """The guarantee of one fit, from its own ledger (``ledger_totals``): total (epsilon, delta) under
    basic composition, ``status`` ("proven", "not proven", "no privacy") and ``proven``. A fit without
    noise (epsilon = inf) reads "no privacy" with an infinite total epsilon, never "epsilon = 0, proven"."""
    tot = ledger_totals(led, as_json=False)
    if tot["status"] == "no privacy":
        return {"epsilon_total_basic": math.inf, "delta_total_basic": math.nan, "status": "no privacy",
                "proven": False}
    eps_b, delta_b = tot["basic"]
    return {"epsilon_total_basic": eps_b, "delta_total_basic": min(delta_b, 1.0), "status": tot["status"],
            "proven": bool(tot["proven"])}


def _as_float(A, what: str) -> np.ndarray:
    """np.asarray(A, float), or a ValueError naming the non-numeric column (never numpy's bare message)."""
    try:
        return np.asarray(A, dtype=float)
    except (ValueError, TypeError) as exc:
        single = what.startswith("y")
        names = [series_name(A)] if single else frame_names(A)
        raise_if_non_numeric(A, what, names, single=single, cause=exc)
        raise


def _as_test_arrays(est, X_test, y_test):
    X_test = _as_float(X_test, "X_test")
    y_test = _as_float(y_test, "y_test").ravel()
    if X_test.ndim != 2 or X_test.shape[0] != y_test.shape[0]:
        raise ValueError("X_test must be 2-D with as many rows as y_test")
    return X_test, y_test


def _small_blas(mode: str):
    """Paper-mode replicate work is many small products: run them with one BLAS thread (thread start-up
    per call costs more than it saves, badly so on a loaded machine). Strict mode keeps the threads."""
    if mode != "paper":
        import contextlib

        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1, user_api="blas")


def _sweep(X_train, y_train, X_test, y_test, epsilons, components, n_replicates, noise, progress,
           params, extra=None, frac=(0.0, 1.0)):
    """noise: ``(generator, seed_known)`` from ``noise_generator``."""
    with _small_blas(params.get("mode", "paper")):
        return _sweep_inner(X_train, y_train, X_test, y_test, epsilons, components, n_replicates, noise,
                            progress, params, extra, frac)


def _sweep_inner(X_train, y_train, X_test, y_test, epsilons, components, n_replicates, noise, progress,
                 params, extra=None, frac=(0.0, 1.0)):
    rng, seed_known = noise
    comps = sorted({int(c) for c in components})
    est = EDPLS(**{**params, "n_components": max(comps)})
    prep = est._prepare(X_train, y_train, full_checks=True)
    X_test, y_test = _as_test_arrays(est, X_test, y_test)
    eps_list = [float(e) for e in epsilons]
    total = len(comps) * len(eps_list)
    rows, done = [], 0
    for k in comps:
        clean = prep.draw(k, math.inf, 1, rng, want_scores=False)
        nonprivate = float(_rmsep_of(clean, X_test, y_test)[0])
        for eps in eps_list:
            out = prep.draw(k, eps, int(n_replicates), rng, want_scores=False)
            stats = _rmsep_stats(_rmsep_of(out, X_test, y_test))
            row = {**(extra or {}), "n_components": k, "epsilon": eps, **stats, "nonprivate": nonprivate,
                   "cond_median": float(np.median(out["cond"])), "n_replicates": int(n_replicates),
                   **_status_columns(prep.ledger(k, eps, seed_known=seed_known))}
            rows.append(row)
            done += 1
            if progress is not None:
                lo, hi = frac
                progress(lo + (hi - lo) * done / total, f"k={k}, eps={eps:g}")
    return rows


_CURVE_COLS = ["epsilon", "median", "q25", "q75", "mean", "sem", "nonprivate"]


def rmsep_curve(X_train, y_train, X_test, y_test, epsilons, n_components, n_replicates, *, random_state=None,
                progress=None, **edpls_params) -> pd.DataFrame:
    """RMSEP over R private fits for each epsilon (one split; the clean path is computed once).

    The noise comes from ``noise_generator(random_state)``: fresh by default; a known seed makes
    every row "not proven".

    Columns: epsilon, median, q25, q75, mean, sem, nonprivate (the eps = inf RMSEP), then
    n_failed, cond_median, n_replicates, n_components, epsilon_total_basic, delta_total_basic,
    status ("proven", "not proven", "no privacy": from the ledger of each fit) and proven.
    """
    rows = _sweep(X_train, y_train, X_test, y_test, epsilons, [n_components], n_replicates,
                  noise_generator(random_state), progress, edpls_params)
    df = pd.DataFrame(rows)
    return df[_CURVE_COLS + [c for c in df.columns if c not in _CURVE_COLS]]


def rmsep_vs_components(X_train, y_train, X_test, y_test, components, epsilons, n_replicates, *, random_state=None,
                        progress=None, **edpls_params) -> pd.DataFrame:
    """``rmsep_curve`` for several numbers of components (one clean path for the largest)."""
    rows = _sweep(X_train, y_train, X_test, y_test, epsilons, components, n_replicates,
                  noise_generator(random_state), progress, edpls_params)
    df = pd.DataFrame(rows)
    first = ["n_components"] + _CURVE_COLS
    return df[first + [c for c in df.columns if c not in first]]


def chain_caveat(name: str) -> str | None:
    """The ledger caveat of a preprocessing chain of ``engine.data.preprocess`` fitted on the private
    training rows, or None when the chain learns nothing from them (row-wise steps only).

    A chain that learns from the training rows (MSC's reference, column means or scales) couples every
    transformed row to every private row: one row's change moves all of them, so the per-row
    sensitivity no longer bounds the release. Unknown steps count as learning (conservative).
    """
    from engine.data.preprocess import CHAIN_INFO

    steps = [p.strip() for p in str(name).split("+") if p.strip()]
    learned = [p for p in steps if CHAIN_INFO.get(p, {"learns_from_data": True}).get("learns_from_data", True)]
    if not learned:
        return None
    what = "; ".join(f"{p}: {CHAIN_INFO[p]['learned']}" if p in CHAIN_INFO else f"{p}: unknown step" for p in learned)
    return f"not proven: the preprocessing '{name}' was fitted on the private training rows ({what})"


def rmsep_vs_preprocessing(chains: dict, X_train, y_train, X_test, y_test, epsilons, n_components, n_replicates, *,
                           random_state=None, progress=None, **edpls_params) -> pd.DataFrame:
    """``rmsep_curve`` after each preprocessing chain, fitted on the training rows only.

    chains: name -> a zero-argument factory returning an (unfitted) transformer/Pipeline, a
    chain name of ``engine.data.preprocess.make_chain``, or a transformer (cloned). A chain that
    learns from the training rows (``chain_caveat``; any transformer or factory, which cannot be
    checked) adds its caveat to the ledger of that chain's fits: those rows read "not proven".
    """
    from engine.data.preprocess import make_chain

    rng, seed_known = noise_generator(random_state)
    base_caveats = tuple(edpls_params.pop("caveats", ()) or ())
    rows = []
    names = list(chains)
    for i, name in enumerate(names):
        spec = chains[name]
        if isinstance(spec, str):
            tr = make_chain(spec)
            why = chain_caveat(spec)
        else:
            tr = clone(spec) if hasattr(spec, "fit") and hasattr(spec, "transform") else spec()
            why = (f"not proven: the preprocessing '{name}' was fitted on the private training rows (a custom "
                   "transformer: what it learns from them is not known)")
        Xtr = tr.fit_transform(np.asarray(X_train, dtype=float))
        Xte = tr.transform(np.asarray(X_test, dtype=float))
        params = {**edpls_params, "caveats": base_caveats + ((why,) if why else ())}
        rows += _sweep(Xtr, y_train, Xte, y_test, epsilons, [n_components], n_replicates, (rng, seed_known),
                       progress, params, extra={"chain": name}, frac=(i / len(names), (i + 1) / len(names)))
    df = pd.DataFrame(rows)
    first = ["chain"] + _CURVE_COLS
    return df[first + [c for c in df.columns if c not in first]]


def samples_needed_curve(X_train, y_train, X_test, y_test, sample_sizes, epsilon, n_components, n_replicates, *,
                         random_state=None, progress=None, **edpls_params) -> pd.DataFrame:
    """Strict mode: RMSEP against the training-set size n, by simulation.

    A training set of size n' is simulated by drawing n' rows with replacement from the
    (clipped, scaled) training rows, i.e. the Gram matrix is Z' diag(counts) Z with multinomial
    counts; then the strict mechanism is applied exactly as in a real fit (Analyze-Gauss with
    the same sigma, PLS1 from the noisy moments) and the RMSEP is measured on the test rows.
    The noise part is exact (the noise does not depend on n while the signal grows with n);
    the data part assumes new samples look like the existing ones (growth beyond n repeats
    rows), so read the curve as optimistic. ``nonprivate`` is the median RMSEP of the same
    resampled sets without noise. Noise and resampling draw from ``noise_generator(random_state)``.

    Columns: n, median, q25, q75, mean, sem, nonprivate, n_failed, epsilon, n_components, status
    (the ledger status a real fit with these settings would have).
    """
    params = {**edpls_params, "mode": "strict", "n_components": int(n_components), "epsilon": float(epsilon)}
    est = EDPLS(**params)
    prep = est._prepare(X_train, y_train, full_checks=True)
    X_test, y_test = _as_test_arrays(est, X_test, y_test)
    st = prep.strict
    rng, seed_known = noise_generator(random_state)
    n0, d = st.Z.shape
    k = int(n_components)
    noisy = not math.isinf(float(epsilon))
    sigma = prep.strict_mechanism(float(epsilon)).sigma if noisy else 0.0
    status = _status_columns(prep.ledger(k, float(epsilon), seed_known=seed_known))["status"]
    R = int(n_replicates)
    chunk = max(1, min(R, _STRICT_CHUNK_ENTRIES // (d * d)))
    rows = []
    sizes = [int(s) for s in sample_sizes]
    for i, n_new in enumerate(sizes):
        if n_new < 2:
            raise ValueError("sample sizes must be >= 2")
        rm_priv, rm_clean = [], []
        for start in range(0, R, chunk):
            rc = min(chunk, R - start)
            counts = rng.multinomial(n_new, np.full(n0, 1.0 / n0), size=rc).astype(float)
            G0 = np.matmul(st.Z.T[None] * counts[:, None, :], st.Z)
            clean = _strict_postprocess(G0, st, k, noisy=False)
            rm_clean.append(_rmsep_of(clean, X_test, y_test))
            if noisy:
                G = G0 + sample_symmetric_gaussian(sigma, d, rng, rc)
                rm_priv.append(_rmsep_of(_strict_postprocess(G, st, k, noisy=True), X_test, y_test))
            else:
                rm_priv.append(rm_clean[-1])
        stats = _rmsep_stats(np.concatenate(rm_priv))
        rows.append({"n": n_new, **stats, "nonprivate": float(np.median(np.concatenate(rm_clean))),
                     "epsilon": float(epsilon), "n_components": k, "status": status})
        if progress is not None:
            progress((i + 1) / len(sizes), f"n={n_new}")
    df = pd.DataFrame(rows)
    first = ["n", "median", "q25", "q75", "mean", "sem", "nonprivate"]
    return df[first + [c for c in df.columns if c not in first]]


def samples_needed(curve: pd.DataFrame, target: float, stat: str = "median") -> float:
    """Smallest n at which ``curve[stat] <= target`` (log-log interpolation between grid points).

    Returns math.inf when the target is not reached on the simulated grid.
    """
    df = curve.sort_values("n")
    n = df["n"].to_numpy(dtype=float)
    v = df[stat].to_numpy(dtype=float)
    hit = np.nonzero(v <= target)[0]
    if hit.size == 0:
        return math.inf
    i = int(hit[0])
    if i == 0:
        return float(n[0])
    n0, n1, v0, v1 = n[i - 1], n[i], v[i - 1], v[i]
    if not (np.isfinite(v0) and v0 > 0 and v1 > 0) or v0 == v1:
        return float(n1)
    frac = (math.log(target) - math.log(v0)) / (math.log(v1) - math.log(v0))
    return float(math.exp(math.log(n0) + frac * (math.log(n1) - math.log(n0))))


# =============================================================================================
# One private fit beside the non-private one (what the page and a notebook want together)
# =============================================================================================
def compare_private_plain(X, y, train_idx, test_idx, params: dict, random_state=None) -> dict:
    """Fit EDPLS(**params) and plain PLS1 (epsilon = inf) on the training rows; score both on the test rows.

    random_state: the private fit's noise (None: fresh OS entropy; a value: a known seed, not proven).

    Returns a dict: private, plain (fitted EDPLS), pred_private, pred_plain, y_test (arrays),
    rmsep_private, rmsep_plain, sigma_y_test (floats), and, for the data owner only (private
    statistics: show them to the owner or put them in the owner's workbook, never use them as public
    bounds): n_train, n_test, max_row_norm_train, max_abs_y_train, y_range_train (min, max).
    """
    X, y = _as_float(X, "X"), _as_float(y, "y")
    Xtr, ytr, Xte, yte = X[train_idx], y[train_idx], X[test_idx], y[test_idx]
    private = EDPLS(**params, random_state=random_state).fit(Xtr, ytr)
    plain = EDPLS(**{**params, "epsilon": np.inf, "mode": "paper"}).fit(Xtr, ytr)
    pred_p, pred_0 = private.predict(Xte), plain.predict(Xte)
    return {
        "private": private, "plain": plain, "pred_private": pred_p, "pred_plain": pred_0, "y_test": yte,
        "rmsep_private": float(np.sqrt(np.mean((yte - pred_p) ** 2))),
        "rmsep_plain": float(np.sqrt(np.mean((yte - pred_0) ** 2))),
        "sigma_y_test": float(yte.std()),
        "n_train": int(len(ytr)), "n_test": int(len(yte)),
        "max_row_norm_train": float(np.sqrt((Xtr**2).sum(axis=1)).max()),
        "max_abs_y_train": float(np.abs(ytr).max()),
        "y_range_train": (float(ytr.min()), float(ytr.max())),
    }


# =============================================================================================
# Shareable release, owner's sheets and the end-to-end audit (modules of their own, same names here)
# =============================================================================================
_ELSEWHERE = {
    **{name: "edpls_release" for name in ("FORMAT", "estimator_from_release", "from_json", "model_from_dict",
                                          "no_release_reason", "owner_sheets", "public_parameters",
                                          "shareable_ledger", "shareable_release", "to_json")},
    **{name: "edpls_pipeline" for name in ("PAGE_DEFAULTS", "pipeline_audit_case")},
}


def __getattr__(name):  # PEP 562: those modules import EDPLS from here, so they are loaded on first use
    if name in _ELSEWHERE:
        import importlib

        return getattr(importlib.import_module(f"{__package__}.{_ELSEWHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
