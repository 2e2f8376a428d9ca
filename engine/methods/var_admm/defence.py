"""The noise defence of the collaborative VAR as a release (spec 2.1, issue #15), and its ledger.

:func:`add_noise` clips every value into a range the user declared public, then adds fresh noise once
per value; any centring is post-processing (the VAR's intercept is fitted on the noisy values).
:func:`defence_ledger` decides the status from explicit declarations only (range declared public,
noise seed not known; :func:`noise_range_declaration`) and states ε per value (event level) and for
one owner's whole series (T values composed: the fit's ledger). The paper's naive design (independent
noise on every entry of Z and Y) is :func:`naive_noisy_design`. Hand-written: the paper's defence and
its per-value / per-series accounting; the mechanisms' ε come from :mod:`engine.privacy`.
No streamlit here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.privacy import (
    SEED_KNOWN_CAVEAT,
    Neighbouring,
    PrivacyLedger,
    Release,
    gaussian_epsilon,
    noise_generator,
    noise_scale,
)

from .layout import lagged_design
from .trace import noise as draw_noise

__all__ = [
    "DP_STATEMENTS",
    "PER_SERIES_UNIT",
    "PER_VALUE_UNIT",
    "RANGE_NOT_DECLARED",
    "DefenceLedger",
    "NoiseRelease",
    "RangeDeclaration",
    "add_noise",
    "calibrated_noise_scale",
    "calibrates_from_epsilon",
    "clip_to_range",
    "defence_ledger",
    "naive_noisy_design",
    "noise_defence",
    "noise_guarantee",
    "noise_ledger",
    "noise_range_declaration",
    "noise_sd",
    "range_width",
]


def noise_sd(law: str, b: float) -> float:
    """Standard deviation of the paper's noise laws: N(0, b^2), L(0, b), U(-b, b)."""
    return {"gaussian": b, "laplace": math.sqrt(2.0) * b, "uniform": b / math.sqrt(3.0)}[law]


