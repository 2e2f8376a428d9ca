"""DP-CCA: differentially private canonical correlation analysis (spec ``dp_cca.md``).

Imtiaz & Sarwate's poster: the joint second-moment matrix C = (1/N) Z'Z of the rows
z_n = [x_n, y_n] (||z_n||_2 <= 1) is released ONCE with Analyze-Gauss (symmetric Gaussian
noise, upper triangle i.i.d. N(0, tau^2), mirrored), its blocks C_xx, C_xy, C_yy are extracted,
and CCA is computed from them; everything after the release is post-processing, so U, V and the
canonical correlations are (eps, delta)-DP.

The package, by concern (the public names below are importable from ``engine.methods.dp_cca``):

- ``sensitivity``: the replace-one sensitivity of the release, its proof, and the rows that attain it;
- ``core``: input checks, rows into the unit ball (paper / strict), CCA from (noisy) moments, batched;
- ``estimator``: ``DPCCA`` (calibration, noise, ledger, fit / transform / score, replicates);
- ``metrics``: held-out correlations, captured correlation, subspace similarity;
- ``sweeps``: the poster's three sweeps and their summary;
- ``evaluation``: the page's defaults, its split, the private fit beside its non-private reference;
- ``export``: the shareable release and the owner's sheets;
- ``public``: strict DP-CCA with a centre and bounds from declared-public rows, row-wise preprocessing
  (``public_setting``, ``PublicDPCCA``; issue #18);
- ``audit_case``: the privacy audits (generic case and the page's end-to-end pipeline);
- the frame-to-arrays adapters (``views_from_frame``, ``channel_split_views``, ``bin_columns``,
  ``columns_by_prefix`` = ``engine.data.views.columns_with_prefix``) live in ``engine.data.views``.

Numerics and input (issue #16; ``core``). Y may be 1-D (one column). Text, NaN, inf, overflow,
underflow, constant and duplicate columns are refused with a ``ValueError`` naming the view and column;
without noise and regularisation a collinear view is refused naming its columns. Each view is divided
by a power of two before any square is formed, and row norms never overflow, so c X and c' Y give the
same release (same seed) and weights and centres in the new units for c, c' in [1e-150, 1e150]; in strict
mode the public bounds and centre are in the data's units and scale with them.

Written by hand: the poster's algorithm and the batched moment-to-CCA path (no library computes
CCA from a released, possibly indefinite moment matrix, batched over replicates). The privacy
core (calibration, Analyze-Gauss, clipping, ledger) is ``engine.privacy``, used here; the
oracles in the tests are statsmodels' ``CanCorr`` and scikit-learn's ``CCA``.

Not DP: the projections X U of the private training rows (the canonical scores) use each row
itself; showing them to anyone but the data owner is not covered by the guarantee
(``NOT_DP_PROJECTIONS``).
"""
from __future__ import annotations

from engine.data.views import bin_columns, channel_split_views, views_from_frame
from engine.data.views import columns_with_prefix as columns_by_prefix
from engine.methods.dp_cca.audit_case import AUDIT_CONFIGS, dp_cca_case, pipeline_audit_case, pipeline_audit_params
from engine.methods.dp_cca.core import as_view, cca_from_moments, check_identified, read_views
from engine.methods.dp_cca.estimator import (
    DPCCA,
    NOT_DP_PROJECTIONS,
    RELEASE_NAME,
    analyze_gauss_tau,
    auto_regularization,
    resolve_calibration,
)
from engine.methods.dp_cca.evaluation import PAGE_DEFAULTS, compare, compare_fit, default_bound, split_rows
from engine.methods.dp_cca.export import (
    FORMAT,
    model_from_dict,
    no_release_reason,
    owner_sheets,
    public_parameters,
    shareable_release,
    to_json,
)
from engine.methods.dp_cca.metrics import (
    captured_correlation,
    first_pair_weights,
    held_out_correlations,
    subspace_similarity,
)
from engine.methods.dp_cca.public import PublicDPCCA, PublicSetting, public_setting, rowwise_transform
from engine.methods.dp_cca.sensitivity import SENSITIVITY, release_sensitivity, worst_case_rows
from engine.methods.dp_cca.sweeps import (
    SWEEP_PARAMETERS,
    sample_size_grid,
    summarise_sweep,
    sweep_delta,
    sweep_epsilon,
    sweep_n_samples,
    utility_sweep,
)

__all__ = [
    "AUDIT_CONFIGS",
    "DPCCA",
    "FORMAT",
    "NOT_DP_PROJECTIONS",
    "PAGE_DEFAULTS",
    "RELEASE_NAME",
    "SENSITIVITY",
    "SWEEP_PARAMETERS",
    "PublicDPCCA",
    "PublicSetting",
    "analyze_gauss_tau",
    "as_view",
    "auto_regularization",
    "bin_columns",
    "captured_correlation",
    "cca_from_moments",
    "channel_split_views",
    "check_identified",
    "columns_by_prefix",
    "compare",
    "compare_fit",
    "default_bound",
    "dp_cca_case",
    "first_pair_weights",
    "held_out_correlations",
    "model_from_dict",
    "no_release_reason",
    "owner_sheets",
    "pipeline_audit_case",
    "pipeline_audit_params",
    "public_parameters",
    "public_setting",
    "read_views",
    "release_sensitivity",
    "resolve_calibration",
    "rowwise_transform",
    "sample_size_grid",
    "shareable_release",
    "split_rows",
    "subspace_similarity",
    "summarise_sweep",
    "sweep_delta",
    "sweep_epsilon",
    "sweep_n_samples",
    "to_json",
    "utility_sweep",
    "views_from_frame",
    "worst_case_rows",
]
