"""Synthetic rows as tables: real vs synthetic frames in the released space, and the shareable synthetic table.

Everything here is post-processing of a fitted release (``PCAGauss`` or a baseline).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .baselines import IdentityQueryRelease
from .evaluation import Split
from .export import _public_bounds, can_map_back

__all__ = ["correlation_pair", "released_frames", "shareable_synthetic_frame", "synthetic_frame"]


def released_frames(est, split: Split, n: int | None = None, random_state=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(real, synthetic) frames in the released space, columns c1..cP plus "y" (regression) or "label".

    Real rows (owner's view only) are the held-out test rows mapped by ``est.transform``; for clustering
    there is no test split and they are the private training rows themselves.
    """
    task = split.task
    drawn = est.sample(n, random_state=random_state) if not isinstance(est, IdentityQueryRelease) else est.sample()
    Z_syn, y_syn = drawn if isinstance(drawn, tuple) else (drawn, None)
    P = Z_syn.shape[1]
    cols = [f"c{i + 1}" for i in range(P)]
    real = pd.DataFrame(est.transform(split.X_test), columns=cols)
    syn = pd.DataFrame(Z_syn, columns=cols)
    if task == "regression":
        real["y"] = est.transform_y(split.y_test)
        syn["y"] = y_syn
    elif task == "classification":
        real["label"] = np.asarray(split.y_test).astype(str)
        syn["label"] = np.asarray(y_syn).astype(str)
    return real, syn


def correlation_pair(real: pd.DataFrame, synthetic: pd.DataFrame, max_columns: int = 12):
    """Pearson correlation matrices of the numeric columns (first ``max_columns``) of both frames."""
    cols = [c for c in real.columns if pd.api.types.is_numeric_dtype(real[c])][:max_columns]
    return real[cols].corr().fillna(0.0), synthetic[cols].corr().fillna(0.0)


def synthetic_frame(est, n: int | None = None, *, reconstruct: bool = False, feature_names=None,
                    target_name: str = "target", random_state=None) -> pd.DataFrame:
    """The synthetic data as a table.

    reconstruct=False: released space (c1..cP, plus y in scaled units or the label). reconstruct=True: mapped back
    to the original features (x = centre + scale sqrt(M) W z), refused for Algorithm 1; y is mapped back to its
    units only when its bounds are public (else it stays in the scaled units, column ``<target>_scaled``).
    """
    drawn = est.sample(n, random_state=random_state)
    Z, y = drawn if isinstance(drawn, tuple) else (drawn, None)
    if reconstruct:
        X = est.inverse_transform(Z)
        names = list(feature_names) if feature_names is not None and len(feature_names) == X.shape[1] else \
            [f"x{i + 1}" for i in range(X.shape[1])]
        df = pd.DataFrame(X, columns=names)
        if y is not None:
            if est.task != "regression":
                df[target_name] = y
            elif "y_centre" in est.scaling_ and _public_bounds(est)[1]:
                df[target_name] = est.inverse_transform_y(y)
            else:
                df[f"{target_name}_scaled"] = y
        return df
    df = pd.DataFrame(Z, columns=[f"c{i + 1}" for i in range(Z.shape[1])])
    if y is not None:
        df[target_name] = y
    return df


def shareable_synthetic_frame(est, n: int | None = None, *, feature_names=None, target_name: str = "target",
                              random_state=None) -> pd.DataFrame:
    """The synthetic rows a data owner may share: drawn from the DP model only (post-processing), mapped
    back to the original columns only when W and the box are public (:func:`engine.methods.pca_gauss.can_map_back`),
    else in the released space. n defaults to N (public under replace-one). Nothing else: no seed, no
    index of private rows, no exact statistic.

    Raises ValueError when the fit has nothing to share (ε = ∞, or a label set read from private labels).
    """
    led = est.privacy_ledger_
    if not len(led):
        raise ValueError("nothing was released with noise (ε = ∞: no privacy): no shareable synthetic data")
    if est.task == "classification" and not getattr(est, "labels_declared_", False):
        raise ValueError("the label set was read from the private labels: declare it public to share synthetic rows")
    return synthetic_frame(est, n, reconstruct=can_map_back(est), feature_names=feature_names,
                           target_name=target_name, random_state=random_state)
