"""P3LS: PLS regression on vertically split data with removable random masks (spec ``p3ls.md``).

Paper: Nguyen Duy & Nikzad-Langerodi, "P3LS: Partial Least Squares under Privacy Preservation".
Companies along a value chain hold different columns (process variables) of the same rows
(batches); one of them, the label contributor (LC), also holds the responses Y (KPIs). P3LS fits
one PLS model on all columns without pooling raw data:

* a trusted authority (TA) draws random orthogonal masks A (m x m, rows), H (n x n, columns,
  handed out as row blocks H_i) and G (l x l, Y columns);
* every data holder sends X_i' = A X_i H_i and the LC sends Y' = A Y G to a server (CSP);
* the CSP sums X' = A X H and runs the SVD-based PLS (paper Algorithm 1) on the masked data;
  orthogonal masks commute with every step, so the masked components are A T, H^T W, H^T P,
  G^T Q, H^T R and H^T B G (spec Sec. 2.4);
* masks are removed at the parties (Algorithm 3): FC-i gets W_i, P_i, B_i through its own random
  invertible C_i, the LC gets Q, everybody gets the shared scores T.

What is written by hand here, because it *is* the paper: Algorithm 1 (:func:`svd_pls`), the
protocol (Algorithms 2-5) as role objects exchanging logged messages, the relevance measure
(Sec. 3.6, Algorithm 4), and the leakage view (spec Sec. 3.3/3.4). Linear algebra is scipy's
(``scipy.linalg.svd``, ``qr``, ``solve``); metrics are scikit-learn's; the oracle in the tests is
scikit-learn's ``PLSRegression``.

scikit-learn: :class:`P3LS` takes a list of column blocks (one per party); :class:`P3LSRegressor` runs the
same protocol behind ``fit(X, y)`` / ``predict(X)`` with a ``column_split`` of X's columns, and with
:class:`SVDPLS` it passes scikit-learn's ``check_estimator`` (``tests/test_sklearn_checks.py``).

Privacy honesty: masks are **not differential privacy**. No noise is added anywhere; what the
parties receive (T, B_i, Q, relevance scores) are exact functions of the data. The guarantee is
input confidentiality against semi-honest, non-colluding parties with a fully trusted TA, and it
is weaker than the paper states (see :func:`leakage_report`).

Choices the paper leaves open (spec, marked "ours"): ddof=1 standardisation done locally by each
party, float64, dense Haar masks by default (FedSVD's block-diagonal generator as an option for
the m x m row masks), sign convention "largest |t_j| entry positive", orthogonal M_new at
inference, linear solves instead of explicit inverses, random invertible keys C_i and N redrawn
above condition number max(1e3, 10 size) (tighter than the spec's 1e6: see
:func:`key_condition_limit`), optional secure aggregation of the sums
the CSP receives (simulated in floating point, not in a finite field).

Modules by concern: :mod:`.pls` (Algorithm 1), :mod:`.svdpls` (:class:`SVDPLS`), :mod:`.masks` (orthogonal masks and
invertible keys), :mod:`.roles` (trusted authority, data holders, server), :mod:`.protocol` (:class:`P3LS`,
the federation), :mod:`.columns` and :mod:`.regressor` (:class:`P3LSRegressor`), :mod:`.leakage`,
:mod:`.evaluation` (local vs federated vs centralised), :mod:`.compare` (the method contract's
``compare``) and :mod:`.export`. Frame-to-blocks adapters live in
:mod:`engine.data.blocks`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from engine.lazy import lazy_exports

# the names are imported on first use (engine/lazy.py): a Flower party's process imports only the modules its
# protocol needs, not scikit-learn, scipy.stats, pandas and the data readers with every other one
if TYPE_CHECKING:
    from engine.data.blocks import blocks_from_frame, group_columns_by_prefix

    #: Old name of :func:`engine.data.blocks.group_columns_by_prefix` (DP-CCA's ``columns_by_prefix`` is another
    #: function: it picks the columns that start with a prefix).
    from engine.data.blocks import group_columns_by_prefix as columns_by_prefix
    from engine.federation.messages import Message, MessageLog  # the one log of both federated methods
    from engine.methods.p3ls.columns import resolve_column_split
    from engine.methods.p3ls.compare import compare
    from engine.methods.p3ls.evaluation import (
        ModelComparison,
        coefficient_frame,
        compare_models,
        select_n_components,
        split_rows,
    )
    from engine.methods.p3ls.export import MODEL_FORMAT, NO_RELEASE_REASON, model_from_dict, model_to_dict, owner_sheets
    from engine.methods.p3ls.leakage import NOT_DP_STATEMENT, leakage_report
    from engine.methods.p3ls.masks import OrthogonalMask, haar_orthogonal, key_condition_limit, random_invertible
    from engine.methods.p3ls.pls import (
        PLSComponents,
        component_signs,
        mean_squared_distance,
        orient_components,
        rotations,
        standardise_columns,
        svd_pls,
    )
    from engine.methods.p3ls.protocol import P3LS, Relevance
    from engine.methods.p3ls.regressor import P3LSRegressor
    from engine.methods.p3ls.roles import DataHolder, ProtocolError, Role, Server, TrustedAuthority
    from engine.methods.p3ls.svdpls import SVDPLS

__all__ = [
    "MODEL_FORMAT",
    "NOT_DP_STATEMENT",
    "NO_RELEASE_REASON",
    "P3LS",
    "SVDPLS",
    "DataHolder",
    "Message",
    "MessageLog",
    "ModelComparison",
    "OrthogonalMask",
    "P3LSRegressor",
    "PLSComponents",
    "ProtocolError",
    "Relevance",
    "Role",
    "Server",
    "TrustedAuthority",
    "blocks_from_frame",
    "coefficient_frame",
    "columns_by_prefix",
    "compare",
    "compare_models",
    "component_signs",
    "group_columns_by_prefix",
    "haar_orthogonal",
    "key_condition_limit",
    "leakage_report",
    "mean_squared_distance",
    "model_from_dict",
    "model_to_dict",
    "orient_components",
    "owner_sheets",
    "random_invertible",
    "resolve_column_split",
    "rotations",
    "select_n_components",
    "split_rows",
    "standardise_columns",
    "svd_pls",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
