"""The attack's scenario: who holds which rows (the paper's simulation, or an uploaded table split in two)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.data.attack_sim import TwoPartySpectra, make_attack_spectra, max_row_norm_bound
from engine.privacy import as_generator

from .attack import AttackSetupError

__all__ = ["AttackProblem", "SimulationScenario", "simulation_problem", "split_parties"]


@dataclass
class AttackProblem:
    """One attack set-up.

    X_own (n_a, m), y_own (n_a,): the attacker's rows; X_other (n_b, m), y_other (n_b,): the
    other party's rows (the server stacks both). secret (m,) or None: the other party's unique
    component when known; secret_centre: its channel. X_test, y_test: held-out rows for RMSEP
    (None: no RMSEP). x_bound, y_bound: public clipping bounds for strict mode, with
    ``bounds_public`` saying whether they were fixed without looking at the data.
    """

    X_own: np.ndarray
    y_own: np.ndarray
    X_other: np.ndarray
    y_other: np.ndarray
    secret: np.ndarray | None = None
    secret_centre: float | None = None
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    variable_names: list = field(default_factory=list)
    variable_axis: np.ndarray | None = None
    x_bound: float | None = None
    y_bound: float | None = None
    bounds_public: bool = False
    attacker_label: str = "party 1"
    other_label: str = "party 2"

    @property
    def X(self) -> np.ndarray:
        """Both parties' rows stacked: the attacker's first, (n_own + n_other, m)."""
        return np.vstack([self.X_own, self.X_other])

    @property
    def y(self) -> np.ndarray:
        """Both parties' responses, in the row order of ``X``."""
        return np.concatenate([self.y_own, self.y_other])

    @property
    def axis(self) -> np.ndarray:
        """The variable axis for plots: ``variable_axis``, or the channel numbers 0..m-1."""
        return np.arange(self.X_own.shape[1]) if self.variable_axis is None else self.variable_axis

    def fingerprint(self) -> str:
        """A content hash (for caches): equal data, secret and bounds give equal fingerprints."""
        h = hashlib.sha256()
        for a in (self.X_own, self.y_own, self.X_other, self.y_other, self.secret, self.X_test, self.y_test):
            h.update(b"-" if a is None else np.ascontiguousarray(a, dtype=float).tobytes() + str(np.shape(a)).encode())
        h.update(repr((self.secret_centre, self.x_bound, self.y_bound)).encode())
        return h.hexdigest()


def simulation_problem(data: TwoPartySpectra, attacker: int = 1, test: TwoPartySpectra | None = None) -> AttackProblem:
    """The paper's simulation seen by ``attacker`` (1 or 2); ``test`` (optional) gives RMSEP rows.

    Strict-mode bounds come from the generator's parameters (public): the largest possible
    row norm, and the top of the concentration range for |y|.
    """
    X_own, y_own = data.party_data(attacker)
    X_other, y_other = data.party_data(3 - attacker)
    secret, centre = data.secret_of_other(attacker)
    c_max = max(abs(v) for v in data.params["concentration_range"])
    noise_free = data.params.get("noise", 0.0) == 0
    return AttackProblem(
        X_own, y_own, X_other, y_other, secret=secret, secret_centre=centre,
        X_test=None if test is None else test.X, y_test=None if test is None else test.y,
        variable_names=[f"channel {j}" for j in range(data.n_channels)], variable_axis=data.channels,
        x_bound=max_row_norm_bound(data), y_bound=float(c_max), bounds_public=noise_free,
        attacker_label=f"party {attacker}", other_label=f"party {3 - attacker}",
    )


@dataclass
class SimulationScenario:
    """The paper's simulation, redrawn for every replicate.

    generator: keyword arguments of ``make_attack_spectra`` (paper defaults when empty);
    attacker: 1 or 2; n_test_per_party: held-out rows per party for RMSEP (0: none).
    """

    generator: dict = field(default_factory=dict)
    attacker: int = 1
    n_test_per_party: int = 100

    def draw(self, random_state=None) -> AttackProblem:
        """One fresh problem of this scenario: the spectra, the split and the secret, from ``random_state``."""
        rng = as_generator(random_state)
        data = make_attack_spectra(random_state=rng, **self.generator)
        test = None
        if self.n_test_per_party:
            test = make_attack_spectra(self.n_test_per_party, random_state=rng,
                                       **{k: v for k, v in self.generator.items() if k != "n_per_party"})
        return simulation_problem(data, self.attacker, test)


