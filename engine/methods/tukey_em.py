"""TukeyEM: (epsilon, delta)-DP linear regression with no bounds on X or y (Amin et al., ICLR 2023).

Amin, Joseph, Ribero and Vassilvitskii, "Easy Differentially Private Linear Regression" (ICLR 2023),
built on the restricted exponential mechanism with propose-test-release of Brown, Gaboardi, Smith, Ullman
and Zakynthinou ("Covariance-aware private mean estimation without private covariance estimation",
NeurIPS 2021). The fit:

1. (``n_models="auto"`` only) the count n + N(0, sigma_n^2), sensitivity 1, share ``count_share`` of
   (epsilon, delta); the number of models (post-processing, ``auto_models``) is
   m = max(floor(n_hat / ``rows_per_model``), ceil(12 p ln(1/(2 delta_r)) / epsilon_r)): the test of step 4
   needs its distance above ln(1/(2 delta_r)) / (epsilon_r / 2), which takes several hundred models (measured:
   at p = 6, epsilon = 1 it failed with 416 models and passed with 800, whatever the rows per model), so
   below about 2 p m_min rows the models get fewer than 2 p rows each rather than too few models.
2. Every row is assigned to one of m groups, independently and uniformly (fresh randomness of the
   mechanism); least squares on each group (minimum-norm, on [x, 1] with ``fit_intercept``) gives m
   models beta_1..beta_m in R^p. Each is jittered by U(0, 1e-10) per coordinate (ties have volume zero).
3. Approximate Tukey depth of a point b: min over coordinates j of min(#{i: beta_ij <= b_j},
   #{i: beta_ij >= b_j}). The region of depth >= i is the box prod_j [s_j(i), s_j(m + 1 - i)] (s_j the
   sorted j-th coordinates), of volume V_i.
4. Propose-test-release at t = floor(floor(m/2) / 2): the distance lower bound
   k_hat = max{k in [0, t - 2]: there is g >= 1 with V_{t-k-1} e^{-eps' g / 2} / V_{t+k+g+1} <= delta / (8 e^eps')}
   (-1 if none), eps' = epsilon_r / 2. The test passes when k_hat + Lap(1/eps') > ln(1/(2 delta_r)) / eps'.
5. If it passes, the restricted exponential mechanism: a depth i in {t, ..., floor(m/2)} with probability
   proportional to (V_i - V_{i+1}) exp(eps' i), then a point uniformly in the region of depth exactly i
   (the box of depth i minus the box of depth i + 1, split into p slabs by the first coordinate at exactly
   depth i). That point is (coef_, intercept_). If the test fails, the fit releases nothing more:
   coef_ = 0, intercept_ = 0 and ``ptr_passed_`` is False (as in the paper).

At epsilon = inf nothing is noisy: least squares on all rows (scikit-learn's LinearRegression is the
oracle in the tests).

Proof of privacy (add/remove one row; epsilon_r, delta_r the budget after the count):

- Step 1 is the Gaussian mechanism with sensitivity 1: (epsilon_c, delta_c)-DP.
- Given m, couple the group assignments of the rows common to D and D' (they are independent of the
  data); the extra row falls in one group, so the multisets of models differ in exactly one model (the
  "change one model" neighbouring relation of Brown et al.). A mixture over couplings of
  (eps, delta)-indistinguishable pairs is (eps, delta)-indistinguishable, so it suffices to prove the
  mechanism on models DP for changing one model. The jitter is data-independent.
- Changing one model moves each sorted coordinate list by at most one position, so V_i(D') lies between
  V_{i+1}(D) and V_{i-1}(D), and the depth of any point changes by at most 1. Hence k_hat has sensitivity
  1: if the condition holds at k for D, it holds at k - 1 for D' (Brown et al., Lemma 3.8), and the
  Laplace test is (eps', 0)-DP in its outcome.
- A model set is "safe" when the restricted mechanism of step 5 is (eps', delta_r / 2)-indistinguishable
  on it and on every neighbour. Brown et al. (Lemma 3.6 with their volume condition) prove that the
  condition of step 4 at k implies every model set within distance k is safe; the test passes on an
  unsafe input with probability at most delta_r / 2 (the threshold ln(1/(2 delta_r)) / eps' against the
  Laplace tail). Propose-test-release (Dwork and Lei 2009; Brown et al., Theorem 3.7) then makes steps
  4-5 together (2 eps', delta_r) = (epsilon_r, delta_r)-DP, as Amin et al. state (their Theorem 3.2).
- Basic composition with step 1: (epsilon, delta)-DP. The ledger records the count (Gaussian), the test
  (Laplace) and the restricted mechanism (an (epsilon, delta) mechanism with no noise law: its totals are
  basic composition).

Written by hand: no kept library implements it (Amin et al.'s reference code is a research script: its
Laplace noise in the test has scale eps' instead of 1/eps', and its distance search can index past the
volume list; both are done here from the paper's definitions).
"""
from __future__ import annotations

