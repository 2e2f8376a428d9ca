"""PCA-Gauss page wording computed from the released model only (no private rows)."""
from __future__ import annotations

import numpy as np


def degenerate_note(model, x_col: str, y_col: str, columns: list) -> str | None:
    """Why the synthetic scatter collapses to a line (or a point), from the released covariance only: the noisy
    covariance was not positive semi-definite and its projection onto the PSD cone (negative eigenvalues set to
    0) left the two plotted columns (nearly) dependent. None when the drawn pair is not degenerate."""
    cov = getattr(model, "covariance_", None)
    if cov is None or x_col == y_col or x_col not in columns or y_col not in columns:
        return None
    cov = np.asarray(cov, dtype=float)
    i, j = columns.index(x_col), columns.index(y_col)
    if cov.ndim != 2 or max(i, j) >= cov.shape[0]:
        return None
    vals = np.linalg.eigvalsh(cov[np.ix_([i, j], [i, j])])
    if vals[-1] <= 0:
        return f"The synthetic rows do not vary along {x_col} and {y_col}: the released covariance is 0 there."
    if vals[0] > 1e-3 * vals[-1]:
        return None
    n_cut = int(np.sum(np.linalg.eigvalsh((cov + cov.T) / 2) <= 1e-12 * max(float(np.abs(cov).max()), 1e-300)))
    why = (f"the noisy covariance had negative eigenvalues (smallest {model.min_eig_before_fix_:.3g}) and its "
           f"projection onto the positive semi-definite cone set {n_cut} of them to 0, so the synthetic rows lie "
           "in a flatter subspace than the real ones" if getattr(model, "psd_fixed_", False) else
           "the released covariance is (nearly) singular in these two columns")
    return (f"Why the synthetic {x_col} against {y_col} lies on a line: {why}. The noise, not your data, set this "
            "shape: a larger ε or fewer released components makes it rarer.")