def _check_columns(df: pd.DataFrame, feature_columns: list, response_column: str) -> None:
    if df is None or len(df) == 0:
        raise AttackSetupError("the data set is empty")
    missing = [c for c in [*feature_columns, response_column] if c not in df.columns]
    if missing:
        raise AttackSetupError(f"column(s) not in the data: {missing}")
    if response_column in feature_columns:
        raise AttackSetupError(f"the response '{response_column}' cannot also be a variable")
    if len(feature_columns) < 2:
        raise AttackSetupError("pick at least 2 variable columns")
    bad = [c for c in [*feature_columns, response_column] if not pd.api.types.is_numeric_dtype(df[c])]
    if bad:
        raise AttackSetupError(f"non-numeric column(s): {bad}")


def _rows_by_column(df: pd.DataFrame, group_column, attacker_groups, used: list) -> tuple[np.ndarray, str, str]:
    """(attacker's row mask, its label, the other party's label) from a party column."""
    if group_column is None or group_column not in df.columns:
        raise AttackSetupError("choose the column that says which party a row belongs to")
    if group_column in used:
        raise AttackSetupError(f"the party column '{group_column}' cannot also be a variable or the response")
    groups = list(attacker_groups or [])
    if not groups:
        raise AttackSetupError(f"choose which value(s) of '{group_column}' are the attacker's rows")
    values = ", ".join(map(str, groups))
    return df[group_column].isin(groups).to_numpy(), f"{group_column} ∈ {{{values}}}", f"{group_column} ∉ {{{values}}}"


def _rows_by_range(n_rows: int, attacker_rows) -> tuple[np.ndarray, str, str]:
    """(attacker's row mask, its label, the other party's label) from positional row ranges."""
    if attacker_rows is None:
        raise AttackSetupError("choose the attacker's row range")
    ranges = [attacker_rows] if np.isscalar(attacker_rows[0]) else list(attacker_rows)
    own_mask = np.zeros(n_rows, dtype=bool)
    for start, stop in ranges:
        start, stop = int(start), int(stop)
        if not 0 <= start < stop <= n_rows:
            raise AttackSetupError(f"row range {start}..{stop} is outside 0..{n_rows}")
        own_mask[start:stop] = True
    return own_mask, "rows " + ", ".join(f"{a}–{b - 1}" for a, b in ranges), "the other rows"


def _finite_rows(df: pd.DataFrame, feature_columns: list, response_column: str) -> tuple[np.ndarray, np.ndarray]:
    X_all = df[feature_columns].to_numpy(dtype=float)
    y_all = df[response_column].to_numpy(dtype=float)
    finite = np.isfinite(X_all).all(axis=1) & np.isfinite(y_all)
    if not finite.all():
        raise AttackSetupError(
            f"{int((~finite).sum())} row(s) have missing or non-finite values in the chosen columns "
            f"(first: row {int(np.flatnonzero(~finite)[0])})"
        )
    return X_all, y_all


def _hold_out(rng, masks_and_labels, test_fraction: float, n_components: int) -> list:
    """(train, test) row indices of each party: a random ``test_fraction`` of its rows held out."""
    need = n_components + 2
    parts = []
    for who, mask, label in masks_and_labels:
        idx = np.flatnonzero(mask)
        n_test = int(round(test_fraction * len(idx)))
        if len(idx) - n_test < need:
            raise AttackSetupError(
                f"the {who} ({label}) has {len(idx)} rows; "
                f"{need} training rows are needed for {n_components} latent variables"
            )
        perm = rng.permutation(idx)
        parts.append((np.sort(perm[n_test:]), np.sort(perm[:n_test])))
    return parts


