"""The P3LS roles (trusted authority, data holders, server) of Algorithms 2-5.

Each role keeps what it received or computed under a name and nothing else, so a test can ask what a party
holds. Messages between roles go through :class:`engine.federation.messages.MessageLog` (``send``). Written
by hand because the protocol *is* the paper; the linear algebra is scipy's.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy import linalg

from engine.methods.p3ls.masks import OrthogonalMask, haar_orthogonal, random_invertible
from engine.methods.p3ls.pls import _as_2d_response, component_signs, rotations, standardise_columns, svd_pls
from engine.privacy import as_generator

__all__ = ["DataHolder", "ProtocolError", "Role", "Server", "TrustedAuthority"]


class ProtocolError(RuntimeError):
    """A role was asked to use something it does not hold (a bug in the protocol, not in the data)."""


class Role:
    """A protocol participant. It keeps what it received or computed under a name and nothing else."""

    def __init__(self, name: str):
        self.name = name
        # heterogeneous: arrays, masks (OrthogonalMask), signs; each name's type is fixed by the protocol
        self._holdings: dict[str, Any] = {}

    def _receive(self, name: str, value) -> None:
        self._holdings[name] = value

    def _keep(self, name: str, value):
        self._holdings[name] = value
        return value

    def _get(self, name: str):
        try:
            return self._holdings[name]
        except KeyError:
            raise ProtocolError(f"{self.name} does not hold {name!r}") from None

    def holds(self) -> list[str]:
        """Names of everything this role holds."""
        return list(self._holdings)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, holds={self.holds()})"


class TrustedAuthority(Role):
    """Makes every key (masks); never sees data, masked or not."""

    def __init__(self, random_state=None, row_mask_block_size: int | None = None, name: str = "TA"):
        super().__init__(name)
        self._rng = as_generator(random_state)
        self.row_mask_block_size = row_mask_block_size

    def _row_mask(self, size: int) -> OrthogonalMask:
        return OrthogonalMask.random(size, self._rng, self.row_mask_block_size)

    def training_keys(self, m: int, column_sizes: list[int], l: int):
        """A (m x m row mask), the row blocks H_i of H (n x n), G (l x l). Algorithm 2 step 1."""
        n = int(sum(column_sizes))
        A = self._keep("A", self._row_mask(m))
        H = self._keep("H", haar_orthogonal(n, self._rng))
        G = self._keep("G", haar_orthogonal(l, self._rng))
        bounds = np.cumsum([0, *column_sizes])
        H_blocks = [H[bounds[i]:bounds[i + 1]] for i in range(len(column_sizes))]
        return A, H_blocks, G

    def recovery_key(self, l: int) -> np.ndarray:
        """N (l x l, random invertible) for the recovery of B_i (Algorithm 3 step 1)."""
        return self._keep("N", random_invertible(l, self._rng))

    def relevance_keys(self, m: int, l: int):
        """Orthogonal M_r (m x m) and N_r (l x l) (Algorithm 4 step 1)."""
        return self._keep("M_r", self._row_mask(m)), self._keep("N_r", haar_orthogonal(l, self._rng))

    def inference_key(self, m_new: int) -> OrthogonalMask:
        """M_new for one query (Algorithm 5 step 1); orthogonal so that M_new^-1 = M_new^T."""
        return self._keep("M_new", self._row_mask(m_new))


class DataHolder(Role):
    """A company holding one block of columns for all rows; the label contributor also holds Y.

    It standardises its own columns (ddof=1) with its own training statistics and does every
    unmasking step itself. ``index`` is 1-based (party i holds X_i, H_i, C_i, W_i, P_i, B_i).
    """

    def __init__(self, name: str, index: int, X, Y=None, random_state=None):
        super().__init__(name)
        self.index = index
        self._rng = as_generator(random_state)
        Z, self._x_mean, self._x_scale = standardise_columns(X)
        self._keep(f"X_{index}", np.asarray(X, dtype=float))
        self._Z = Z
        self.n_columns = Z.shape[1]
        self.is_label_contributor = Y is not None
        if Y is not None:
            self._keep("Y", np.asarray(Y, dtype=float))
            self._Zy, self._y_mean, self._y_scale = standardise_columns(Y)

    # --- names of this party's items
    def _n(self, base: str) -> str:
        return f"{base}_{self.index}"

    def _standardise_new(self, X_new) -> np.ndarray:
        from sklearn.utils.validation import check_array  # here: a party's process imports no scikit-learn to start

        X_new = check_array(X_new, dtype=np.float64, input_name=f"X_{self.index} (new rows)")
        if X_new.shape[1] != self.n_columns:
            raise ValueError(f"{self.name}: new block has {X_new.shape[1]} columns, training had {self.n_columns}")
        return (X_new - self._x_mean) / self._x_scale

    def _standardise_new_y(self, Y_new) -> np.ndarray:
        Y2, _ = _as_2d_response(Y_new)
        return (Y2 - self._y_mean) / self._y_scale

    # --- Algorithm 2 (training)
    def masked_block(self) -> np.ndarray:
        """X_i' = A X_i H_i, m x n (full width n)."""
        return self._get("A").left(self._Z @ self._get(self._n("H")))

    def masked_labels(self) -> np.ndarray:
        """Y' = A Y G (label contributor only)."""
        return self._get("A").left(self._Zy @ self._get("G"))

    def pairwise_masks(self, shape, seeds_out: dict, seeds_in: dict) -> np.ndarray:
        """Sum of + PRG(seed) for seeds it made and - PRG(seed) for seeds it received: they cancel in the sum."""
        total = np.zeros(shape)
        for seed in seeds_out.values():
            total += np.random.default_rng(seed).standard_normal(shape)
        for seed in seeds_in.values():
            total -= np.random.default_rng(seed).standard_normal(shape)
        return total

    # --- Algorithm 3 (recovery)
    def masked_column_key(self) -> np.ndarray:
        """[H_i] = C_i H_i with C_i its own random invertible n_i x n_i matrix (never sent)."""
        C = self._keep(self._n("C"), random_invertible(self.n_columns, self._rng))
        return C @ self._get(self._n("H"))

    def masked_label_key(self) -> np.ndarray:
        """[G^T] = G^T N (label contributor only)."""
        return self._get("G").T @ self._get("N")

    def unmask_scores(self) -> None:
        """T = A^T T'; the sign convention is fixed here from the shared T (spec Sec. 1)."""
        T = self._get("A").left_t(self._get("T'"))
        signs = self._keep("signs", component_signs(T))
        self._keep("T", T * signs)

    def unmask_block_components(self) -> None:
        """W_i = C_i^-1 [W_i], P_i = C_i^-1 [P_i] (linear solves), oriented with the shared signs."""
        C, signs = self._get(self._n("C")), self._get("signs")
        self._keep(self._n("W"), linalg.solve(C, self._get(f"[W_{self.index}]")) * signs)
        self._keep(self._n("P"), linalg.solve(C, self._get(f"[P_{self.index}]")) * signs)

    def unmask_label_components(self) -> None:
        """Q = G Q', U = A^T U' (label contributor only)."""
        signs = self._get("signs")
        self._keep("Q", self._get("G") @ self._get("Q'") * signs)
        self._keep("U", self._get("A").left_t(self._get("U'")) * signs)

    def unmask_coefficients(self) -> None:
        """B_i = C_i^-1 [B_i] N^-1 (no sign needed: B does not depend on it)."""
        C_inv_B = linalg.solve(self._get(self._n("C")), self._get(f"[B_{self.index}]"))
        self._keep(self._n("B"), linalg.solve(self._get("N").T, C_inv_B.T).T)

    def truncate(self, k: int) -> None:
        """Keep the first k components (the models are nested)."""
        for name in ("T", self._n("W"), self._n("P"), "Q", "U"):
            if name in self._holdings:
                self._holdings[name] = self._holdings[name][:, :k]
        self._holdings["signs"] = self._holdings["signs"][:k]

    # --- Algorithm 5 (inference)
    def inference_messages(self, X_new, with_prediction: bool = True):
        """(M Ŷ_i, X_i,new' = M X_i,new H_i): partial prediction and masked new block."""
        M = self._get("M_new")
        Z_new = self._standardise_new(X_new)
        masked_x = M.left(Z_new @ self._get(self._n("H")))
        masked_y = M.left(Z_new @ self._get(self._n("B"))) if with_prediction else None
        return masked_y, masked_x

    def unmask_new_scores(self) -> np.ndarray:
        """T_new = M_new^T T' (oriented like T)."""
        return self._keep("T_new", self._get("M_new").left_t(self._get("T_new'")) * self._get("signs"))

    def unmask_prediction(self) -> np.ndarray:
        """Ŷ = M_new^T Ŷ', de-standardised with its own training statistics (label contributor only)."""
        Z_hat = self._get("M_new").left_t(self._get("Ŷ'"))
        return self._keep("Ŷ_new", Z_hat * self._y_scale + self._y_mean)

    # --- model selection by the LC (nested models, spec Sec. 3.4 caveat 1 mitigation)
    def choose_n_components(self, Y_val) -> tuple[int, np.ndarray]:
        """Validation R^2 (pooled over KPIs, original units) of every k from T_val and Q; best k."""
        from sklearn.metrics import r2_score

        T_val, Q = self._get("T_new"), self._get("Q")
        Y_val2, _ = _as_2d_response(Y_val)
        scores = np.array([
            r2_score(Y_val2, (T_val[:, :k] @ Q[:, :k].T) * self._y_scale + self._y_mean,
                     multioutput="variance_weighted")
            for k in range(1, Q.shape[1] + 1)
        ])
        return int(np.argmax(scores)) + 1, scores

    # --- Algorithm 4 (relevance)
    def relevance_message(self, X=None) -> np.ndarray:
        """M_r Ŷ_i N_r with Ŷ_i = X_i B_i (training rows unless X given)."""
        Z = self._Z if X is None else self._standardise_new(X)
        return self._get("M_r").left(Z @ self._get(self._n("B")) @ self._get("N_r"))

    def relevance_label_message(self, Y=None) -> tuple[np.ndarray, float]:
        """(M_r Y N_r, SS(Y - mean)) from the label contributor."""
        Zy = self._Zy if Y is None else self._standardise_new_y(Y)
        ss_y = float(np.sum((Zy - Zy.mean(axis=0)) ** 2))
        return self._get("M_r").left(Zy @ self._get("N_r")), ss_y

    def explained_x_share(self, n_total: int) -> tuple[float, float]:
        """Eq. 16, general form: SS(T P_i^T) / ((m-1) n); and the block-normalised variant / ((m-1) n_i)."""
        T, P = self._get("T"), self._get(self._n("P"))
        ss = float(np.sum((T * T).sum(axis=0) * (P * P).sum(axis=0)))
        m = T.shape[0]
        return ss / ((m - 1) * n_total), ss / ((m - 1) * self.n_columns)

    def explained_y(self) -> float:
        """Eq. 17, general form: SS(T Q^T) / ((m-1) l) (label contributor only)."""
        T, Q = self._get("T"), self._get("Q")
        return float(np.sum((T * T).sum(axis=0) * (Q * Q).sum(axis=0))) / ((T.shape[0] - 1) * Q.shape[0])