def _check_range(public_range) -> tuple[float, float]:
    """(lo, hi) as floats with lo < hi, both finite (ValueError otherwise)."""
    try:
        lo, hi = (float(v) for v in public_range)
    except (TypeError, ValueError):
        raise ValueError(f"public_range must be a pair (lo, hi) of numbers, got {public_range!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"public_range must have finite lo < hi, got ({lo:g}, {hi:g})")
    return lo, hi


def range_width(public_range) -> float:
    """Δ = hi - lo of a declared range (lo, hi): the sensitivity of one clipped value."""
    lo, hi = _check_range(public_range)
    return hi - lo


def clip_to_range(Y, public_range) -> np.ndarray:
    """Y (any shape) clipped into [lo, hi] (a new float array)."""
    lo, hi = _check_range(public_range)
    return np.clip(np.asarray(Y, dtype=float), lo, hi)


def add_noise(Y, law: str, b: float, random_state=None, *, public_range=None) -> np.ndarray:
    """The noise defence: every series value is clipped into the public range, then noise is added once
    per value, y~ = clip(y, lo, hi) + w (spec 2.1); Z and Y are then built from y~.

    Parameters
    ----------
    Y : array (T, n) (any shape): the owners' values on the scale the range is declared on (raw
        values, never values centred on a private mean).
    law : "laplace" (L(0, b)), "gaussian" (N(0, b²)) or "uniform" (U(-b, b)).
    b : noise scale >= 0.
    random_state : None (fresh OS entropy: the default for a release) or a known seed / generator
        (then the release is not proven; see :func:`engine.privacy.noise.noise_generator`).
    public_range : (lo, hi) declared public. The clipping happens here, inside the release, so one
        value changes the output by at most Δ = hi - lo whatever the data (a value in kW against a
        range declared in [0, 1] is clipped to 1). None: no clipping (the paper's pipeline): then
        no finite ε holds for unbounded values.

    Returns
    -------
    array of Y's shape: the noisy (clipped) values. Any centring is post-processing of this array.
    """
    Y = np.asarray(Y, dtype=float)
    if public_range is not None:
        Y = clip_to_range(Y, public_range)
    if not (b >= 0 and math.isfinite(b)):
        raise ValueError("noise scale b must be a finite number >= 0")
    if b == 0:
        return Y.copy()
    rng, _ = noise_generator(random_state)
    return Y + draw_noise(rng, law, b, Y.shape)


def naive_noisy_design(Y, lags, law: str, b: float, random_state=None, *,
                       public_range=None) -> tuple[np.ndarray, np.ndarray]:
    """The literal W_1, W_2 of (72): independent noise on every entry of Z and of the targets.

    Each series value then appears p + 1 times with independent noise, and an attacker who
    averages the copies cuts the noise sd by sqrt(p + 1) (spec 2.1): offered only as "naive".
    Values are clipped into ``public_range`` first (as in :func:`add_noise`).
    """
    Y = np.asarray(Y, dtype=float) if public_range is None else clip_to_range(Y, public_range)
    Z, target = lagged_design(Y, lags)
    rng, _ = noise_generator(random_state)
    return Z + draw_noise(rng, law, b, Z.shape), target + draw_noise(rng, law, b, target.shape)


DP_STATEMENTS = {
    "laplace": ("Laplace noise once per value is ε-differentially private per value only when every value is "
                "clipped into a range declared public and b is calibrated to its width (ε = Δ/b, Δ = hi − lo). "
                "That protects one value (event level); a whole series of T values composes to ε = T·Δ/b, "
                "which is no meaningful guarantee."),
    "gaussian": ("Gaussian noise once per value is (ε, δ)-DP per value when the values are clipped into a range "
                 "declared public and σ = b is calibrated to its width Δ; over a whole series of T values the T "
                 "releases compose to one Gaussian mechanism with sensitivity Δ·√T."),
    "uniform": ("Uniform noise U(-b, b) is not differentially private for any ε: a value shifted by more than "
                "the noise width produces outputs impossible under the other value."),
    "naive": ("Independent noise on every entry of Z and Y: each value is released p + 1 times, so averaging "
              "the copies cuts the noise by √(p + 1); the per-value ε is (p + 1) times the single-copy ε."),
    "transform": ("Multiplicative and linear transformations are not differentially private: they hide the data "
                  "only as long as the transformation matrix stays secret, and known records reveal it."),
    "admm_noise": ("Noise on ADMM's shared coefficients or messages is not calibrated to any sensitivity here "
                   "and carries no DP guarantee; the attacks below still recover the data (as the paper shows)."),
}

#: The ledger caveat of a range the user did not declare public.
RANGE_NOT_DECLARED = ("not proven: the range Δ is not declared public (declare it only when it comes from the "
                      "plant's rating, not from the data)")
#: Units of privacy of the noise defence.
PER_VALUE_UNIT = "one value of one owner's series (e.g. one hour)"
PER_SERIES_UNIT = "one owner's whole series"


@dataclass(frozen=True)
class RangeDeclaration:
    """What the user declared about the range the values are clipped into, and what follows from it.

    public_range : (lo, hi). declared_public : the user's explicit declaration.
    sensitivity_source : "public" (declared) or "data" (not declared: treated as read off the data).
    status : "declared public" or "not proven". caveat : the ledger caveat (None when declared).
    summary : one line for the page, under the range inputs.
    """

    public_range: tuple
    declared_public: bool
    sensitivity_source: str
    status: str
    caveat: str | None
    summary: str

    @property
    def proven(self) -> bool:
        """The range allows a proven guarantee (the noise and the seed decide the rest: see the ledger)."""
        return self.declared_public


def noise_range_declaration(value_range, declared_public: bool) -> RangeDeclaration:
    """The privacy status of a clipping range, from the user's explicit declaration only.

    Parameters
    ----------
    value_range : (lo, hi), finite with lo < hi: the range every value is clipped into.
    declared_public : True only when the user declared the range public (a plant's rating, the bounds
        of a normalisation: known without looking at the data). Nothing here looks at the data or at
        how the range was prefilled; a range typed by the user or read off the file is "not proven"
        until declared.

    Returns
    -------
    :class:`RangeDeclaration`. Raises ValueError for a range that is not a finite (lo, hi) with lo < hi
    and TypeError when ``declared_public`` is not a bool (a declaration, not a truthy value).
    """
    if not isinstance(declared_public, (bool, np.bool_)):
        raise TypeError(f"declared_public must be True or False (the user's declaration), got {declared_public!r}")
    lo, hi = _check_range(value_range)
    if declared_public:
        return RangeDeclaration((lo, hi), True, "public", "declared public", None, "**Declared public.**")
    return RangeDeclaration((lo, hi), False, "data", "not proven", RANGE_NOT_DECLARED,
                            "Not declared public: **not proven**.")


def noise_guarantee(law: str, b: float, sensitivity: float, T: int, delta: float = 1e-5,
                    sensitivity_source: str = "public", copies: int = 1) -> dict:
    """The ε of adding noise of scale b once per value (``copies`` times: naive), for a given Δ.

    sensitivity : Δ, the width of the range one value can take (hi - lo of the declared range
    the values are clipped into; the paper's observed range in its own numbers, not a proof).
    Returns per value and per series (T values, one owner's whole series) epsilons; uniform
    noise: no guarantee. The page's status comes from :func:`defence_ledger`, not from here.
    """
    out = {"law": law, "b": b, "sensitivity": sensitivity, "sensitivity_source": sensitivity_source,
           "T": T, "copies": copies, "delta": None, "eps_per_value": math.inf, "eps_per_series": math.inf,
           "proven": sensitivity_source == "public", "statement": DP_STATEMENTS[law]}
    if b <= 0 or law == "uniform":
        out["proven"] = False
        return out
    if law == "laplace":
        eps1 = copies * sensitivity / b
        out.update(eps_per_value=eps1, eps_per_series=T * eps1, delta=0.0)
    else:
        # c copies of a Gaussian with sd b compose to one Gaussian with sensitivity Δ sqrt(c)
        out.update(eps_per_value=gaussian_epsilon(b, delta, sensitivity * math.sqrt(copies)),
                   eps_per_series=gaussian_epsilon(b, delta, sensitivity * math.sqrt(copies * T)), delta=delta)
    return out


def _defence_release(law: str, b: float, sensitivity: float, delta: float, name: str, source: str,
                     note: str) -> Release:
    if law == "laplace":
        return Release(name=name, mechanism="laplace", sensitivity=sensitivity, scale=b, epsilon=sensitivity / b,
                       delta=0.0, sensitivity_source=source, note=note)
    return Release.gaussian(name=name, sigma=b, sensitivity=sensitivity, delta=delta, sensitivity_source=source,
                            note=note)


@dataclass
class DefenceLedger:
    """The guarantee of the noise defence, per value and per owner's series, from explicit declarations.

    Attributes
    ----------
    law, b, public_range (lo, hi) or None, declared_public, T (values per owner's series),
    n_owners, delta, copies (releases of each value: 1, or p + 1 / p + 2 for the naive design).
    per_value : PrivacyLedger, event level: neighbours differ in one value of one owner (moved
        anywhere, clipping keeps it in the range); replace-one, so T is public.
    per_series : PrivacyLedger, one owner's whole series replaced: the T per-value releases
        composed into one mechanism (Laplace: L1 sensitivity T·c·Δ; Gaussian: L2 Δ√(cT)).
        This is the fit's ledger (``ledger``): its total is the whole-series ε.
    eps_per_value, eps_per_series : the two ε (inf when nothing is private).
    """

    law: str
    b: float
    public_range: tuple | None
    declared_public: bool
    T: int
    n_owners: int
    delta: float
    copies: int
    per_value: PrivacyLedger
    per_series: PrivacyLedger
    eps_per_value: float
    eps_per_series: float

    @property
    def ledger(self) -> PrivacyLedger:
        """The fit's ledger: one owner's whole series (the total is not a per-value number)."""
        return self.per_series

    @property
    def status(self) -> str:
        """The verdict: "proven", "not proven" or "no privacy" (from the ledger)."""
        return self.per_series.status

    @property
    def proven(self) -> bool:
        """Whether the ledger proves the guarantee."""
        return self.status == "proven"

    def reasons_not_proven(self) -> list:
        """Why the guarantee is not proven (the undeclared range stated once, with what to do)."""
        if self.status == "no privacy":
            return [self.no_privacy_reason()]
        reasons = self.per_series.reasons_not_proven()
        if RANGE_NOT_DECLARED in reasons:  # the generic "sensitivity from the data" says the same thing
            reasons = [r for r in reasons if not r.startswith("not proven: sensitivities computed")]
        return reasons

    def no_privacy_reason(self) -> str:
        """Why the defence gives no differential privacy (the law, no noise or no public range)."""
        if self.law not in ("laplace", "gaussian"):
            return f"{self.law} noise is not differentially private (ε = ∞)"
        if not self.b > 0:
            return "no noise (b = 0): ε = ∞"
        if self.public_range is None:
            return "values are not clipped into a range, so one value can move the output without bound (ε = ∞)"
        return ""

    def delta_text(self) -> str:
        """The text ' at δ = ...' for the Gaussian law, empty for Laplace."""
        return "" if self.law == "laplace" else f" at δ = {self.delta:.1e}"

    def headline(self) -> str:
        """One sentence: ε per value (event level) and for one owner's whole series, with the status."""
        if self.status == "no privacy":
            return f"No privacy guarantee: {self.no_privacy_reason()}."
        copies = f" (each value released {self.copies} times)" if self.copies > 1 else ""
        text = (f"ε = {self.eps_per_value:.4g} per value (event level: protects {PER_VALUE_UNIT}){copies}; "
                f"ε = {self.eps_per_series:.4g} for {PER_SERIES_UNIT} ({self.T} values composed)"
                f"{self.delta_text()}. ")
        if self.proven:
            return text + ("Proven: the values are clipped into the declared public range and the noise is fresh. "
                           "The per-series ε is the one that protects an owner's data as a whole.")
        reasons = "; ".join(r.removeprefix("not proven: ") for r in self.reasons_not_proven())
        return text + f"**Not proven**: {reasons}."

    def to_frame(self) -> pd.DataFrame:
        """Two rows (per value, per series): unit, ε, δ, status."""
        d = 0.0 if self.law == "laplace" or self.status == "no privacy" else self.delta
        return pd.DataFrame({"unit of privacy": [PER_VALUE_UNIT, f"{PER_SERIES_UNIT} ({self.T} values)"],
                             "epsilon": [self.eps_per_value, self.eps_per_series], "delta": [d, d],
                             "status": [self.per_value.status, self.per_series.status]})


def defence_ledger(law: str, b: float, public_range, declared_public: bool, T: int, n_owners: int,
                   seed_known: bool, *, delta: float = 1e-5, copies: int = 1) -> DefenceLedger:
    """The ledger of the noise defence, decided from explicit declarations only.

    Parameters
    ----------
    law : "laplace", "gaussian" (DP when clipped) or "uniform" (never DP).
    b : the noise scale applied.
    public_range : (lo, hi) the values were clipped into, or None (no clipping: ε = ∞).
    declared_public : the user's declaration that the range is public (the plant's rating, not
        read off the data). Nothing here infers it; without it the ledger says "not proven".
    T : values per owner's series (rows released). n_owners : series released.
    seed_known : the noise came from a known seed (``noise_generator``'s flag): not proven.
    delta : δ of the Gaussian law. copies : releases of each value (naive design: p + 1 or more).

    Returns
    -------
    :class:`DefenceLedger` (per value and per series ledgers, neighbouring "replace").
    """
    T, n_owners, copies = int(T), int(n_owners), int(copies)
    per_value = PrivacyLedger(neighbouring=Neighbouring.REPLACE_ONE, unit=PER_VALUE_UNIT.removeprefix("one "))
    per_series = PrivacyLedger(neighbouring=Neighbouring.REPLACE_ONE, unit=PER_SERIES_UNIT.removeprefix("one "))
    inf = math.inf
    out = DefenceLedger(law, float(b), None if public_range is None else _check_range(public_range),
                        bool(declared_public), T, n_owners, float(delta), copies, per_value, per_series, inf, inf)
    if law not in ("laplace", "gaussian") or not b > 0 or out.public_range is None:
        return out
    lo, hi = out.public_range
    width = hi - lo
    declaration = noise_range_declaration((lo, hi), out.declared_public)
    # names without commas: a release field names its ledger source by a comma-separated list
    noise_text = f"Laplace noise b = {b:.4g}" if law == "laplace" else f"Gaussian noise σ = {b:.4g}"
    clipped = f"clipped to [{lo:.4g} .. {hi:.4g}] + {noise_text}" + (f" ({copies} copies)" if copies > 1 else "")
    v_sens = copies * width if law == "laplace" else width * math.sqrt(copies)
    s_sens = T * copies * width if law == "laplace" else width * math.sqrt(copies * T)
    per_value.add(_defence_release(
        law, b, v_sens, delta, f"each value of the {n_owners} series {clipped}", declaration.sensitivity_source,
        f"event level: {PER_VALUE_UNIT}; one value replaced anywhere, clipping keeps it in the range"))
    per_series.add(_defence_release(
        law, b, s_sens, delta, f"one owner's series of {T} values each {clipped}", declaration.sensitivity_source,
        f"{PER_SERIES_UNIT} replaced: the {T} per-value releases composed (sensitivity "
        f"{'T·Δ in L1' if law == 'laplace' else 'Δ·√T in L2'}); the {n_owners} owners' series are disjoint"))
    for led in (per_value, per_series):
        if declaration.caveat is not None:
            led.add_caveat(declaration.caveat)
        if seed_known:
            led.add_caveat(SEED_KNOWN_CAVEAT)
    out.eps_per_value = per_value.entries[0].epsilon
    out.eps_per_series = per_series.entries[0].epsilon
    return out


def noise_ledger(law: str, b: float, sensitivity: float, n_series: int, delta: float = 1e-5,
                 sensitivity_source: str = "public") -> PrivacyLedger:
    """The per-value (event-level) ledger for a range of width ``sensitivity`` (kept for notebooks;
    the page uses :func:`defence_ledger`, which also states the whole-series guarantee)."""
    return defence_ledger(law, b, (0.0, float(sensitivity)), sensitivity_source == "public", 1, n_series,
                          seed_known=False, delta=delta).per_value


@dataclass
class NoiseRelease:
    """One run of the noise defence: the released noisy series and its ledger.

    noisy : (T, n) clip + noise on the raw scale: the DP release (centring comes after, as
        post-processing). ledger : :class:`DefenceLedger`. n_outside : values outside the range
        before clipping (an exact private count: owner's workbook only, never a release).
    """

    noisy: np.ndarray
    defence: DefenceLedger
    n_outside: int
    naive: bool = False


def noise_defence(Y, law: str, b: float, *, public_range=None, declared_public: bool = False, delta: float = 1e-5,
                  random_state=None, copies: int = 1) -> NoiseRelease:
    """Run the noise defence on Y (T x n, raw scale): clip into ``public_range``, add fresh noise, and
    state the guarantee (:func:`defence_ledger`; ``random_state`` other than None or a fresh
    generator makes it not proven)."""
    Y = np.asarray(Y, dtype=float)
    rng, seed_known = noise_generator(random_state)
    n_outside = 0 if public_range is None else int(np.sum((Y < _check_range(public_range)[0])
                                                          | (Y > _check_range(public_range)[1])))
    noisy = add_noise(Y, law, b, rng, public_range=public_range)
    led = defence_ledger(law, b, public_range, declared_public, Y.shape[0], Y.shape[1], seed_known, delta=delta,
                         copies=copies)
    return NoiseRelease(noisy, led, n_outside)


def calibrates_from_epsilon(law: str, mode: str) -> bool:
    """Whether the noise scale b follows from (epsilon, delta) and the public range: only the DP laws
    (Laplace, Gaussian) in strict mode; paper mode and the uniform law take the user's strength as given."""
    return law in ("laplace", "gaussian") and mode == "strict"


def calibrated_noise_scale(law: str, epsilon: float, delta: float, sensitivity: float) -> float:
    """Noise scale for an (epsilon, delta) guarantee per value with a public range ``sensitivity``:
    Laplace b = Δ/ε; Gaussian σ by the analytic calibration (:func:`engine.privacy.calibration.noise_scale`;
    ε = ∞ gives 0, no noise). Uniform noise cannot be calibrated."""
    if law not in ("laplace", "gaussian"):
        raise ValueError(f"{law} noise is not differentially private and has no calibration")
    return float(noise_scale(law, epsilon, delta, sensitivity, calibration="analytic"))