def _check_party_rows(who: str, X: np.ndarray, y: np.ndarray, response_column: str, n_components: int) -> None:
    if np.ptp(y) == 0:
        raise AttackSetupError(
            f"the response '{response_column}' is constant in the {who}'s rows; pick another response or split"
        )
    if np.linalg.matrix_rank(X - X.mean(axis=0)) < n_components:
        raise AttackSetupError(
            f"the {who}'s rows span fewer than {n_components} directions; use fewer latent variables"
        )


def split_parties(
    df: pd.DataFrame,
    feature_columns,
    response_column: str,
    *,
    by: str = "column",
    group_column: str | None = None,
    attacker_groups=None,
    attacker_rows=None,
    test_fraction: float = 0.25,
    n_components: int = 3,
    x_bound: float | None = None,
    y_bound: float | None = None,
    random_state=0,
) -> AttackProblem:
    """Split an uploaded table into the attacker's and the other party's rows.

    by="column": rows whose ``group_column`` value is in ``attacker_groups`` belong to the
    attacker, all other rows to the other party. by="rows": ``attacker_rows`` = (start, stop)
    positional row range (0-based, stop exclusive) or a list of such ranges; the rest is the
    other party. A random ``test_fraction`` of each party's rows is held out for RMSEP.
    Bounds for strict mode (on raw ||x_i|| and |y_i|) default to the data's own maxima (then
    ``bounds_public`` is False: fine for exploring the attack, not a proven guarantee).
    Raises AttackSetupError naming the problem.
    """
    feature_columns = list(feature_columns) if df is not None else []
    _check_columns(df, feature_columns, response_column)
    if by == "column":
        own_mask, own_label, other_label = _rows_by_column(df, group_column, attacker_groups,
                                                           [*feature_columns, response_column])
    elif by == "rows":
        own_mask, own_label, other_label = _rows_by_range(len(df), attacker_rows)
    else:
        raise AttackSetupError(f"by must be 'column' or 'rows', got {by!r}")
    X_all, y_all = _finite_rows(df, feature_columns, response_column)
    if not 0 <= test_fraction < 0.9:
        raise AttackSetupError(f"test_fraction must be in [0, 0.9), got {test_fraction}")
    (train_own, test_own), (train_other, test_other) = _hold_out(
        as_generator(random_state),
        (("attacker", own_mask, own_label), ("other party", ~own_mask, other_label)), test_fraction, n_components)
    test_idx = np.concatenate([test_own, test_other])
    X_own, y_own = X_all[train_own], y_all[train_own]
    X_other, y_other = X_all[train_other], y_all[train_other]
    _check_party_rows("attacker", X_own, y_own, response_column, n_components)
    _check_party_rows("other party", X_other, y_other, response_column, n_components)
    public = x_bound is not None and y_bound is not None
    # Strict mode (no public centre) clips the raw rows, so the bounds are on raw ||x|| and |y|.
    if x_bound is None:
        x_bound = float(np.linalg.norm(np.vstack([X_own, X_other]), axis=1).max())
    if y_bound is None:
        y_bound = float(np.abs(np.concatenate([y_own, y_other])).max())
    return AttackProblem(
        X_own, y_own, X_other, y_other, secret=None, secret_centre=None,
        X_test=X_all[test_idx] if len(test_idx) else None, y_test=y_all[test_idx] if len(test_idx) else None,
        variable_names=[str(c) for c in feature_columns], variable_axis=_numeric_axis(feature_columns),
        x_bound=float(x_bound), y_bound=float(y_bound), bounds_public=public,
        attacker_label=own_label, other_label=other_label,
    )


def _numeric_axis(names) -> np.ndarray:
    """Column names as a numeric axis when they all are numbers (e.g. wavelengths), else 0..m-1."""
    try:
        values = np.array([float(str(c).strip().lstrip("xX_").rstrip("nm ")) for c in names])
    except ValueError:
        return np.arange(len(names))
    if np.all(np.isfinite(values)) and np.all(np.diff(values) > 0):
        return values
    return np.arange(len(names))
