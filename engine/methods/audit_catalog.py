"""The privacy audit's catalogue: every mechanism of ``engine.privacy`` and every registered method's release.

The auditor itself (``engine.privacy.audit``: ``epsilon_lower_bound``, ``AuditCase``, ``run_case``,
``mechanism_case``) knows nothing about methods. Each method's audit case lives in its own package
(``engine/methods/<method>/audit_case.py``) and is listed in its registry entry
(``engine.methods.registry.METHODS``); this module joins the two, so the audit page, ``bench/audit_all.py``
and the tests see every method the registry has, and a new method is audited by registering it.

Examples
--------
>>> "edpls" in AUDIT_TARGETS and "laplace" in AUDIT_TARGETS
True
>>> AUDIT_TARGETS["edpls"]
('edPLS', ('strict', 'paper'))
"""
from __future__ import annotations

import dataclasses
import inspect
import math

from engine.methods import registry
from engine.methods.registry import AuditTarget
from engine.privacy.audit import PLANTED, AuditCase, case_name, expected_verdict, mechanism_case, planted

__all__ = ["AUDIT_TARGETS", "DEFAULT_BUG", "DEFAULT_TRIALS", "NO_PLANTED_BUGS", "PAGE_BUGS", "audit_cases",
           "audit_targets", "make_case", "plants_bugs", "target_label"]

#: The mechanisms every method builds on (audited through ``mechanism_case``).
MECHANISM_TARGETS = {
    "analytic_gaussian": ("Gaussian mechanism, analytic calibration", ("strict",)),
    "classic_gaussian": ("Gaussian mechanism, classic calibration (ε ≤ 1)", ("strict",)),
    "laplace": ("Laplace mechanism", ("strict",)),
}


def _method_targets() -> dict[str, AuditTarget]:
    return {t.key: t for spec in registry.METHODS for t in spec.audit}


def audit_targets() -> dict:
    """What the page and the bench can audit: key -> (label, modes available); the registry read when called."""
    return {**MECHANISM_TARGETS, **{k: (t.label, t.modes) for k, t in _method_targets().items()}}


#: ``audit_targets()`` when the app started.
AUDIT_TARGETS = audit_targets()


#: The audit page's default trials per data set: at eps = 1 (the budget's default) every strict target's
#: ``DEFAULT_BUG`` is caught at 99 % confidence for every seed tried (tests/test_audit_defaults.py,
#: tests/test_audit_production.py), in seconds. The subtler halved bugs need ~10^6 trials (``bench/audit_all.py``
#: runs them at 3 * 10^6).
DEFAULT_TRIALS = 100_000

#: The planted bug the page offers first (its demonstration that the auditor has teeth).
DEFAULT_BUG = "noise_quartered"

#: The planted bugs the page offers, in order, with their human labels (each planted in production:
#: ``engine.privacy.audit.PLANTED``).
PAGE_BUGS = {
    None: "none (the real release)",
    "noise_quartered": "noise scaled down by 4",
    "sensitivity_quartered": "sensitivity understated by 4",
    "noise_halved": "noise scaled down by 2 (subtle: about 10^6 trials to catch)",
    "sensitivity_halved": "sensitivity understated by 2 (subtle: about 10^6 trials to catch)",
}

#: Strict targets whose claim is loose, so that a halved bug's true epsilon stays close to it: the whole recommended
#: strict fit claims the basic composition of its three releases (epsilon = 1; their exact total is 0.66), and
#: with the noise halved its audit reaches 0.98 at 2 * 10^6 trials. Its tight parts are audited with every bug
#: ("edpls_recommended_cross": 0.76 against 0.5), and the page's quartered bugs are caught on it at the default
#: trials (tests/test_audit_production.py).
LOOSE_CLAIMS = frozenset({"edpls_recommended"})


#: Strict targets no planted bug can reach as a claim violation: TukeyEM's restricted exponential mechanism samples
#: a depth and a point without ``draw_noise`` (planted_bug scales only its test's Laplace noise), so its audit
#: checks the real release only.
NO_PLANTED_BUGS = frozenset({"tukey_em"})


