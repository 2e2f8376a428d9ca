"""Public pieces of the recommended strict edPLS: row-wise preprocessing, the projection, centre and bounds.

Everything here is computed from public inputs only: the declared chain, the channel count, ``X_public``
(spectra the owner declares public) and ``y_range``. No function in this module takes private rows.

- ``rowwise_chain(name, m, reference=None)``: a chemotools chain that fits nothing on data (``CHAIN_INFO``'s
  ``learns_from_data`` is False), plus "msc_public": chemotools' MSC against a reference spectrum declared
  public (``reference``; ``StrictEDPLS`` passes the mean of ``X_public``), so each row is corrected on its own.
  It is "fitted" on a public dummy row, so that no private row ever reaches ``fit``.
- ``chain_operator(chain, m)``: the matrix M (m, m) of the linear part after SNV (Savitzky-Golay filters
  and per-spectrum detrending are linear maps of the row): the transform of each basis row e_j.
- ``pca_basis(Z_public, d)``: the top-d principal axes of the preprocessed public spectra and their
  eigenvalues (the public variance profile used to choose the released dimension).
- ``spline_basis(m, d)``: a data-independent basis, cubic B-splines along the channel axis with d
  functions, orthonormalised (QR), so the projection has operator norm 1.
- ``data_free_x_bound(V, M, m, center)``: with SNV first every row has norm sqrt(m) (population std), so
  ||V'(M snv(x)) - c|| <= sqrt(m) ||V'M||_2 + ||c||: a bound that holds for ANY spectrum.

Written by hand: these are a few lines of linear algebra around chemotools and scipy (``BSpline``);
no library offers a public-only projection and bound for a DP release.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.interpolate
from chemotools.scatter import MultiplicativeScatterCorrection
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from engine.data.preprocess import CHAIN_INFO, flat_rows, make_chain

__all__ = ["MSC_PUBLIC", "chain_operator", "data_free_x_bound", "pca_basis", "rowwise_chain", "spline_basis"]

#: The chain step "MSC against a declared-public reference spectrum" (``rowwise_chain``'s ``reference``).
MSC_PUBLIC = "msc_public"


def chain_name(preprocessing) -> str:
    """The chain's one name: a string as given ("snv+sg1", "none"), a list or tuple of steps joined by '+'
    (["snv", "sg1"] -> "snv+sg1"); the release keeps the name, and ``rowwise_chain`` rebuilds it."""
    if isinstance(preprocessing, str):
        return preprocessing
    if isinstance(preprocessing, (list, tuple)) and preprocessing and all(isinstance(p, str) for p in preprocessing):
        return "+".join(p.strip() for p in preprocessing)
    raise ValueError(f"preprocessing must be a chain name or a list of step names, got {preprocessing!r}")


def _parts(name) -> list[str]:
    return [p.strip() for p in chain_name(name).split("+") if p.strip()]


def uses_reference(name) -> bool:
    """Whether the chain has the "msc_public" step (it then needs a declared-public reference spectrum)."""
    return MSC_PUBLIC in _parts(name)


def rowwise_chain(name: str, m: int, reference=None):
    """An sklearn Pipeline for a row-wise chain, fitted on a public dummy row (never on private data).

    Parameters
    ----------
    name : chain name, e.g. "snv+sg1", or a list of step names (every step must learn nothing from the data:
        one that learns from the rows, e.g. "msc" or "autoscale", is refused with a message naming it).
        "msc_public" (first step only): MSC against ``reference``.
    m : int, number of channels.
    reference : array (m,) or None, the declared-public reference spectrum of "msc_public" (raw scale).

    Returns
    -------
    fitted sklearn Pipeline (transform works on any (n, m) array).
    """
    parts = _parts(name)
    for i, part in enumerate(parts):
        if part == MSC_PUBLIC:
            if i:
                raise ValueError("preprocessing step 'msc_public' must come first: its reference is a raw spectrum")
            continue
        if part not in CHAIN_INFO or CHAIN_INFO[part]["learns_from_data"]:
            learned = CHAIN_INFO.get(part, {}).get("learned")
            raise ValueError(f"preprocessing step {part!r} is refused in strict mode: "
                             + (f"it learns the {learned} (private)" if learned else "it is not a known row-wise step")
                             + "; the strict fit takes only row-wise steps that learn nothing from the data "
                             "(e.g. 'snv', 'sg1', 'sg2', 'detrend', or 'msc_public': MSC against the mean of the "
                             "declared-public X_public)")
    if MSC_PUBLIC in parts:
        ref = None if reference is None else np.asarray(reference, dtype=float)
        if ref is None or ref.shape != (int(m),) or not np.isfinite(ref).all() or np.ptp(ref) == 0:
            raise ValueError("preprocessing step 'msc_public' needs a declared-public reference spectrum with "
                             f"{int(m)} finite, non-constant channels: give X_public (its mean is the reference)")
        rest = "+".join(p for p in parts if p != MSC_PUBLIC)
        chain = make_chain([(MSC_PUBLIC, MultiplicativeScatterCorrection(reference=ref))] + ([rest] if rest else []))
    else:
        chain = make_chain(chain_name(name))
    dummy = np.arange(int(m), dtype=float)[None, :] ** 2  # public and non-constant (SNV divides by its std)
    chain.fit(np.vstack([dummy, dummy[:, ::-1]]))
    # A flat spectrum has no shape: SNV would divide by a zero std and the filters would refuse the NaN.
    # It maps to the zero row (norm 0, inside every bound), still one row in, one row out. "Flat" is the one
    # definition of engine.data.preprocess.flat_rows (a spread that underflows counts: review N3).
    return Pipeline([("rowwise", FunctionTransformer(flat_rows_to_zero, kw_args={"chain": chain},
                                                     feature_names_out="one-to-one"))])


def flat_rows_to_zero(X, chain):
    """``chain.transform`` on the rows that vary; flat rows (``engine.data.preprocess.flat_rows``) map to zeros
    (row-wise, no data)."""
    X = np.asarray(X, dtype=float)
    flat = flat_rows(X) if X.size else np.zeros(X.shape[0], dtype=bool)
    if flat.all():
        return np.zeros_like(X)
    if not flat.any():
        return chain.transform(X)
    out = np.zeros((X.shape[0], chain.transform(X[~flat][:1]).shape[1]))
    out[~flat] = chain.transform(X[~flat])
    return out


def chain_operator(name: str, m: int) -> np.ndarray:
    """M (m, m), the linear map applied after SNV (identity when the chain is only SNV or none).

    Each step after "snv" must be linear in the row (Savitzky-Golay filters, detrend): checked on a
    random public pair (T(a + b) = T(a) + T(b) to 1e-8 relative).
    """
    parts = _parts(name)
    rest = [p for p in parts if p != "snv"]
    if "snv" in parts and parts[0] != "snv":
        raise ValueError("put 'snv' first in the chain for a data-free bound")
    if not rest or rest == ["none"]:
        return np.eye(int(m))
    tail = rowwise_chain("+".join(rest), m)
    M = tail.transform(np.eye(int(m))).T  # column j = T(e_j)
    a, b = np.random.default_rng(0).normal(size=(2, int(m)))
    lhs, rhs = tail.transform((a + b)[None])[0], M @ (a + b)
    if np.linalg.norm(lhs - rhs) > 1e-8 * max(1.0, float(np.linalg.norm(rhs))):
        raise ValueError(f"chain {name!r} is not linear after SNV: no data-free bound")
    return M


def pca_basis(Z_public: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-d principal axes of public preprocessed spectra.

    Parameters
    ----------
    Z_public : array (n_pub, m), preprocessed public spectra.
    d : int, number of axes (capped at min(n_pub - 1, m)).

    Returns
    -------
    V : array (m, d) orthonormal columns; eigenvalues : array (d,) (variance per axis, ddof 0);
    centre : array (m,), the public mean.
    """
    centre = Z_public.mean(axis=0)
    _, s, Vt = np.linalg.svd(Z_public - centre, full_matrices=False)
    d = int(min(d, Vt.shape[0]))
    return Vt[:d].T.copy(), (s[:d] ** 2) / Z_public.shape[0], centre


def spline_basis(m: int, d: int) -> np.ndarray:
    """d cubic B-splines on equally spaced knots along m channels, orthonormalised: V (m, d)."""
    m, d = int(m), int(d)
    if not 4 <= d <= m:
        raise ValueError(f"a cubic B-spline basis needs 4 <= d <= m, got d={d}, m={m}")
    k = 3
    inner = np.linspace(0.0, 1.0, d - k + 1)
    t = np.concatenate([[0.0] * k, inner, [1.0] * k])
    u = np.linspace(0.0, 1.0, m)
    B = scipy.interpolate.BSpline.design_matrix(u, t, k).toarray()
    Q, _ = np.linalg.qr(B)
    return Q


def data_free_x_bound(V: np.ndarray, M: np.ndarray, m: int, center: np.ndarray | None = None) -> float:
    """sqrt(m) ||V'M||_2 + ||center||: a bound on ||V'(M snv(x)) - center|| for every spectrum x."""
    op = float(np.linalg.norm(V.T @ M, 2))
    c = 0.0 if center is None else float(np.linalg.norm(center))
    return math.sqrt(int(m)) * op + c
