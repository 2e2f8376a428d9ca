"""The P3LS federation: :class:`P3LS` runs the protocol (Algorithms 2-5) between its roles on column blocks.

Also the input checks of the blocks and the response, and the relevance measure (paper Sec. 3.6,
Algorithm 4). Masks are not differential privacy (see :data:`engine.methods.p3ls.leakage.NOT_DP_STATEMENT`).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from numbers import Integral
from typing import ClassVar

import numpy as np
import pandas as pd
from sklearn.base import (
    BaseEstimator,
    MultiOutputMixin,
    RegressorMixin,
    TransformerMixin,
)
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted

from engine.federation.messages import MessageLog
from engine.methods.column_checks import (
    check_columns,
    frame_names,
    raise_if_non_numeric,
    series_name,
)
from engine.methods.constraints import PRIVACY_PARAMETER_CONSTRAINTS
from engine.methods.p3ls.pls import PLSComponents
from engine.methods.p3ls.roles import DataHolder, Server, TrustedAuthority
from engine.privacy import as_generator
from engine.privacy.noise import FreshGenerator, fresh_generator, spawn_fresh

__all__ = ["P3LS", "P3LS_PARAMETER_CONSTRAINTS", "Relevance"]

#: P3LS's own parameters (it has no epsilon or delta: masks add no noise). random_state also takes a numpy
#: Generator (a fresh one by default, see :class:`P3LS`), which scikit-learn's "random_state" does not.
P3LS_PARAMETER_CONSTRAINTS = {
    "n_components": [Interval(Integral, 1, None, closed="left")],
    "label_holder": [Integral],
    "row_mask_block_size": [Interval(Integral, 1, None, closed="left"), None],
    "secure_aggregation": ["boolean"],
    "party_names": ["array-like", None],
    "random_state": [*PRIVACY_PARAMETER_CONSTRAINTS["random_state"], np.random.Generator],
}


@dataclass(frozen=True)
class Relevance:
    """Contribution/relevance per party (paper Sec. 3.6; spec Sec. 4).

    table columns: party, label_contributor, n_columns, r2_x (eq. 16: share of the variance of
    all of X explained through the party's loadings; the shares sum to R2_X), r2_x_block (the
    same over the party's own columns), r2_xy (eq. 18 via Algorithm 4: 1 - SS(Y - X_i B_i)/SS(Y)).
    r2_y: eq. 17 (LC). r2_x_total: R2_X of the joint model. rows: "training" or "new rows".
    """

    table: pd.DataFrame
    r2_y: float
    r2_x_total: float
    rows: str


def _check_blocks(blocks, name: str = "blocks", min_rows: int = 2, *, full: bool = False) -> list[np.ndarray]:
    """The parties' blocks as float arrays with the same rows (``min_rows``: 2 to fit, 1 to predict).

    Every cell is checked (``column_checks``): text, NaN, inf, overflow and underflow are a ``ValueError``
    naming the block and the column (its header for a DataFrame, else its 0-based index in the block).
    ``full`` (training rows) also refuses a constant column (no ddof=1 scale) and two identical columns,
    within a block or across parties (collinear: the pooled X has a repeated variable).
    """
    if isinstance(blocks, np.ndarray) or not hasattr(blocks, "__len__") or len(blocks) < 1:
        raise ValueError(f"{name} must be a list of 2-D column blocks (one per party)")
    out, labels = [], []
    for i, b in enumerate(blocks):
        what, names = f"{name}[{i}]", frame_names(b)
        try:
            a = check_array(b, dtype=np.float64, input_name=what, ensure_min_samples=min_rows,
                            ensure_all_finite=False)
        except (ValueError, TypeError) as exc:
            raise_if_non_numeric(b, what, names, cause=exc)
            raise
        check_columns(a, what, names, constant=full, duplicates=False)
        out.append(a)
        labels += [f"{what} column '{names[j]}'" if names is not None else f"{what} column {j}"
                   for j in range(a.shape[1])]
    rows = {b.shape[0] for b in out}
    if len(rows) != 1:
        raise ValueError(f"every block must have the same rows; got row counts {sorted(rows)}")
    if full and len(labels) > 1:
        _refuse_duplicate_columns(np.hstack(out), labels)
    return out


def _refuse_duplicate_columns(X: np.ndarray, labels: list) -> None:
    """A named ``ValueError`` for two identical columns of the pooled X (labels: each column's full label)."""
    try:
        check_columns(X, "X", [str(j) for j in range(X.shape[1])], constant=False, duplicates=True)
    except ValueError as err:
        pair = [int(j) for j in re.findall(r"'(\d+)'", str(err))[:2]]
        if len(pair) != 2:
            raise
        raise ValueError(f"{labels[pair[0]]} and {labels[pair[1]]} are identical: duplicate columns are "
                         "collinear (the same variable twice in the pooled X); drop one of them") from None


def _check_response(Y, name: str = "Y", *, full: bool = True) -> tuple[np.ndarray, bool]:
    """Y (m, l) (and whether it was 1-D), checked like the blocks: named text, NaN, inf, overflow, underflow;
    ``full`` also a constant response and two identical responses."""
    names = frame_names(Y)
    if names is None and getattr(Y, "ndim", None) == 1:
        label = series_name(Y)
        names = [label] if label is not None else None
    try:
        Y = check_array(Y, ensure_2d=False, dtype=np.float64, input_name=name, ensure_all_finite=False)
    except (ValueError, TypeError) as exc:
        raise_if_non_numeric(Y, name, names, cause=exc)
        raise
    one_d = Y.ndim == 1
    Y2 = Y.reshape(-1, 1) if one_d else Y
    check_columns(Y2, name, names, single=one_d, constant=full, duplicates=full)
    return Y2, one_d


class P3LS(TransformerMixin, RegressorMixin, MultiOutputMixin, BaseEstimator):
    """Vertically federated PLS with removable masks (paper Algorithms 2, 3, 5; Algorithm 4 in :meth:`relevance`).

    Its ``fit``, ``predict``, ``transform`` and ``score`` take a list of column blocks, one per party (the
    tags say it takes no 2-D array); :class:`P3LSRegressor` is the same protocol behind scikit-learn's
    X-and-y API (one table X and a column split), for pipelines, cross-validation and ``check_estimator``.

    Parameters
    ----------
    n_components : int
        k (or the largest k searched when ``fit`` gets ``validation``).
    label_holder : int
        Index of the party that holds Y (the label contributor); default the last.
    row_mask_block_size : int or None
        None: dense Haar m x m row masks (A, M_r, M_new). An int b: FedSVD's block-diagonal
        generator with b x b blocks (cheaper; mixes rows only within blocks).
    secure_aggregation : bool
        If True the CSP receives only sums of the X_i' (pairwise additive masks agreed between
        the parties cancel in the sum, as in FedSVD); the paper sends each X_i' in the clear.
    party_names : list of str or None
        Names shown in the message log (default "party 1", ...).
    random_state : int, Generator or None
        Where the masks and keys come from. None (default): fresh OS entropy for every role (each
        draws from its own :func:`engine.privacy.noise.fresh_generator`); nothing about it is kept.
        Anything else fixes the masks (tests and benchmarks only: a mask drawn from a seed someone
        knows can be regenerated and removed, so it hides nothing); ``mask_seed_known_`` then says so.
    transport : {"local", "flower"}
        "local": the roles are objects in this process. "flower": the same roles and messages over Flower
        (:mod:`engine.methods.p3ls.flower_roles`): the server in the ServerApp, each data holder and the
        trusted authority a ClientApp on its own SuperNode process reading only its own data; the TA's keys
        and the pairwise seeds are end-to-end encrypted between the two parties. ``fit`` and ``predict``
        only (``validation``, ``transform`` and ``relevance`` are local-transport only).
    superlink : str or None
        With "flower": None starts a SuperLink and one SuperNode per party on 127.0.0.1 for each call and
        stops them afterwards; "host:port" uses a running federation started in this process
        (:func:`engine.federation.flower.driver.register`).

    Fitted attributes
    -----------------
    authority_, holders_ (list of :class:`DataHolder`), server_ (:class:`Server`), log_
    (:class:`MessageLog`), n_components_ (chosen k), validation_scores_ (per k, or None),
    block_sizes_, column_slices_, mask_seed_known_ (True when ``random_state`` fixed the masks),
    message_log_ (the log; over Flower rebuilt from the messages the ServerApp received and sent),
    wire_bytes_ (bytes of those messages on the wire, measured; None for "local"), transport_seconds_
    (wall time of the fit's protocol run).
    Convenience views assembled from what the parties hold (no single party holds them):
    x_weights_ (n, k) = [W_1; ...; W_g], x_loadings_ (n, k), x_scores_ (m, k) (T, shared),
    y_loadings_ (l, k) and y_scores_ (m, k) (LC), block_coefs_ (list of B_i, n_i x l,
    standardised units), B_ (n, l) stacked, coef_ (l, n) and intercept_ (l,) in original units
    like scikit-learn's PLSRegression.
    """

    def __init__(self, n_components: int = 2, *, label_holder: int = -1, row_mask_block_size: int | None = None,
                 secure_aggregation: bool = False, party_names=None, random_state=None, transport: str = "local",
                 superlink: str | None = None):
        self.n_components = n_components
        self.label_holder = label_holder
        self.row_mask_block_size = row_mask_block_size
        self.secure_aggregation = secure_aggregation
        self.party_names = party_names
        self.random_state = random_state
        self.transport = transport
        self.superlink = superlink

    _parameter_constraints: ClassVar[dict] = {**P3LS_PARAMETER_CONSTRAINTS,
                                              "transport": [StrOptions({"local", "flower"})],
                                              "superlink": [str, None]}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False  # a list of blocks, not one 2-D array: see P3LSRegressor
        return tags

    # ----------------------------------------------------------------------------- helpers
    @property
    def label_contributor_(self) -> DataHolder:
        """The data holder that contributes the labels."""
        return self.holders_[self._lc_index]

    def _local_only(self, what: str) -> None:
        if self.transport == "flower":
            raise NotImplementedError(f"{what} runs on the local transport only (transport='flower' has fit and "
                                      "predict)")

    def _send(self, sender, receiver, name, value, what, phase, step):
        return self.log_.send(sender, receiver, name, value, what, phase=phase, step=step)

    def _secure_sum(self, per_party: list[tuple[DataHolder, str, np.ndarray, str]], phase: str, step: str,
                    result: str) -> np.ndarray:
        """Send each party's matrix to the CSP (optionally under pairwise cancelling masks) and sum there."""
        if self.secure_aggregation and len(per_party) > 1:
            seeds_out: dict[str, dict] = {h.name: {} for h, *_ in per_party}
            seeds_in: dict[str, dict] = {h.name: {} for h, *_ in per_party}
            for a in range(len(per_party)):
                for b in range(a + 1, len(per_party)):
                    ha, hb = per_party[a][0], per_party[b][0]
                    seed = int(self._rng.integers(0, 2**63 - 1))
                    seeds_out[ha.name][hb.name] = seed
                    self._send(ha, hb, f"s_{ha.index}{hb.index}", np.int64(seed),
                               "pairwise seed for additive masks that cancel in the sum", phase, "secure aggregation")
                    seeds_in[hb.name][ha.name] = seed
        names = []
        for holder, name, value, what in per_party:
            if self.secure_aggregation and len(per_party) > 1:
                value = value + holder.pairwise_masks(value.shape, seeds_out[holder.name], seeds_in[holder.name])
                name, what = f"{name} + pairwise masks", f"{what}, hidden by pairwise masks (only the sum is readable)"
            self._send(holder, self.server_, name, value, what, phase, step)
            names.append(name)
        return self.server_.aggregate(names, result)

    # ----------------------------------------------------------------------------- training
    def fit(self, blocks, Y, validation=None):
        """Run the protocol: keys, masked training (Alg. 2), recovery (Alg. 3).

        blocks: list of g arrays (m, n_i), the parties' columns for the same rows; Y (m, l) or (m,)
        held by party ``label_holder``. validation: optional (val_blocks, Y_val); then the LC picks
        k in 1..n_components on it from the validation scores (Alg. 5) and its own Q, and only the
        chosen model's B_i are released (spec Sec. 3.4 caveat 1, mitigation).
        """
        self._validate_params()
        blocks = _check_blocks(blocks, full=True)
        Y2, self._y_was_1d = _check_response(Y)
        names = self._check_fit_inputs(blocks, Y2)
        self.validation_scores_ = None
        if self.transport == "flower":
            if validation is not None:
                raise NotImplementedError("validation (choosing k) runs on the local transport only")
            from engine.methods.p3ls.flower_roles import fit_over_flower

            fit_over_flower(self, blocks, Y2, names, self._role_seeds(len(blocks)))
            self.message_log_, self.n_components_ = self.log_, int(self.n_components)
            self._assemble_views()
            return self
        t0 = time.perf_counter()
        self._make_roles(blocks, Y2, names)
        self._masked_training(blocks[0].shape[0], Y2.shape[1])
        self._recovery(Y2.shape[1])
        k = int(self.n_components)
        if validation is not None:
            k = self._choose_k(validation)
        for h in self.holders_:
            self._send(self.server_, h, f"[B_{h.index}]", self.server_.masked_coefficients(h.index),
                       f"C_{h.index} B_{h.index} N", "recovery", "Alg. 3 step 4")
            h.unmask_coefficients()
        self.n_components_ = k
        self._assemble_views()
        self.message_log_, self.wire_bytes_, self.transport_seconds_ = self.log_, None, time.perf_counter() - t0
        return self

    def _role_seeds(self, g: int) -> list:
        """The roles' seeds for the Flower transport, drawn exactly as :meth:`_make_roles` draws them (TA first,
        then each holder); None each (fresh OS entropy drawn by the party itself) when random_state is None."""
        self.mask_seed_known_ = self.random_state is not None and not isinstance(self.random_state, FreshGenerator)
        if not self.mask_seed_known_:
            self._rng = self.random_state if self.random_state is not None else fresh_generator()
            return [None] * (g + 1)
        self._rng = as_generator(self.random_state)
        return [int(s) for s in self._rng.integers(0, 2**63 - 1, size=g + 1)]

    def _check_fit_inputs(self, blocks: list[np.ndarray], Y2: np.ndarray) -> list[str]:
        """The rules that tie parameters to the data (rows, k <= min(m, n), the LC and the names among the
        parties; the types are ``_parameter_constraints``); returns the party names."""
        m, g = blocks[0].shape[0], len(blocks)
        if Y2.shape[0] != m:
            raise ValueError(f"Y has {Y2.shape[0]} rows but the blocks have {m}")
        self.block_sizes_ = [b.shape[1] for b in blocks]
        n = sum(self.block_sizes_)
        k = int(self.n_components)
        if not 1 <= k <= min(m, n):
            raise ValueError(f"n_components must be in 1..min(rows, columns) = 1..{min(m, n)}, got {self.n_components}")
        lc = self.label_holder if self.label_holder >= 0 else g + self.label_holder
        if not 0 <= lc < g:
            raise ValueError(f"label_holder {self.label_holder} is not one of the {g} parties")
        self._lc_index = lc
        names = list(self.party_names) if self.party_names is not None else [f"party {i + 1}" for i in range(g)]
        if len(names) != g:
            raise ValueError(f"{len(names)} party names for {g} blocks")
        bounds = np.cumsum([0, *self.block_sizes_])
        self.column_slices_ = [slice(int(bounds[i]), int(bounds[i + 1])) for i in range(g)]
        return names

    def _make_roles(self, blocks: list[np.ndarray], Y2: np.ndarray, names: list[str]) -> None:
        """The trusted authority, the server and one data holder per block, each with its own generator."""
        g, lc = len(blocks), self._lc_index
        # Masks and keys: a mask drawn from a seed anyone knows hides nothing, so by default every role
        # draws from its own fresh OS-entropy generator; a fixed random_state (tests, benchmarks) is recorded.
        self.mask_seed_known_ = self.random_state is not None and not isinstance(self.random_state, FreshGenerator)
        if self.mask_seed_known_:
            self._rng = as_generator(self.random_state)
            role_rngs: list[int] | list[FreshGenerator] = [int(s) for s in self._rng.integers(0, 2**63 - 1, size=g + 1)]
        else:
            self._rng = self.random_state if self.random_state is not None else fresh_generator()
            role_rngs = spawn_fresh(g + 1)
        self.log_ = MessageLog()
        self.authority_ = TrustedAuthority(role_rngs[0], self.row_mask_block_size)
        self.server_ = Server()
        self.holders_ = [
            DataHolder(names[i] + (" (LC)" if i == lc else ""), i + 1, blocks[i], Y2 if i == lc else None,
                       random_state=role_rngs[i + 1])
            for i in range(g)
        ]

    def _masked_training(self, m: int, l: int) -> None:
        """Algorithm 2: keys, masked data to the CSP (summed there), Algorithm 1 on the masked data."""
        ta, csp, holders, LC = self.authority_, self.server_, self.holders_, self.label_contributor_
        n = sum(self.block_sizes_)
        # Step 1: keys
        A, H_blocks, G = ta.training_keys(m, self.block_sizes_, l)
        for h in holders:
            self._send(ta, h, "A", A, "row mask (random orthogonal)", "keys", "Alg. 2 step 1")
            self._send(ta, h, f"H_{h.index}", H_blocks[h.index - 1],
                       f"its rows of the column mask H ({h.n_columns} x {n})", "keys", "Alg. 2 step 1")
        self._send(ta, LC, "G", G, "Y-column mask (random orthogonal)", "keys", "Alg. 2 step 1")
        # Steps 2-4: masked data to the CSP, summed there
        self._secure_sum([(h, f"X_{h.index}'", h.masked_block(),
                           f"A X_{h.index} H_{h.index}: masked block, full width n") for h in holders],
                         "training", "Alg. 2 steps 2, 4", "X'")
        self._send(LC, csp, "Y'", LC.masked_labels(), "A Y G: masked responses", "training", "Alg. 2 step 3")
        # Step 5: Algorithm 1 on masked data
        csp.fit_masked(int(self.n_components))

    def _recovery(self, l: int) -> None:
        """Algorithm 3: recovery of T, W_i, P_i, Q (B_i after the choice of k)."""
        ta, csp, holders, LC = self.authority_, self.server_, self.holders_, self.label_contributor_
        N = ta.recovery_key(l)
        for h in holders:
            self._send(ta, h, "N", N, "random invertible l x l key for B_i", "recovery", "Alg. 3 step 1")
        for h in holders:
            self._send(h, csp, f"[H_{h.index}]", h.masked_column_key(), f"C_{h.index} H_{h.index}", "recovery",
                       "Alg. 3 step 2")
        self._send(LC, csp, "[G^T]", LC.masked_label_key(), "G^T N", "recovery", "Alg. 3 step 3")
        T_masked = csp._get("T'")
        for h in holders:
            self._send(csp, h, "T'", T_masked, "A T: masked shared scores", "recovery", "Alg. 3 step 4")
            W_m, P_m = csp.masked_block_components(h.index)
            self._send(csp, h, f"[W_{h.index}]", W_m, f"C_{h.index} W_{h.index}", "recovery", "Alg. 3 step 4")
            self._send(csp, h, f"[P_{h.index}]", P_m, f"C_{h.index} P_{h.index}", "recovery", "Alg. 3 step 4")
        self._send(csp, LC, "Q'", csp._get("Q'"), "G^T Q: masked Y-loadings", "recovery", "Alg. 3 step 4")
        self._send(csp, LC, "U'", csp._get("U'"), "A U: masked Y-scores", "recovery", "Alg. 3 step 4")
        for h in holders:
            h.unmask_scores()
            h.unmask_block_components()
        LC.unmask_label_components()

    def _choose_k(self, validation) -> int:
        """The LC's choice of k on validation rows (nested models); every role then keeps k components."""
        csp, holders, LC = self.server_, self.holders_, self.label_contributor_
        val_blocks, Y_val = validation
        self._scores_protocol(val_blocks, phase="selection")
        k_best, self.validation_scores_ = LC.choose_n_components(Y_val)
        for role in [csp, *[h for h in holders if h is not LC]]:
            self._send(LC, role, "k*", np.int64(k_best), "number of components chosen on validation rows",
                       "selection", "LC chooses k")
        csp.truncate(k_best)
        for h in holders:
            h.truncate(k_best)
        return k_best

    def _assemble_views(self) -> None:
        hs, LC = self.holders_, self.label_contributor_
        self.x_weights_ = np.vstack([h._get(f"W_{h.index}") for h in hs])
        self.x_loadings_ = np.vstack([h._get(f"P_{h.index}") for h in hs])
        self.block_coefs_ = [h._get(f"B_{h.index}") for h in hs]
        self.B_ = np.vstack(self.block_coefs_)
        self.x_scores_ = LC._get("T")
        self.y_loadings_, self.y_scores_ = LC._get("Q"), LC._get("U")
        x_scale = np.concatenate([h._x_scale for h in hs])
        self.x_mean_ = np.concatenate([h._x_mean for h in hs])
        self.x_scale_ = x_scale
        self.y_mean_, self.y_scale_ = LC._y_mean, LC._y_scale
        self.coef_ = (self.B_ * LC._y_scale).T / x_scale
        self.intercept_ = LC._y_mean.copy()
        self.n_features_in_ = int(sum(self.block_sizes_))

    # ----------------------------------------------------------------------------- inference
    def _inference_keys(self, m_new: int, phase: str) -> None:
        M = self.authority_.inference_key(m_new)
        for h in self.holders_:
            self._send(self.authority_, h, "M_new", M, "query mask (random orthogonal)", phase, "Alg. 5 step 1")

    def _scores_protocol(self, blocks, phase: str, with_prediction: bool = False):
        """Algorithm 5: T_new to every party; with_prediction also Ŷ to the LC."""
        check_is_fitted(self, "server_")
        blocks = _check_blocks(blocks, min_rows=1)  # one new row is a valid query (then M_new is +-1: H_i masks it)
        if len(blocks) != len(self.holders_):
            raise ValueError(f"{len(blocks)} blocks for {len(self.holders_)} parties")
        m_new = blocks[0].shape[0]
        self._inference_keys(m_new, phase)
        x_parts, y_parts = [], []
        for h, X_new in zip(self.holders_, blocks, strict=False):
            masked_y, masked_x = h.inference_messages(X_new, with_prediction)
            x_parts.append((h, f"X_{h.index},new'", masked_x, f"M_new X_{h.index},new H_{h.index}"))
            if with_prediction:
                y_parts.append((h, f"M Ŷ_{h.index}", masked_y,
                                f"M_new X_{h.index},new B_{h.index}: masked partial prediction"))
        csp, LC = self.server_, self.label_contributor_
        self._secure_sum(x_parts, phase, "Alg. 5 steps 2-3", "X_new'")
        T_masked = csp.new_scores()
        for h in self.holders_:
            self._send(csp, h, "T_new'", T_masked, "M_new T_new: masked new scores", phase, "Alg. 5 step 3")
            h.unmask_new_scores()
        if with_prediction:
            Y_masked = self._secure_sum(y_parts, phase, "Alg. 5 steps 2-3", "Ŷ'")
            self._send(csp, LC, "Ŷ'", Y_masked, "M_new Ŷ: masked prediction", phase, "Alg. 5 step 3")
            return LC.unmask_prediction()
        return LC._get("T_new")

    def predict(self, blocks) -> np.ndarray:
        """Predictions for new rows under the protocol (Alg. 5), in original units, as the LC obtains them.

        blocks: list of (m_new, n_i), each party's new columns. Returns (m_new, l), or (m_new,) for 1-D Y.
        """
        if self.transport == "flower":
            from engine.methods.p3ls.flower_roles import predict_over_flower

            check_is_fitted(self, "server_")
            blocks = _check_blocks(blocks, min_rows=1)
            if len(blocks) != len(self.holders_):
                raise ValueError(f"{len(blocks)} blocks for {len(self.holders_)} parties")
            for h, b in zip(self.holders_, blocks, strict=False):  # before any process starts (each party checks again)
                if b.shape[1] != h.n_columns:
                    raise ValueError(f"{h.name}: new block has {b.shape[1]} columns, training had {h.n_columns}")
            Y = predict_over_flower(self, blocks)
        else:
            Y = self._scores_protocol(blocks, phase="inference", with_prediction=True)
        return Y[:, 0] if self._y_was_1d else Y

    def transform(self, blocks) -> np.ndarray:
        """Shared scores T_new (m_new, k) of new rows, as every party obtains them (Alg. 5)."""
        self._local_only("transform")
        return self._scores_protocol(blocks, phase="inference", with_prediction=False)

    # ----------------------------------------------------------------------------- relevance
    def relevance(self, blocks=None, Y=None) -> Relevance:
        """Algorithm 4 (and eqs. 16-17): each party's share of explained X-variance and its
        predictive relevance R2_XiY = 1 - SS(Y - X_i B_i) / SS(Y), through masked messages.

        Without arguments on the training rows; with (blocks, Y) on new rows, standardised with the
        training statistics and SS(Y) taken around the new rows' mean.
        """
        check_is_fitted(self, "server_")
        self._local_only("relevance")
        ta, csp, LC, hs = self.authority_, self.server_, self.label_contributor_, self.holders_
        if (blocks is None) != (Y is None):
            raise ValueError("give both blocks and Y, or neither (training rows)")
        if blocks is not None:
            blocks = _check_blocks(blocks)
            if len(blocks) != len(hs):
                raise ValueError(f"{len(blocks)} blocks for {len(hs)} parties")
        m_rows = (blocks[0].shape[0] if blocks is not None else LC._Z.shape[0])
        l = LC._Zy.shape[1]
        M_r, N_r = ta.relevance_keys(m_rows, l)
        phase, step = "relevance", "Alg. 4"
        for h in hs:
            self._send(ta, h, "M_r", M_r, "row mask for relevance (orthogonal)", phase, step + " step 1")
            self._send(ta, h, "N_r", N_r, "column mask for relevance (orthogonal)", phase, step + " step 1")
        for i, h in enumerate(hs):
            msg = h.relevance_message(None if blocks is None else blocks[i])
            self._send(h, csp, f"[Ŷ_{h.index}]_r", msg, f"M_r X_{h.index} B_{h.index} N_r", phase, step + " step 2")
        masked_y, ss_y = LC.relevance_label_message(Y)
        self._send(LC, csp, "[Y]_r", masked_y, "M_r Y N_r", phase, step + " step 2")
        rows = []
        n_total = int(sum(self.block_sizes_))
        for h in hs:
            if h is not LC:
                self._send(LC, h, "SS(Y)", np.float64(ss_y), "total sum of squares of Y (a published scalar)",
                           phase, step + " step 4")
            ss = self._send(csp, h, f"SS_{h.index}", np.float64(csp.residual_sum_of_squares(h.index)),
                            f"SS(Y - X_{h.index} B_{h.index})", phase, step + " step 3")
            share, block_share = h.explained_x_share(n_total)
            rows.append({"party": h.name, "label_contributor": h.is_label_contributor, "n_columns": h.n_columns,
                         "r2_x": share, "r2_x_block": block_share, "r2_xy": 1.0 - float(ss) / ss_y})
        table = pd.DataFrame(rows)
        return Relevance(table, LC.explained_y(), float(table["r2_x"].sum()),
                         "training" if blocks is None else "new rows")

    # ----------------------------------------------------------------------------- audit
    def audit(self) -> PLSComponents:
        """Unmasked full components from the TA's keys and the CSP's masked components, oriented.

        Simulation-only auditor: no role in the protocol holds H, G and A together with W', P', ...
        Used to check the masked-space relations (spec Sec. 6 item 4) and R, which no party receives.
        """
        check_is_fitted(self, "server_")
        ta, csp = self.authority_, self.server_
        A, H, G = ta._get("A"), ta._get("H"), ta._get("G")
        signs = self.label_contributor_._get("signs")
        W, P, R = (H @ csp._get(x) * signs for x in ("W'", "P'", "R'"))
        Q = G @ csp._get("Q'") * signs
        T, U = A.left_t(csp._get("T'")) * signs, A.left_t(csp._get("U'")) * signs
        return PLSComponents(W, T, U, P, Q, R, H @ csp._get("B'") @ G.T)

    def holdings(self) -> pd.DataFrame:
        """What every role holds at this point (name and shape)."""
        rows = []
        for role in [self.authority_, *self.holders_, self.server_]:
            for name, value in role._holdings.items():
                shape = getattr(value, "shape", ())
                rows.append({"role": role.name, "holds": name,
                             "shape": " x ".join(map(str, shape)) if shape else "scalar"})
        return pd.DataFrame(rows)
