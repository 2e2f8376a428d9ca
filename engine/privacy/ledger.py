"""Privacy budget ledger: one record per release, and the total guarantee three ways.

- ``basic``: sequential composition, (sum eps_i, sum delta_i).
- ``zcdp``: each Gaussian release is rho_i-zCDP with rho_i = Delta_i^2 / (2 sigma_i^2), a pure
  eps-DP (Laplace) release is eps^2/2-zCDP; rhos add; eps = rho + 2 sqrt(rho ln(1/delta)).
- ``pld``: the privacy-loss-distribution accountant of Google's ``dp-accounting`` (used, not
  rewritten), the tightest numerically sound total.
- ``gdp`` (Gaussian-only ledgers): exact; k Gaussian releases with mu_i = Delta_i / sigma_i
  compose to one Gaussian mechanism with mu = sqrt(sum mu_i^2) (Dong, Roth & Su 2019), whose
  exact (eps, delta) curve is Balle & Wang's Theorem 8.

Every record keeps the noise scale actually applied, so a total is computed from what was
done, not from what was claimed; ``claimed_epsilon`` keeps the paper's stated per-release value
where that differs. ``sensitivity_source="data"`` marks a sensitivity computed from the private
data itself (paper-faithful modes): then no total is a proven guarantee, and ``proven`` says so.

``caveats`` holds every other reason the fit's guarantee is not proven even though each release's
sensitivity is public: a known noise seed (:data:`engine.privacy.noise.SEED_KNOWN_CAVEAT`), a
preprocessing chain fitted on the private rows, bounds read off the data. Labels anywhere in the
app come from :attr:`PrivacyLedger.status` of that very fit: "no privacy" (nothing released with
noise), "proven" or "not proven". :func:`ledger_totals` is the one totals function of the engine.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .calibration import analytic_gaussian_sigma, gaussian_epsilon, zcdp_to_epsilon

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Neighbouring", "PrivacyLedger", "Release", "gaussian_sigmas_for_budget", "ledger_totals",
           "under_replace_one"]

_METHODS = ("basic", "zcdp", "pld", "gdp")
#: "exponential": an (epsilon, delta)-DP mechanism with no Gaussian or Laplace noise law (TukeyEM's
#: propose-test-release and restricted exponential mechanism); a ledger holding one totals by basic composition.
_MECHANISMS = ("gaussian", "laplace", "exponential")
#: Above this per-release epsilon the PLD accountant is replaced by closed forms (see ``_pld_epsilon``).
_PLD_MAX_RELEASE_EPS = 20.0


class Neighbouring(StrEnum):
    """The neighbouring relation a release's sensitivity is computed for: the one spelling everywhere.

    dp-accounting's ``NeighboringRelation`` has the same two members (ADD_OR_REMOVE_ONE, REPLACE_ONE). The
    values are what ledgers and release manifests serialise ("add_remove", "replace": kept stable so that
    shareable JSON files stay the same); ``Neighbouring(value)`` parses them (ValueError for anything else).
    """

    #: one row added or removed (the row count is private)
    ADD_REMOVE = "add_remove"
    #: one row replaced by another (the row count is public)
    REPLACE_ONE = "replace"


@dataclass(frozen=True, kw_only=True)
class Release:
    """One released quantity (keyword-only: a record names every field it sets).

    mechanism: "gaussian" (scale = noise std sigma, L2 sensitivity) or "laplace"
    (scale = b, L1 sensitivity). epsilon/delta: this release's guarantee given the applied
    noise. sensitivity_source: "public" (from public bounds: proven) or "data" (computed from
    the private data: not a DP guarantee).
    """

    name: str
    mechanism: str
    sensitivity: float
    scale: float
    epsilon: float
    delta: float
    calibration: str = "analytic"
    sensitivity_source: str = "public"
    note: str = ""
    claimed_epsilon: float | None = None
    claimed_delta: float | None = None

    def __post_init__(self) -> None:
        if self.mechanism not in _MECHANISMS:
            raise ValueError(f"mechanism must be one of {_MECHANISMS}, got {self.mechanism!r}")
        if self.sensitivity_source not in ("public", "data"):
            raise ValueError("sensitivity_source must be 'public' or 'data'")
        if not (self.scale > 0 or self.sensitivity == 0):
            raise ValueError(f"release {self.name!r}: noise scale must be > 0, got {self.scale}")

    @property
    def noise_multiplier(self) -> float:
        """scale / sensitivity (inf for a zero-sensitivity query)."""
        return math.inf if self.sensitivity == 0 else self.scale / self.sensitivity

    @property
    def rho(self) -> float:
        """zCDP parameter of this release."""
        if self.mechanism == "gaussian":
            return 0.0 if self.sensitivity == 0 else self.sensitivity**2 / (2.0 * self.scale**2)
        return self.epsilon**2 / 2.0

    @classmethod
    def gaussian(
        cls,
        *,
        name: str,
        sigma: float,
        sensitivity: float,
        delta: float,
        claimed_epsilon: float | None = None,
        claimed_delta: float | None = None,
        calibration: str = "analytic",
        sensitivity_source: str = "public",
        note: str = "",
    ) -> Release:
        """A Gaussian release whose epsilon is computed exactly from the applied sigma at ``delta``."""
        eps = gaussian_epsilon(sigma, delta, sensitivity)
        return cls(
            name=name, mechanism="gaussian", sensitivity=float(sensitivity), scale=float(sigma), epsilon=float(eps),
            delta=float(delta), calibration=calibration, sensitivity_source=sensitivity_source, note=note,
            claimed_epsilon=claimed_epsilon, claimed_delta=claimed_delta,
        )


@dataclass
class PrivacyLedger:
    """Records every release of a fitted model and totals the guarantee.

    Attributes
    ----------
    entries : list of Release, in release order.
    neighbouring : Neighbouring (or its value "add_remove", the default, or "replace"), the neighbouring
        relation the sensitivities were computed for.
    unit : what one neighbouring step changes, as the guarantee's sentences name it ("" = one row;
        e.g. "owner's whole series" for VAR-ADMM's defence): the guarantee is per this unit.
    """

    entries: list[Release] = field(default_factory=list)
    neighbouring: Neighbouring = Neighbouring.ADD_REMOVE
    caveats: list[str] = field(default_factory=list)
    unit: str = ""
    #: The accountant the fit was calibrated under ("basic", "gdp", ...): ``total(accountant)`` meets its budget.
    accountant: str = "basic"

    def __post_init__(self) -> None:
        self.neighbouring = Neighbouring(self.neighbouring)

    def add_caveat(self, reason: str) -> None:
        """Record a reason the guarantee is not proven (kept once, in order)."""
        reason = str(reason)
        if reason and reason not in self.caveats:
            self.caveats.append(reason)

    def add(self, release: Release) -> Release:
        """Record one release; returns it."""
        if not isinstance(release, Release):
            raise TypeError("PrivacyLedger.add takes a Release")
        self.entries.append(release)
        return release

    def extend(self, releases: Iterable[Release]) -> None:
        """Record each release in order."""
        for r in releases:
            self.add(r)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def proven(self) -> bool:
        """True when something was released with noise, every sensitivity comes from public bounds and
        no caveat applies (the totals are then DP guarantees). An empty ledger is not proven: no privacy."""
        return self.status == "proven"

    @property
    def status(self) -> str:
        """The verdict: "no privacy" (no noisy release), "proven" or "not proven" (see ``reasons_not_proven``)."""
        if not self.entries:
            return "no privacy"
        return "not proven" if self.reasons_not_proven() else "proven"

    def reasons_not_proven(self) -> list[str]:
        """Why the totals are not a proven guarantee (empty when they are)."""
        out = []
        data = [r.name for r in self.entries if r.sensitivity_source != "public"]
        if data:
            out.append("not proven: sensitivities computed from the private data (" + ", ".join(data[:5])
                       + (", ..." if len(data) > 5 else "") + ")")
        return out + list(self.caveats)

    def _default_delta(self) -> float:
        total = sum(r.delta for r in self.entries)
        return total if 0 < total < 1 else 1e-6

    def total(self, method: str = "pld", delta: float | None = None) -> tuple[float, float]:
        """Total (epsilon, delta) of all entries.

        method: "basic" returns (sum eps, sum delta) and ignores ``delta``; "zcdp", "pld" and
        "gdp" return the epsilon at ``delta`` (default: the basic total delta, so the methods
        are compared at the same delta).
        """
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
        if not self.entries:
            return 0.0, 0.0
        if method == "basic":
            return float(sum(r.epsilon for r in self.entries)), float(sum(r.delta for r in self.entries))
        delta = self._default_delta() if delta is None else float(delta)
        if not 0 < delta < 1:
            raise ValueError(f"delta must be in (0, 1), got {delta}")
        if any(r.mechanism == "exponential" for r in self.entries):
            # an (eps, delta) mechanism has no zCDP or PLD description here: basic composition is the bound
            eps_b, del_b = self.total("basic")
            return (float(eps_b) if del_b <= delta * (1 + 1e-12) else math.inf), delta
        if method == "zcdp":
            rho = sum(r.rho for r in self.entries)
            return float(zcdp_to_epsilon(rho, delta)), delta
        if method == "gdp":
            if any(r.mechanism != "gaussian" for r in self.entries):
                raise ValueError("the exact 'gdp' total applies to Gaussian-only ledgers; use 'pld'")
            mu = math.sqrt(sum(1.0 / r.noise_multiplier**2 for r in self.entries if r.sensitivity > 0))
            return (0.0 if mu == 0 else float(gaussian_epsilon(1.0, delta, mu))), delta
        return float(self._pld_epsilon(delta)), delta

    def _pld_epsilon(self, delta: float) -> float:
        """The tightest total: closed forms where they are exact, the PLD accountant otherwise.

        - Gaussian-only ledgers: k Gaussian releases compose to one Gaussian with mu = sqrt(sum mu_i^2)
          (Dong, Roth & Su 2019), whose exact curve is Balle & Wang's; the PLD accountant approximates it.
        - One Laplace release with eps0 = Delta / b: its exact privacy profile is
          delta(eps) = 1 - exp((eps - eps0) / 2) for eps <= eps0 (Balle et al. 2018), so
          eps(delta) = eps0 + 2 ln(1 - delta).
        - Releases of per-release epsilon above ``_PLD_MAX_RELEASE_EPS``: the accountant's discretisation
          costs minutes there (22 s at eps 137, 204 s and inf at eps 1000, measured), so the smaller valid
          one of the zCDP and basic totals is returned.
        """
        if all(r.mechanism == "gaussian" for r in self.entries):
            return self.total("gdp", delta)[0]
        active = [r for r in self.entries if r.sensitivity > 0]
        if len(active) == 1 and active[0].mechanism == "laplace":
            return max(0.0, active[0].sensitivity / active[0].scale + 2.0 * math.log1p(-delta))
        if max((r.epsilon for r in active), default=0.0) > _PLD_MAX_RELEASE_EPS:
            eps_b, del_b = self.total("basic")
            candidates = [self.total("zcdp", delta)[0]] + ([eps_b] if del_b <= delta else [])
            return min(candidates)
        # local: importing dp_accounting costs ~1 s, paid only by ledgers that need the PLD accountant
        import dp_accounting
        from dp_accounting.pld import PLDAccountant

        # Each record's sensitivity is already computed for this ledger's neighbouring relation
        # (e.g. sqrt(2) for replace-one Analyze-Gauss), so the release is fully described by
        # mu = sensitivity / scale. dp-accounting's REPLACE_ONE would double the sensitivity a
        # second time; add/remove with the recorded multiplier is the exact accounting.
        accountant = PLDAccountant(neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
        # Group identical releases so k-fold self-composition uses the accountant's fast path.
        groups: dict[tuple[str, float], int] = {}
        for r in self.entries:
            if r.sensitivity == 0:
                continue
            key = (r.mechanism, round(r.noise_multiplier, 12))
            groups[key] = groups.get(key, 0) + 1
        for (mech, z), count in groups.items():
            event = dp_accounting.GaussianDpEvent(z) if mech == "gaussian" else dp_accounting.LaplaceDpEvent(z)
            accountant.compose(event, count)
        eps: float = accountant.get_epsilon(delta)  # dp_accounting is untyped
        return eps

    def to_frame(self) -> pd.DataFrame:
        """One row per release (for tables and CSV export)."""
        import pandas as pd  # here: a federation party's process imports the ledger, never a frame (0.2-0.5 s)

        cols = [f for f in Release.__dataclass_fields__]
        return pd.DataFrame([asdict(r) for r in self.entries], columns=cols)

    def summary(self, delta: float | None = None) -> dict[str, Any]:
        """Totals under every applicable method at one delta, PLD included (see :func:`ledger_totals`)."""
        return ledger_totals(self, delta, pld=True, as_json=False)

    def to_dict(self) -> dict[str, Any]:
        """The ledger as plain data (JSON-ready); ``ledger_from_dict`` reads it back."""
        out = {"neighbouring": self.neighbouring.value, "entries": [asdict(r) for r in self.entries],
               "caveats": list(self.caveats)}
        if self.accountant != "basic":  # the total the fit was calibrated to meet (absent: basic composition)
            out["accountant"] = self.accountant
        return {**out, "unit": self.unit} if self.unit else out


def under_replace_one(led: PrivacyLedger) -> PrivacyLedger:
    """The same releases stated for one row replaced, so that they compose with replace-one releases.

    A replacement is a removal and an addition (group privacy of two): a release whose statistic moves by at most
    Delta when one row is added or removed moves by at most 2 Delta when one is replaced. Gaussian and Laplace
    records keep their noise and double their sensitivity (their ε is recomputed from it); an (ε, δ) record
    ("exponential") becomes (2ε, (1 + e^ε) δ) (Dwork & Roth 2014, group privacy). A replace-one ledger is
    returned as it is. The converse has no such rule (a replace-one release may reveal the row count).
    """
    if led.neighbouring is Neighbouring.REPLACE_ONE:
        return led

    def restated(r: Release) -> Release:
        if r.sensitivity == 0:
            return r
        if r.mechanism == "gaussian":
            return replace(r, sensitivity=2.0 * r.sensitivity,
                           epsilon=float(gaussian_epsilon(r.scale, r.delta, 2.0 * r.sensitivity)))
        if r.mechanism == "laplace":
            return replace(r, sensitivity=2.0 * r.sensitivity, epsilon=2.0 * r.sensitivity / r.scale)
        return replace(r, epsilon=2.0 * r.epsilon, delta=min(1.0, (1.0 + math.exp(r.epsilon)) * r.delta))

    return PrivacyLedger(entries=[restated(r) for r in led.entries], neighbouring=Neighbouring.REPLACE_ONE,
                         caveats=list(led.caveats), unit=led.unit, accountant=led.accountant)


def _json_float(v: float) -> float | str:
    v = float(v)
    if math.isfinite(v):
        return v
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def ledger_totals(led: PrivacyLedger | None, delta: float | None = None, *, pld: bool = False,
                  as_json: bool = True) -> dict[str, Any]:
    """The one totals function: counts, status and the total (epsilon, delta) under each accountant.

    Parameters
    ----------
    led : the ledger (None: nothing was released privately).
    delta : the delta the zCDP/GDP/PLD totals are given at (default: the basic total delta).
    pld : include the PLD accountant's total (tightest, slower: about 50 ms).
    as_json : pairs as lists with non-finite floats as strings (strict JSON) instead of tuples.

    Returns
    -------
    dict with ``n_releases``, ``status`` ("no privacy", "proven", "not proven"), ``proven`` (bool),
    ``reasons_not_proven``, ``neighbouring`` and, when anything was released, ``basic``, ``zcdp``,
    ``gdp`` (Gaussian-only ledgers) and ``pld`` (when asked).
    """
    if led is None or not len(led):  # nothing released privately: no guarantee to prove
        return {"n_releases": 0, "status": "no privacy", "proven": False, "reasons_not_proven": [],
                "neighbouring": None if led is None else led.neighbouring.value}
    pair = (lambda t: [_json_float(x) for x in t]) if as_json else (lambda t: (float(t[0]), float(t[1])))
    out = {"n_releases": len(led), "status": led.status, "proven": led.proven,
           "reasons_not_proven": led.reasons_not_proven(), "neighbouring": led.neighbouring.value}
    out["basic"] = pair(led.total("basic"))
    d = led._default_delta() if delta is None else float(delta)
    out["zcdp"] = pair(led.total("zcdp", d))
    if all(r.mechanism == "gaussian" for r in led.entries):
        out["gdp"] = pair(led.total("gdp", d))
    if pld:
        out["pld"] = pair(led.total("pld", d))
    return out


def gaussian_sigmas_for_budget(
    epsilon: float,
    delta: float,
    sensitivities: ArrayLike,
    method: str = "gdp",
    weights: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """Per-release sigmas so that k Gaussian releases together are (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon, delta : the total budget.
    sensitivities : array (k,) of L2 sensitivities Delta_i.
    method :
        "gdp" (default, exact): the releases compose to one Gaussian with
        mu^2 = sum (Delta_i/sigma_i)^2; mu is set so that this single Gaussian meets
        (eps, delta) exactly (Balle & Wang), then split by ``weights``.
        "zcdp": total rho solved from eps = rho + 2 sqrt(rho ln(1/delta)), split by weights.
        "basic": each release gets (eps/k, delta/k) with the analytic calibration.
    weights : array (k,) of positive shares of mu^2 (or rho), default equal. Ignored by "basic".

    Returns
    -------
    sigmas : array (k,)
    """
    sens = np.atleast_1d(np.asarray(sensitivities, dtype=float))
    k = sens.size
    if k == 0:
        raise ValueError("need at least one release")
    if np.any(sens <= 0) or not np.all(np.isfinite(sens)):
        raise ValueError("sensitivities must be finite and > 0")
    w = np.full(k, 1.0 / k) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (k,) or np.any(w <= 0):
        raise ValueError("weights must be k positive numbers")
    w = w / w.sum()
    if method == "basic":
        return np.array([analytic_gaussian_sigma(epsilon / k, delta / k, s) for s in sens])
    if method == "gdp":
        mu_total = 1.0 / analytic_gaussian_sigma(epsilon, delta, 1.0)
        mu_sq_total = mu_total**2
    elif method == "zcdp":
        log_term = math.log(1.0 / delta)
        sqrt_rho = -math.sqrt(log_term) + math.sqrt(log_term + epsilon)
        mu_sq_total = 2.0 * sqrt_rho**2  # rho = mu^2 / 2
    else:
        raise ValueError("method must be 'gdp', 'zcdp' or 'basic'")
    mu_i: NDArray[np.float64] = np.sqrt(w * mu_sq_total)
    return sens / mu_i
