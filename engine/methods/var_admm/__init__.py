"""Collaborative VAR forecasting across data owners (features split), central or by ADMM.

Paper: Gonçalves, Bessa & Pinson, "A critical overview of privacy-preserving approaches for
collaborative forecasting" (spec ``/work/shared/spec/var_admm.md``). Every owner holds one
series; a VAR_n(p) of all series needs every owner's lags as covariates of every equation,
so the design matrix is split by features: Z = [Z_A1 .. Z_An], Z_Ai (T x p) owner i's lags.

What is written by hand here (the paper's algorithms, not available in a kept library):

* ``CollaborativeVAR(solver="admm")``: the distributed LASSO-VAR of the paper's (47), which
  is Boyd et al. (2011) section 8.3 "lasso split across features", message by message, with
  the Y-free variant (66)-(71), zero or random initialisation, Boyd's stopping rule or the
  paper's fixed-K mode, and noise on the shared coefficients (73) or messages (74); and an
  Anderson-accelerated scheme at ρ = n (the default for fits, issue #16). The iterations live in
  :mod:`engine.methods.var_admm.solver` and :mod:`.anderson`.
* The owners' LASSO sub-problems: warm-started cyclic coordinate descent (vectorised over
  owners and targets), also used for the central LASSO so both solve the same problem.
* Numerics (issue #16, :mod:`engine.methods.var_admm.checks`): every solver works on series
  divided by a power of two near their root mean square (exact), so multiplying the series by any
  c in [1e-150, 1e150] gives the same coefficients (intercepts times c, residual covariance times
  c²); hostile series (text, NaN, inf, overflow, underflow, constant) and collinear or duplicated
  series (not identified) are refused with a ValueError naming the series.
* The spec's simulated VAR processes (6.1): VAR_2(2), the VAR_10(3) stand-in and random
  stationary VARs by Ansley & Kohn (1986) as in gmvarkit's ``random_coefmats2``.
* The data-transformation defences of spec section 2 and the forecast evaluation of 6.3.
* The noise defence as a release (issue #15): :func:`add_noise` clips every value into a range
  the user declared public, then adds fresh noise once per value; any centring is
  post-processing (the VAR's intercept is fitted on the noisy values). :func:`defence_ledger`
  decides the status from explicit declarations only (range declared public, noise seed not
  known) and states ε per value (event level) and for one owner's whole series (T values
  composed: the fit's ledger). :func:`shareable_release` / :func:`owner_sheets` are the two kinds
  of export, and :func:`pipeline_audit_case` audits the pipeline end to end.

Kept libraries do the rest: scipy for least squares / linear solves, scikit-learn for input
validation and ``BaseEstimator``. statsmodels is only the tests' oracle (``VAR(Y).fit(p)``).

Layouts. ``coefs_`` (L, n, n) and ``intercept_`` (n,) are laid out as statsmodels'
``VARResults.coefs`` / ``.intercept``: y_t = intercept + sum_l coefs[l-1] @ y_{t-l}, so
``coefs_[l-1][j, i]`` is the weight of lag l of series i in the equation of series j, and
L = max(lags) (for a lag set such as {1, 2, 24} the unused lags are zero matrices). The paper's
row form B^(l) = coefs_[l-1].T (row = source, column = target). Internally the engine is
owner-major: B_om (n p x n), row i*p + q is owner i's lag ``lags[q]`` (spec section 1);
``owner_major_to_lag_major`` / ``lag_major_to_owner_major`` convert.

Penalties (``alpha`` is per row, lambda = alpha * T with T the number of fitted rows):

* ``"none"``: least squares, 1/2 ||Y - Z B||^2.
* ``"lasso"``: 1/2 ||Y - Z B||^2 + lambda ||B||_1 (the paper's (40), no 1/T), i.e. sklearn's
  ``Lasso(alpha=alpha)`` column by column.
* ``"ridge"``: 1/2 ||Y - Z B||^2 + lambda/2 ||B||^2, i.e. sklearn's ``Ridge(alpha=alpha*T)``.

``trend="c"`` fits an unpenalised intercept the way statsmodels' constant does (Frisch-Waugh):
each owner centres its own lag columns and its own target column on their means over the
fitted rows (local work, no data leaves the owner), the model is fitted on centred data, and
the intercept is ybar - zbar B. With ``trend="n"`` there is no intercept (the paper's eta = 0).

Modules (one concern each; this package re-exports every public name, so
``from engine.methods.var_admm import X`` keeps working):

* :mod:`.layout`: lag sets, the owner-major design and the coefficient layouts.
* :mod:`.checks`: input checks and the exact internal scaling.
* :mod:`.moments`: the centred design built from the series, its moments and the least-squares solve.
* :mod:`.trace`, :mod:`.lasso`, :mod:`.solver`, :mod:`.anderson`: the ADMM schemes and their record.
* :mod:`.estimator`: :class:`CollaborativeVAR`.
* :mod:`.simulate`: the spec's simulated VAR processes and macrodata.
* :mod:`.defence`: the noise defence as a release, its ledger and the range declaration.
* :mod:`.transforms`: the data-transformation defences (not DP).
* :mod:`.prepare`: solar and other panels prepared for the evaluation.
* :mod:`.evaluation`: forecast scoring and the defences compared.
* :mod:`.release`: the shareable release and the owner's sheets.
* :mod:`.audit_case`: the end-to-end audit of the defence pipeline.
* :mod:`.comparison`: :func:`compare`, the method contract's entry point (``Comparison``).
* :func:`load_panel` lives in :mod:`engine.data.panel` (frame -> arrays).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from engine.lazy import lazy_exports

# the names are imported on first use (engine/lazy.py): a Flower party's process imports only the modules its
# protocol needs, not scikit-learn, scipy.stats, pandas and the data readers with every other one
if TYPE_CHECKING:
    from engine.data.panel import load_panel

    from .audit_case import PIPELINE_BUGS, pipeline_audit_case, var_admm_case
    from .comparison import compare
    from .defence import (
        DP_STATEMENTS,
        PER_SERIES_UNIT,
        PER_VALUE_UNIT,
        RANGE_NOT_DECLARED,
        DefenceLedger,
        NoiseRelease,
        RangeDeclaration,
        add_noise,
        calibrated_noise_scale,
        calibrates_from_epsilon,
        clip_to_range,
        defence_ledger,
        naive_noisy_design,
        noise_defence,
        noise_guarantee,
        noise_ledger,
        noise_range_declaration,
        noise_sd,
        range_width,
    )
    from .estimator import INITS, NOISE_LAWS, PENALTIES, SOLVERS, TRENDS, VARIANTS, CollaborativeVAR
    from .evaluation import (
        DEFENCES,
        ForecastEvaluation,
        defence_comparison,
        evaluate_forecasts,
        local_ar_forecasts,
        noise_sweep,
        var_forecasts,
    )
    from .layout import (
        coefs_from_owner_major,
        lag_major_to_owner_major,
        lagged_design,
        normalise_lags,
        owner_major_from_coefs,
        owner_major_to_lag_major,
        parse_lags,
    )
    from .prepare import SolarPanel, neighbourhood, prepare_series, prepare_solar
    from .release import (
        MODEL_FORMAT,
        NO_DEFENCE_REASON,
        NOT_DP_MODEL,
        RELEASE_FORMAT,
        coef_table,
        model_from_dict,
        model_from_release,
        model_to_dict,
        owner_sheets,
        privacy_statement,
        release_refusal,
        shareable_release,
        to_json,
    )
    from .simulate import (
        companion_radius,
        macrodata_growth,
        random_stationary_var,
        simulate_var,
        var10_3_coefs,
        var22_coefs,
    )
    from .solver import SCHEME_LABELS, SCHEMES, AdmmTrace, MessageLog, lasso_coordinate_descent
    from .transforms import orthogonal_rows_demo, post_multiplication_demo

__all__ = [
    "DEFENCES",
    "DP_STATEMENTS",
    "INITS",
    "MODEL_FORMAT",
    "NOISE_LAWS",
    "NOT_DP_MODEL",
    "NO_DEFENCE_REASON",
    "PENALTIES",
    "PER_SERIES_UNIT",
    "PER_VALUE_UNIT",
    "PIPELINE_BUGS",
    "RANGE_NOT_DECLARED",
    "RELEASE_FORMAT",
    "SCHEMES",
    "SCHEME_LABELS",
    "SOLVERS",
    "TRENDS",
    "VARIANTS",
    "AdmmTrace",
    "CollaborativeVAR",
    "DefenceLedger",
    "ForecastEvaluation",
    "MessageLog",
    "NoiseRelease",
    "RangeDeclaration",
    "SolarPanel",
    "add_noise",
    "calibrated_noise_scale",
    "calibrates_from_epsilon",
    "clip_to_range",
    "coef_table",
    "coefs_from_owner_major",
    "companion_radius",
    "compare",
    "defence_comparison",
    "defence_ledger",
    "evaluate_forecasts",
    "lag_major_to_owner_major",
    "lagged_design",
    "lasso_coordinate_descent",
    "load_panel",
    "local_ar_forecasts",
    "macrodata_growth",
    "model_from_dict",
    "model_from_release",
    "model_to_dict",
    "naive_noisy_design",
    "neighbourhood",
    "noise_defence",
    "noise_guarantee",
    "noise_ledger",
    "noise_range_declaration",
    "noise_sd",
    "noise_sweep",
    "normalise_lags",
    "orthogonal_rows_demo",
    "owner_major_from_coefs",
    "owner_major_to_lag_major",
    "owner_sheets",
    "parse_lags",
    "pipeline_audit_case",
    "post_multiplication_demo",
    "prepare_series",
    "prepare_solar",
    "privacy_statement",
    "random_stationary_var",
    "range_width",
    "release_refusal",
    "shareable_release",
    "simulate_var",
    "to_json",
    "var10_3_coefs",
    "var22_coefs",
    "var_admm_case",
    "var_forecasts",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