class Server(Role):
    """The computation service provider (CSP): sums masked data, runs Algorithm 1 on it, helps unmask."""

    def __init__(self, name: str = "CSP"):
        super().__init__(name)

    def aggregate(self, names: list[str], result: str) -> np.ndarray:
        """The sum of the held matrices ``names``, kept as ``result``."""
        return self._keep(result, sum(self._get(n) for n in names))

    def fit_masked(self, n_components: int) -> None:
        """Algorithm 1 on (X', Y') with no centring or scaling (A X is not column-centred)."""
        c = svd_pls(self._get("X'"), self._get("Y'"), n_components)
        for name, value in zip(("W'", "T'", "U'", "P'", "Q'", "R'", "B'"), (c.W, c.T, c.U, c.P, c.Q, c.R, c.B),
                               strict=True):
            self._keep(name, value)

    def truncate(self, k: int) -> None:
        """Keep the first k components of the masked results and recompute R' and B' from them."""
        for name in ("W'", "T'", "U'", "P'", "Q'"):
            self._holdings[name] = self._holdings[name][:, :k]
        R = self._keep("R'", rotations(self._get("W'"), self._get("P'")))
        self._keep("B'", R @ self._get("Q'").T)

    def masked_block_components(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        """[W_i] = C_i H_i W', [P_i] = C_i H_i P'."""
        CH = self._get(f"[H_{index}]")
        return CH @ self._get("W'"), CH @ self._get("P'")

    def masked_coefficients(self, index: int) -> np.ndarray:
        """[B_i] = C_i H_i B' G^T N."""
        return self._get(f"[H_{index}]") @ self._get("B'") @ self._get("[G^T]")

    def new_scores(self) -> np.ndarray:
        """T' = X_new' R' = M_new T_new."""
        return self._keep("T_new'", self._get("X_new'") @ self._get("R'"))

    def residual_sum_of_squares(self, index: int) -> float:
        """||M_r Y N_r - M_r Ŷ_i N_r||_F^2 = SS(Y - Ŷ_i) (the trace the paper gets by eigendecomposition)."""
        return float(np.sum((self._get("[Y]_r") - self._get(f"[Ŷ_{index}]_r")) ** 2))

