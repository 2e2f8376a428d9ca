"""edPLS: (epsilon, delta)-differentially private PLS1 regression (spec ``edpls.md``).

Two modes, one estimator (``EDPLS``, scikit-learn compatible):

- ``mode="paper"``: Nikzad-Langerodi et al.'s Algorithm 1 exactly (spec Sec. 2). The hidden
  path is ordinary NIPALS PLS1 on the mean-centred data; per component the unit weight w, the
  unit score t, the loading p and the y-loading c are released with Gaussian noise calibrated
  to sample bounds taken from the *current deflated residuals* (Eqs. 7-11), and
  b = W_dp (P_dp' W_dp)^-1 c_dp. Flags reproduce the authors' code: ``noise_std="sigma_squared"``
  (diPLSlib draws with std sigma^2, spec Sec. 4.4) and ``ymax="signed"`` (max f, not max |f|).
  The sensitivities come from the private data, so the ledger marks every release
  ``sensitivity_source="data"``: the paper's per-release (eps, delta) is *claimed*, not proven.
- ``mode="strict"``: actually (eps, delta)-DP. Rows are clipped to public bounds
  (||x_i|| <= x_bound, |y_i| <= y_bound) and scaled into the unit ball, the (d x d) second-moment
  matrix Z'Z is released ONCE with Analyze-Gauss for the whole budget, and PLS1 is computed
  from the noisy moments (Dayal & MacGregor's improved kernel algorithm #1, PLS1 case) as
  post-processing. Centring: with a public centre (``x_center``, ``y_center``) the rows are
  centred by it before clipping. Without one (the default) the centre is private and comes
  from the SAME release: a constant column a = sqrt(x_bound^2 + y_bound^2) is appended to every
  row, so Z'Z also carries the clipped column sums and the count, and the moments are centred
  at the noisy mean as post-processing. No budget is split off; the price is that the rows are
  scaled by sqrt(2 (x_bound^2 + y_bound^2)) instead of sqrt(x_bound^2 + y_bound^2) (noise on the
  moments x2 in std), and that the bounds then apply to the raw (uncentred) rows. The ledger
  holds exactly one public-sensitivity release, calibrated to the exact worst-case L2 change of the
  released upper triangle (``strict_sensitivity``: at most sqrt(3)/2 with private centring, below 1
  with a public centre; the proof is in ``engine.privacy.moments``). The noisy centred moment matrix is projected
  onto the PSD cone (eigenvalues clipped at 0) before PLS, which is post-processing. Strict
  mode releases W, P, c and b (and the noisy means) but no training scores (``x_scores_`` is
  None): per-row scores of the training data cannot be released privately.

Written by hand because no library implements it correctly: diPLSlib's ``edpls`` (the
authors' code) applies std sigma^2, uses the signed y-max, never centres inside the function,
has no strict mode and no replicate batching; its ``EDPLS`` class no longer runs on current
scikit-learn. The privacy core (calibration, the second-moment release with its clipping, sensitivity,
centring and PSD projection, the ledger) is ``engine.privacy``, used here, not re-implemented.

Speed. The clean path is NIPALS PLS1 computed without forming the deflated residual E (two
row-blocked, threaded passes over X per component, X never copied or deflated; ``core``). The
clean path is computed once per data set; replicate fits, epsilon sweeps and sweeps over the number of
components only draw noise and solve k x k systems, batched over replicates.

Numerics and input (issue #16). X and y are checked column by column (``column_checks``): NaN, inf,
text, overflow, underflow, constant and duplicate columns are refused with a ``ValueError`` naming the
column (a column-vector y is ravelled with scikit-learn's ``DataConversionWarning``). Extreme scales are
handled by exact power-of-two rescaling and every tolerance is relative (``core``), so c X, c' y
gives the fit of X, y in the new units for c, c' in [1e-150, 1e150]; a fit refuses only when X has run
out of numerical rank or y is explained to machine precision, and then says which.

Noise. Every release draws its noise through ``engine.privacy.noise_generator(random_state)``:
``random_state=None`` (the default) is fresh OS entropy; any other value is a noise seed somebody
knows, and the fit's ledger then carries ``SEED_KNOWN_CAVEAT`` (not proven). The same holds for
``sample_releases``, ``fit_replicates`` and every sweep; sweep tables take their ``status`` column
("proven", "not proven", "no privacy") from the ledger of the very fit of each row.

Replicates and random streams: a fit draws all its noise in one block of shape
(k, 2m + n + 1) per component order w, t, p, c (the order diPLSlib draws in), and
``fit_replicates(..., R, g)`` draws (R, k, 2m + n + 1) from the same Generator, which is the
same stream as R sequential fits sharing ``g``: replicate r equals the r-th separate fit.

Layout (one concern per module; the public names are importable from ``engine.methods.edpls``):

- ``estimator``: ``EDPLS`` (parameters, input checks, fit, predict, replicates);
- ``prepared``: the clean part of a fit and its private draws, noise tables and ledger (``_Prepared``);
- ``core``: the clean NIPALS path (paper mode);
- ``strict``: the strict release's rows (``engine.privacy.moments``), ``strict_sensitivity``, PLS1 from
  moments (``pls1_from_moments``) and the post-processing;
- ``sweeps``: RMSEP against epsilon, components, preprocessing, training-set size;
- ``evaluation``: one private fit beside the non-private one (``compare``, the method contract's entry
  point, and ``compare_private_plain``);
- ``release``: the shareable release and the owner's sheets;
- ``pipeline``: the page's pipeline (``page_problem``, ``strict_params``, ...) and its end-to-end audit;
- ``recommended``: ``StrictEDPLS`` / ``make_strict_edpls``, the recommended strict fit (issue #18): public
  row-wise preprocessing, public projection (``basis``), separate count, X-moment and cross-moment releases;
- ``audit_case``: the audit cases (``edpls_case``, ``pipeline_audit_case``).
"""
from engine.methods.edpls.audit_case import edpls_case
from engine.methods.edpls.core import QUANTITIES
from engine.methods.edpls.estimator import EDPLS, edpls_replicates
from engine.methods.edpls.evaluation import compare, compare_private_plain
from engine.methods.edpls.pipeline import (
    PAGE_DEFAULTS,
    PageProblem,
    default_x_bound,
    page_problem,
    pipeline_audit_case,
    preprocess,
    sample_y_bound,
    strict_params,
)
from engine.methods.edpls.recommended import StrictEDPLS, make_strict_edpls
from engine.methods.edpls.release import (
    FORMAT,
    estimator_from_release,
    from_json,
    model_from_dict,
    no_release_reason,
    owner_sheets,
    public_parameters,
    shareable_ledger,
    shareable_release,
    to_json,
)
from engine.methods.edpls.strict import STRICT_RELEASE, pls1_from_moments, strict_sensitivity
from engine.methods.edpls.sweeps import (
    chain_caveat,
    rmsep_curve,
    rmsep_vs_components,
    rmsep_vs_preprocessing,
    samples_needed,
    samples_needed_curve,
)

__all__ = [
    "EDPLS",
    "FORMAT",
    "PAGE_DEFAULTS",
    "QUANTITIES",
    "STRICT_RELEASE",
    "PageProblem",
    "StrictEDPLS",
    "chain_caveat",
    "compare",
    "compare_private_plain",
    "default_x_bound",
    "edpls_case",
    "edpls_replicates",
    "estimator_from_release",
    "from_json",
    "make_strict_edpls",
    "model_from_dict",
    "no_release_reason",
    "owner_sheets",
    "page_problem",
    "pipeline_audit_case",
    "pls1_from_moments",
    "preprocess",
    "public_parameters",
    "rmsep_curve",
    "rmsep_vs_components",
    "rmsep_vs_preprocessing",
    "sample_y_bound",
    "samples_needed",
    "samples_needed_curve",
    "shareable_ledger",
    "shareable_release",
    "strict_params",
    "strict_sensitivity",
    "to_json",
]
