"""PCA-Gauss's constants and sensitivity bounds: the one table the estimator, tests and page read.

The L1 sensitivities of every Laplace release (spec Sec. 3, paper formulas and the spec's corrected ones), the
Lap-PCA noise scale, the paper's noise-free queries (Algorithm 1's W and S, Algorithm 3's class moments) and the
findings and caveats the page and ledger state. Written by hand: no library implements the paper.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.linalg import eigh

TASKS = ("unsupervised", "regression", "classification")
PCA_SOURCES = ("public", "laplace", "analyze_gauss", "nonprivate", "identity", "given")
MODES = ("paper", "strict")
#: The paper's grid for eps_PCA = alpha eps; alpha = 1.0 would leave nothing for the Gaussian.
ALPHA_GRID = tuple(round(0.1 * i, 1) for i in range(1, 10))

#: The spec's findings, stated plainly (the page shows them).
FINDINGS = {
    "lap_pca": (
        "Lap-PCA as printed adds Laplace noise of scale M·a²/(N·ε), but the covariance's L1 sensitivity "
        "(by the paper's own result) is M²·a²/N: the printed release is under-noised by a factor M, i.e. it is "
        "(M·ε)-DP, not ε-DP. Strict mode uses M²."
    ),
    "alg1_blob": (
        "The clustering recipe releases only the P noisy eigenvalues of the data's covariance (its W is non-private "
        "and never released): its synthetic data are one axis-aligned Gaussian blob, with no clusters and no link to "
        "the original features. Its silhouette tracks P, not ε."
    ),
    "alg3_centring": (
        "The classification recipe's class-covariance bound P²a²/N_C ignores the re-centring with the class mean and "
        "fails for P ≤ 3; its class counts are used unprotected. Strict mode releases noisy counts, sums and second "
        "moments."
    ),
}


#: What the ledger says when an input treated as public was not (each makes the fit "not proven").
CAVEATS = {
    "bounds_data": "not proven: the bounds and centre were read off the private data (declare public bounds)",
    "y_bounds_data": "not proven: the bounds of y were read off the private data (declare public bounds of y)",
    "labels_data": "not proven: the label set was read from the private labels (declare the label set public)",
    "public_undeclared": "not proven: the 'public' rows X_public were not declared public (they are rows of the "
                         "private upload)",
    "paper_scaling": "not proven: centre and scale read off the private training data (paper-faithful mode)",
}
#: The neighbouring relation, as the page and the release state it.
N_PUBLIC_NOTE = ("Neighbouring data sets replace one record (bounded DP, as in the paper): the number of private "
                 "training rows N is the same in both and is treated as public.")


# --------------------------------------------------------------------------------------------
# Sensitivities (L1 unless said otherwise), one function so tests and the page read one table.
# --------------------------------------------------------------------------------------------
def sensitivities(task: str, P: int, N: int, *, rule: str = "paper", identity_dim: int | None = None,
                  class_counts=None, a: float = 1.0, nonprivate_w: bool = False) -> dict:
    """The L1 sensitivities of every Laplace release of one PCA-Gauss fit (spec Sec. 3).

    Parameters
    ----------
    task : "unsupervised" | "regression" | "classification".
    P : int, released dimension (for ``identity_dim=M`` the data dimension M).
    N : int, number of private training records (public under bounded DP).
    rule : "paper" (the paper's formulas), "tight" (spec's corrected / centring-safe bounds, paper
        pipeline) or "strict" (strict-mode pipeline: uncentred sums about a public centre, noisy counts).
    identity_dim : None for normalised PCA features x~ = W'x/sqrt(M) (||x~||_2 <= a); M for Liu's
        full-dimensional baseline (x in [-a, a]^M, no normalisation).
    class_counts : array (L,) of class sizes N_C (classification with rule "paper"/"tight").
    nonprivate_w : Algorithm 1 (W from the same data): only the eigenvalues are the query.

    Returns
    -------
    dict name -> sensitivity (floats, or arrays of shape (L,) per class for "paper"/"tight").
    """
    if rule not in ("paper", "tight", "strict"):
        raise ValueError(f"rule must be 'paper', 'tight' or 'strict', got {rule!r}")
    a2 = a * a
    if identity_dim is None:
        d, l1 = P, math.sqrt(P) * a             # ||x~||_1 <= sqrt(P) ||x~||_2 <= sqrt(P) a
        block_paper = P * P * a2
        block_tight = min(P * P, 2 * P) * a2    # ||x~x~' - x'x'||_1 <= 2 ||x~||_1^2, and <= P^2 a^2 (box)
        mean_paper = 2 * P * a
    else:
        d, l1 = identity_dim, identity_dim * a  # box [-a, a]^M: ||x||_1 <= M a
        block_paper = block_tight = d * d * a2  # Prop. 3
        mean_paper = 2 * d * a
    out: dict = {}
    if task == "unsupervised" and nonprivate_w:
        out["eigenvalues"] = (P * a2 if rule == "paper" else min(P, 2) * a2) / N  # Thm 4 / Lidskii-Mirsky
        return out
    if task in ("unsupervised", "regression"):
        with_y = task == "regression"
        if rule == "paper":
            out["second_moment"] = (block_paper + (4 * d * a2 + a2 if with_y else 0.0)) / N  # Thm 5 / Prop 3-4
        else:
            out["second_moment"] = (block_tight + (4 * l1 * a + a2 if with_y else 0.0)) / N
        if rule == "strict":
            out["mean"] = 2 * (l1 + (a if with_y else 0.0)) / N
        return out
    if task != "classification":
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if rule == "strict":
        # Replace-one may move a record between classes: counts change by 1 in two classes (L1 = 2), the
        # per-class sums by x and x' (<= 2 l1), the second moments by xx' and x'x'' (<= 2 l1^2 >= block).
        out["counts"] = 2.0
        out["class_sums"] = 2 * l1
        out["class_second_moments"] = max(block_tight, 2 * l1 * l1)
        return out
    counts = np.asarray(class_counts, dtype=float)
    if rule == "paper":
        out["class_mean"] = mean_paper / counts                  # Thm 6
        out["class_covariance"] = block_paper / counts           # Thm 6 (fails for P <= 3, spec 9.2)
    else:
        out["class_mean"] = 2 * l1 / counts
        out["class_covariance"] = np.maximum(block_tight, 6 * l1 * l1 + 4 * l1 * l1 / counts) / counts
    return out


def lap_pca_noise_scale(M: int, N: int, epsilon: float, rule: str = "M2", a: float = 1.0) -> float:
    """Laplace scale of Lap-PCA: M a^2/(N eps) as printed ("M") or M^2 a^2/(N eps) (Prop. 3, "M2")."""
    if rule not in ("M", "M2"):
        raise ValueError("rule must be 'M' (as printed) or 'M2' (Prop. 3)")
    return (M if rule == "M" else M * M) * a * a / (N * epsilon)


def top_eigenvectors(C: np.ndarray, P: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-P eigenpairs of the symmetric part of C (largest first). Returns (values (P,), vectors (M, P))."""
    C = np.asarray(C, dtype=float)
    M = C.shape[0]
    vals, vecs = eigh((C + C.T) / 2.0, subset_by_index=[M - P, M - 1])
    order = np.argsort(vals)[::-1]
    vecs = vecs[:, order]
    # Deterministic sign (largest |entry| positive) so that fits are comparable across runs.
    signs = np.sign(vecs[np.argmax(np.abs(vecs), axis=0), np.arange(P)])
    signs[signs == 0] = 1.0
    return vals[order], vecs * signs


def alg1_release_query(X_centred: np.ndarray, P: int) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1's query without noise: W (M, P) and S = (1/N) Xt Xt' with Xt = W'X/sqrt(M) (P, P).

    X_centred : array (N, M), rows are records (sklearn layout), already centred and in [-a, a].
    S equals diag(top-P eigenvalues of X'X)/(M N) (spec 8.1).
    """
    X = np.asarray(X_centred, dtype=float)
    N, M = X.shape
    _, W = top_eigenvectors(X.T @ X, P)
    Z = X @ W / math.sqrt(M)
    return W, Z.T @ Z / N


def alg3_class_moments(Z_class: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 3's per-class query without noise: mean mu_C (P,) and S_C = (1/N_C)(Z-mu)'(Z-mu) (P, P)."""
    Z = np.asarray(Z_class, dtype=float)
    mu = Z.mean(axis=0)
    D = Z - mu
    return mu, D.T @ D / Z.shape[0]