def target_label(target: str) -> str:
    """The human title of a catalogue key ("analytic_gaussian" -> "Gaussian mechanism, analytic calibration")."""
    targets = audit_targets()
    return targets[target][0] if target in targets else target


def plants_bugs(target: str) -> bool:
    """Whether a planted bug can be audited on ``target``: every target with a strict mode (the bug is planted
    where every release draws its noise, so it reaches each of them) but those of ``NO_PLANTED_BUGS``."""
    targets = audit_targets()
    return target in targets and "strict" in targets[target][1] and target not in NO_PLANTED_BUGS


def _call_case(target: AuditTarget, mode: str, epsilon: float, delta: float) -> AuditCase:
    """Call a method's case function with the arguments it takes (PCA-Gauss's has no delta: it is pure eps-DP)."""
    fn = target.resolve()
    accepted = inspect.signature(fn).parameters
    offered = {"mode": mode, "epsilon": epsilon, "delta": delta, **dict(target.fixed)}
    return fn(**{k: v for k, v in offered.items() if k in accepted})


def _planted(case: AuditCase, bug: str) -> AuditCase:
    """The same case with ``engine.privacy.audit.PLANTED[bug]`` in force during every draw of its release
    (``planted``; expected: caught)."""
    release = case.release

    def planted_release(data, rng, n):
        with planted(bug):
            return release(data, rng, n)

    return dataclasses.replace(case, name=case_name(case.name, bug), release=planted_release,
                               expect=expected_verdict("strict", bug), bug=bug)


def make_case(target: str, mode: str = "strict", epsilon: float = 1.0, delta: float = 1e-5,
              bug: str | None = None) -> AuditCase:
    """The catalogue audit for one target of ``AUDIT_TARGETS`` (ValueError for a bad choice).

    ``bug``: None or a key of ``PAGE_BUGS``, planted in production by ``planted_bug`` while the case draws.
    """
    targets = audit_targets()
    if target not in targets:
        raise ValueError(f"target must be one of {tuple(targets)}, got {target!r}")
    label, modes = targets[target]
    if mode not in modes:
        raise ValueError(f"{label} has no {mode!r} mode (available: {', '.join(modes)})")
    if bug is not None and bug not in PLANTED:
        raise ValueError(f"bug must be None or one of {tuple(PLANTED)}, got {bug!r}")
    if bug is not None and mode != "strict":
        raise ValueError("planted bugs are audited in strict mode only")
    if bug is not None and target in NO_PLANTED_BUGS:
        raise ValueError(f"{label} takes no planted bug (NO_PLANTED_BUGS: no noise of its mechanism is drawn "
                         "where planted_bug acts)")
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon}")
    if target in MECHANISM_TARGETS:
        case = mechanism_case(target, epsilon, delta)
    else:
        case = _call_case(_method_targets()[target], mode, epsilon, delta)
    return case if bug is None else _planted(case, bug)


def audit_cases(include_bugs: bool = True, include_paper: bool = True, epsilon: float = 1.0,
                delta: float = 1e-5) -> list[AuditCase]:
    """Every audit of the catalogue: mechanisms, every registered method (strict, paper) and planted bugs.

    Planted bugs (noise halved, sensitivity halved) are audited on every strict target but those of
    ``LOOSE_CLAIMS`` (whose quartered bugs the tests catch at the page's default trials).
    """
    targets = audit_targets()
    strict = [k for k in targets if plants_bugs(k)]
    cases = [make_case(k, "strict", epsilon, delta) for k, (_, modes) in targets.items() if "strict" in modes]
    if include_paper:
        cases += [make_case(k, "paper", epsilon, delta) for k, (_, modes) in targets.items() if "paper" in modes]
    if include_bugs:
        for bug in ("noise_halved", "sensitivity_halved"):
            cases += [make_case(k, "strict", epsilon, delta, bug) for k in strict if k not in LOOSE_CLAIMS]
    return cases