import math
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from engine.methods.baselines import noisy_count
from engine.methods.constraints import PRIVACY_PARAMETER_CONSTRAINTS
from engine.privacy import SEED_KNOWN_CAVEAT, PrivacyLedger, Release, noise_generator
from engine.privacy.mechanisms import draw_noise

__all__ = ["MODELS_PER_FEATURE", "PTR_RELEASE", "TUKEY_RELEASE", "TukeyEM", "auto_models", "group_models", "tukey_fit",
           "tukey_mechanism"]

PTR_RELEASE = "Tukey PTR test"
TUKEY_RELEASE = "Tukey depth exponential mechanism"
#: Fewest models the automatic choice asks for, per feature and per ln(1/(2 delta)) / epsilon (module docstring).
MODELS_PER_FEATURE = 12
JITTER = 1e-10


def auto_models(n_hat: float, p: int, epsilon: float, delta: float, rows_per_model: int | None = None) -> int:
    """m from a noisy count (post-processing): max(n_hat / rows_per_model, 12 p ln(1/(2 delta)) / epsilon)."""
    rows = 2 * p if rows_per_model is None else int(rows_per_model)
    floor = math.ceil(MODELS_PER_FEATURE * p * math.log(1.0 / (2.0 * delta)) / epsilon)
    return int(max(4, n_hat // rows, floor))


def group_models(Xf: np.ndarray, y: np.ndarray, m: int, rng) -> np.ndarray:
    """Least squares (minimum-norm) on m groups of rows, each row in one uniform random group: (m, p)."""
    n, p = Xf.shape
    g = rng.integers(0, m, size=n)
    G = np.zeros((m, p, p))
    b = np.zeros((m, p))
    np.add.at(G, g, Xf[:, :, None] * Xf[:, None, :])
    np.add.at(b, g, Xf * y[:, None])
    # pinv(X'X) X'y is the minimum-norm least-squares solution of each group (zero for an empty group)
    return np.einsum("gij,gj->gi", np.linalg.pinv(G, hermitian=True), b)


def _log_volumes(S: np.ndarray) -> np.ndarray:
    """log V_i for i = 1..floor(m/2): S (p, m) sorted coordinates; V_i = prod_j (S[j, m-i] - S[j, i-1])."""
    m = S.shape[1]
    half = m // 2
    widths = S[:, ::-1][:, :half] - S[:, :half]
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(widths, 0.0)).sum(axis=0)


def distance_to_unsafety(logv: np.ndarray, eps: float, delta: float, t: int) -> int:
    """k_hat = max{k in [0, t-2]: some g >= 1 has log V_{t-k-1} - eps g / 2 - log V_{t+k+g+1} <= log(delta/(8e^eps))},
    -1 if none (``logv[i - 1]`` = log V_i). Sensitivity 1 under changing one model (module docstring)."""
    thr = math.log(delta / 8.0) - eps
    half = logv.size
    best = -1
    for k in range(0, max(t - 1, 0)):
        lo = t - k - 1
        gs = np.arange(1, half - (t + k + 1) + 1)
        if lo < 1 or gs.size == 0:
            break
        hi = logv[t + k + gs - 1]  # V_{t+k+g+1}
        with np.errstate(invalid="ignore"):
            val = logv[lo - 1] - eps * gs / 2.0 - hi
        if np.any(val <= thr):
            best = k
        else:
            break  # the condition weakens as k grows: the first failure ends the search
    return best


def _sample_region(S: np.ndarray, i: int, rng) -> np.ndarray:
    """A point uniformly in {depth exactly i} = box_i minus box_{i+1} (1-based depths, S sorted (p, m))."""
    p, m = S.shape
    lo_i, hi_i = S[:, i - 1], S[:, m - i]
    lo_n, hi_n = S[:, i], S[:, m - i - 1]
    len_i, len_n = hi_i - lo_i, np.maximum(hi_n - lo_n, 0.0)
    shell = np.maximum(len_i - len_n, 0.0)
    with np.errstate(divide="ignore"):
        log_len_i, log_len_n, log_shell = np.log(len_i), np.log(len_n), np.log(shell)
    # slab j: coordinates < j at depth >= i + 1, coordinate j exactly i, coordinates > j at depth >= i
    before = np.concatenate([[0.0], np.cumsum(log_len_n)[:-1]])
    after = np.concatenate([np.cumsum(log_len_i[::-1])[::-1][1:], [0.0]])
    j = _racing_sample(log_shell + before + after, rng)
    point = np.empty(p)
    point[:j] = rng.uniform(lo_n[:j], hi_n[:j])
    point[j + 1:] = rng.uniform(lo_i[j + 1:], hi_i[j + 1:])
    left, right = S[j, i] - S[j, i - 1], S[j, m - i] - S[j, m - i - 1]
    if rng.uniform() * (left + right) < left:
        point[j] = S[j, i - 1] + rng.uniform() * left
    else:
        point[j] = S[j, m - i - 1] + rng.uniform() * right
    return point


def _racing_sample(log_w: np.ndarray, rng) -> int:
    """Index k with probability proportional to exp(log_w[k]) (Gumbel-max; -inf weights never drawn)."""
    return int(np.argmax(log_w + rng.gumbel(size=log_w.shape)))


def tukey_mechanism(models: np.ndarray, epsilon: float, delta: float, rng) -> tuple:
    """Steps 3-5 of the module docstring on an (m, p) array of models: (point or None, facts dict)."""
    m, p = models.shape
    S = np.sort(models.T + JITTER * rng.uniform(size=(p, m)), axis=1)
    logv = _log_volumes(S)
    half = logv.size
    t = half // 2
    eps = epsilon / 2.0
    k_hat = distance_to_unsafety(logv, eps, delta, t) if t >= 2 else -1
    threshold = math.log(1.0 / (2.0 * delta)) / eps
    noisy_k = k_hat + float(draw_noise("laplace", 1.0 / eps, None, rng))
    facts = {"m": m, "t": t, "ptr_threshold": threshold, "ptr_passed": bool(noisy_k > threshold)}
    if not facts["ptr_passed"]:
        return None, facts
    # depths t..half; volume of exact depth i: V_i - V_{i+1} (V_{half+1} = 0)
    v = logv[t - 1:]
    nxt = np.append(v[1:], -np.inf)
    with np.errstate(invalid="ignore", divide="ignore"):
        log_exact = v + np.log1p(-np.exp(np.minimum(nxt - v, 0.0)))
    log_exact = np.where(np.isfinite(log_exact), log_exact, -np.inf)
    depths = np.arange(t, half + 1)
    i = int(depths[_racing_sample(log_exact + eps * depths, rng)])
    facts["depth"] = i
    return _sample_region(S, i, rng), facts


def tukey_fit(Xf: np.ndarray, y: np.ndarray, m: int, epsilon: float, delta: float, rng, ledger) -> tuple:
    """Steps 2-5 on features Xf (n, p) (the constant column included by the caller): (point or None, facts).

    The test and the mechanism record themselves in ``ledger`` as they are drawn (``PTR_RELEASE``,
    ``TUKEY_RELEASE``); ``StrictEDPLS(estimator="auto")`` calls this with its own ledger."""
    models = group_models(Xf, y, m, rng)
    point, facts = tukey_mechanism(models, epsilon, delta, rng)
    ledger.add(Release(name=PTR_RELEASE, mechanism="laplace", sensitivity=1.0, scale=2.0 / epsilon,
                       epsilon=epsilon / 2.0, delta=0.0, calibration="laplace",
                       note="Laplace on the distance to unsafety (sensitivity 1): propose-test-release"))
    ledger.add(Release(name=TUKEY_RELEASE, mechanism="exponential", sensitivity=1.0, scale=2.0 / epsilon,
                       epsilon=epsilon / 2.0, delta=delta, calibration="exponential",
                       note=f"restricted exponential mechanism on approximate Tukey depth over {m} models "
                            "(depth sensitivity 1); delta covers the test passing on an unsafe input"))
    return point, facts


class TukeyEM(RegressorMixin, BaseEstimator):
    """(epsilon, delta)-DP linear regression by the Tukey-depth exponential mechanism: no bounds needed.

    Parameters
    ----------
    epsilon : float > 0 or np.inf (least squares on all rows, empty ledger).
    delta : float in (0, 1).
    n_models : "auto" (m from a noisy count: floor(n_hat / rows_per_model)) or int >= 4 (public).
    rows_per_model : int >= 1 or None, rows per model for ``n_models="auto"`` (None: 2 p, p features with the constant).
    count_share : float in (0, 1), share of (epsilon, delta) of the count (``n_models="auto"`` only).
    fit_intercept : bool, append a constant feature (its coefficient is the intercept).
    random_state : None (fresh OS entropy) or a known seed (the ledger then says "not proven").

    Attributes
    ----------
    coef_ : array (n_features,).
    intercept_ : float.
    ptr_passed_ : bool, whether the propose-test-release check passed (False: coef_ = 0, intercept_ = 0).
    n_models_ : int, m.
    privacy_ledger_ : PrivacyLedger.
    choices_ : dict, what the fit chose (public facts and DP outputs only).
    n_features_in_ : int.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20000, 3))
    >>> y = X @ np.array([1.0, -2.0, 0.5]) + 3.0 + 0.1 * rng.normal(size=20000)
    >>> model = TukeyEM(1.0, 1e-5).fit(X, y)
    >>> model.ptr_passed_, bool(np.abs(model.coef_ - [1.0, -2.0, 0.5]).max() < 0.1)
    (True, True)
    """

    _parameter_constraints: ClassVar[dict] = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "n_models": [StrOptions({"auto"}), Interval(Integral, 4, None, closed="left")],
        "rows_per_model": [Interval(Integral, 1, None, closed="left"), None],
        "count_share": [Interval(Real, 0, 1, closed="neither")],
        "fit_intercept": ["boolean"],
    }

    def __init__(self, epsilon=1.0, delta=1e-5, *, n_models="auto", rows_per_model=None, count_share=0.05,
                 fit_intercept=True, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.n_models = n_models
        self.rows_per_model = rows_per_model
        self.count_share = count_share
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def fit(self, X, y):
        """Fit on X (n, p_x) and y (n,); only the releases of the module docstring depend on the rows."""
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        Xf = np.hstack([X, np.ones((X.shape[0], 1))]) if self.fit_intercept else X
        p = Xf.shape[1]
        eps, dlt = float(self.epsilon), float(self.delta)
        self.choices_ = {}
        if math.isinf(eps):
            beta = np.linalg.lstsq(Xf, y, rcond=None)[0]
            self.n_models_, self.ptr_passed_ = 1, True
            self.privacy_ledger_ = PrivacyLedger()
            self.choices_.update(model="least squares on all rows (epsilon = inf: no noise)")
            self._set_coef(beta)
            return self
        rng, seed_known = noise_generator(self.random_state)
        led = PrivacyLedger()
        if self.n_models == "auto":
            cs = float(self.count_share)
            n_hat, _ = noisy_count(X.shape[0], eps * cs, dlt * cs, "analytic", rng, ledger=led,
                                   note="noisy row count (sensitivity 1); sets the number of models")
            eps_r, dlt_r = eps * (1 - cs), dlt * (1 - cs)
            m = auto_models(n_hat, p, eps_r, dlt_r, self.rows_per_model)
            self.choices_["n_hat"] = n_hat
            self.choices_["m_why"] = ("max(n_hat / rows per model, 12 p ln(1/(2 delta)) / epsilon) (n_hat a DP "
                                      "release)")
        else:
            m, eps_r, dlt_r = int(self.n_models), eps, dlt
            self.choices_["m_why"] = "declared n_models"
        point, facts = tukey_fit(Xf, y, m, eps_r, dlt_r, rng, led)
        if seed_known:
            led.add_caveat(SEED_KNOWN_CAVEAT)
        self.privacy_ledger_ = led
        self.n_models_, self.ptr_passed_ = m, facts["ptr_passed"]
        self.choices_.update(facts)
        self.choices_["model"] = ("Tukey-depth exponential mechanism" if point is not None else
                                  "propose-test-release failed: coef_ = 0, intercept_ = 0")
        self._set_coef(np.zeros(p) if point is None else point)
        return self

    def _set_coef(self, beta):
        beta = np.asarray(beta, dtype=float)
        if self.fit_intercept:
            self.coef_, self.intercept_ = beta[:-1].copy(), float(beta[-1])
        else:
            self.coef_, self.intercept_ = beta.copy(), 0.0

    def predict(self, X):
        """X @ coef_ + intercept_, shape (n,)."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_


def tukey_em_case(mode: str = "strict", epsilon: float = 1.0, delta: float = 1e-5, n_rows: int = 2400,
                  n_models: int = 600):
    """Privacy audit of ``TukeyEM.fit`` as shipped (the whole fit: partition, test and mechanism).

    D: ``n_rows`` rows of one feature (y = 2 x + 1 + noise); D' adds the row (x, y) = (8, -60), an outlier that
    drags the least-squares model of whichever group it joins far from the others. ``n_models`` declared (so the
    whole budget goes to the test and the mechanism). The audited output is (coef, intercept, test passed) of
    each fit. In the audit catalogue (key "tukey_em") with 600 rows and 300 models, about 1 ms a fit: no
    planted bugs there (``audit_catalog.NO_PLANTED_BUGS``: the restricted exponential mechanism draws no noise
    through ``planted_bug``, so a planted bug reaches only the test's Laplace noise). ``tests/test_tukey_em.py``
    runs this case through ``run_case``.
    """
    from engine.privacy.audit import AuditCase, expected_verdict

    if mode != "strict":
        raise ValueError("TukeyEM has one mode, 'strict'")
    rng0 = np.random.default_rng(23)
    x = rng0.normal(size=(int(n_rows), 1))
    y = 2.0 * x[:, 0] + 1.0 + 0.5 * rng0.normal(size=int(n_rows))
    D, D_prime = (x, y), (np.vstack([x, [[8.0]]]), np.append(y, -60.0))

    def release(data, rng, n):
        out = np.empty((n, 3))
        for r in range(n):
            est = TukeyEM(float(epsilon), float(delta), n_models=int(n_models), random_state=rng).fit(*data)
            out[r] = (est.coef_[0], est.intercept_, float(est.ptr_passed_))
        return out

    return AuditCase("tukey_em", "tukey_em", "strict", float(epsilon), float(delta), release, D,
                     D_prime, "add one outlying row (x = 8, y = -60)", expected_verdict("strict", None),
                     f"TukeyEM.fit: random partition into {int(n_models)} models, propose-test-release, restricted "
                     "exponential "
                     "mechanism on approximate Tukey depth")
