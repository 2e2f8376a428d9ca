"""Fits on data sets of any size, shared by the command line (``python -m engine``) and the app.

:func:`fit_dataset` fits one method ("edpls", "dp-pcr", "dp-cca", "pca-gauss") on a dask DataFrame from
``engine.data.open_dataset`` and returns a :class:`DatasetFit`: the fitted estimator, its shareable release (the
method's own ``shareable_release``, built by ``engine.release.manifest.build_release``) and the owner's sheets, which
:meth:`DatasetFit.owner_workbook` turns into the private ``engine.release.workbook.OwnerWorkbook``. The options are the
command line's flags by their Python names.

Public means declared: every bound a method needs must be given (:func:`_declared_bounds` raises
:class:`UsageError` naming the missing option, before any data are read); nothing is read off the data to fill
one in. Noise: fresh operating-system entropy; ``seed`` (tests, teaching) fixes it and the ledger then says
"not proven".

Fits in :func:`lazy_methods` hand the dask collections to the estimator, which sums its one release partition by
partition (``engine.privacy.chunked``) on the given scheduler and reports ``progress(done, total)``; a method left
out of it would get the chosen columns as one array, refused above :data:`MAX_IN_MEMORY_GB` (today every one is
in it: the recommended strict edPLS makes two passes, PCA-Gauss strict one). :class:`TaskProgress` reports dask's
local tasks (the check pass) to a callback.

Written by hand: glue between ``open_dataset``, the estimators and their releases (no math of its own).
"""
from __future__ import annotations

import argparse
import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.data.validate import DataError
from engine.methods import registry
from engine.release.travel import ModelCard

if TYPE_CHECKING:
    from engine.data.large import DatasetShape

__all__ = [
    "LAZY_METHODS",
    "MAX_IN_MEMORY_GB",
    "OPTIONS",
    "DatasetFit",
    "TaskProgress",
    "UsageError",
    "check_declared",
    "fit_dataset",
    "fit_dp_cca",
    "fit_dp_pcr",
    "fit_edpls",
    "fit_pca_gauss",
    "lazy_methods",
]

def lazy_methods() -> frozenset:
    """Fits whose estimator takes the dask collections and sums its release partition by partition (``fit(X, y,
    scheduler=..., progress=...)``); a method left out gets one in-memory array. From the registry
    (``CliSpec.lazy``), read when called."""
    return frozenset(f for spec in registry.METHODS if spec.cli is not None for f in spec.cli.lazy)


#: ``lazy_methods()`` at import.
LAZY_METHODS: frozenset = lazy_methods()
#: Largest table (chosen columns, float64) the in-memory path loads.
MAX_IN_MEMORY_GB = 4.0


class UsageError(Exception):
    """A missing or contradictory argument: exit code 2 with the message (as argparse's own errors)."""


def _columns(text: str | None) -> list[str] | None:
    return [c.strip() for c in text.split(",") if c.strip()] if text else None


def _numeric(ddf) -> list[str]:
    import pandas as pd

    dtypes = ddf.dtypes  # once: each access builds a pandas Series
    return [c for c, t in dtypes.items() if pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)]


def _need(ddf, cols: list[str], what: str, name: str) -> None:
    from engine.data.validate import quote_list

    missing = [c for c in cols if c not in ddf.columns]
    if missing:
        raise DataError(f"{name}: {what} {quote_list(missing)} not found. Columns: {quote_list(ddf.columns)}.")
    numeric = set(_numeric(ddf))
    text = [c for c in cols if c not in numeric]
    if text:
        raise DataError(f"{name}: column {quote_list(text)} holds text, not numbers, so it cannot be used as {what}.")


@dataclass
class _Job:
    args: argparse.Namespace
    ddf: Any  # dask.dataframe.DataFrame
    shape: DatasetShape
    name: str
    scheduler: Any  # what engine.data.scheduler.dask_scheduler yielded
    # (what, tasks=True) -> context manager around one pass, yielding report(done, total)
    progress: Callable[..., contextlib.AbstractContextManager[Any]]

    def fit(self, est, lazy: bool, what: str, *data):
        """``est.fit(*data)``: chunk by chunk on the job's scheduler for a lazy fit (the bar counts partitions)."""
        if lazy:
            with self.progress(what, tasks=False) as report:
                return est.fit(*data, scheduler=self.scheduler, progress=report)
        with self.progress(what):
            return est.fit(*data)


def _arrays(job: _Job, cols: list[str], method: str, lazy: bool):
    """The chosen columns: the dask frame itself for a lazy fit, else one float64 array (size-checked)."""
    sub = job.ddf[cols]
    if lazy:
        return sub
    rows = job.shape.rows
    if rows is None:  # dataset_shape counts a dask frame's rows, so this is never met
        raise DataError(f"{job.name}: the number of rows is not known; check the data set first.")
    gb = rows * len(cols) * 8 / 1e9
    if gb > MAX_IN_MEMORY_GB:
        raise DataError(f"{job.name}: {rows:,} rows x {len(cols)} columns is {gb:.1f} GB as numbers; "
                        f"{method} is fitted in memory (up to {MAX_IN_MEMORY_GB:g} GB). Choose fewer columns with "
                        "--x-columns or a method fitted chunk by chunk.")
    with job.progress(f"reading {len(cols)} columns of {job.shape.partitions} partitions"):
        return sub.compute().to_numpy(dtype=float)


def _x_columns(job: _Job, exclude: list[str]) -> list[str]:
    cols = _columns(job.args.x_columns) or [c for c in _numeric(job.ddf) if c not in set(exclude)]
    _need(job.ddf, cols, "X column", job.name)
    overlap = [c for c in cols if c in exclude]
    if overlap:
        raise UsageError(f"column(s) {', '.join(overlap)} cannot be both an X column and {', '.join(exclude)}")
    if not cols:
        raise DataError(f"{job.name}: no numeric X columns besides {', '.join(exclude)}.")
    return cols


def _split(data, k: int):
    """(X, y) from one array whose last ``k`` columns are y (or the dask frame: by position)."""
    if hasattr(data, "iloc") or hasattr(data, "to_dask_array"):
        cols = list(data.columns)
        return data[cols[:-k]], (data[cols[-1]] if k == 1 else data[cols[-k:]])
    return data[:, :-k], (data[:, -1] if k == 1 else data[:, -k:])


def _edpls_estimator(a) -> str:
    """'plain' (EDPLS strict, chunk by chunk) or 'recommended' (StrictEDPLS); 'auto': recommended when its own
    public inputs are given (--x-public, --x-bound data-free), else plain."""
    if a.estimator in (None, "auto"):
        return "recommended" if (a.x_public or a.x_bound == "data-free") else "plain"
    return a.estimator


def fit_edpls(job: _Job):
    """``fit edpls``: the plain strict EDPLS chunk by chunk, or the recommended strict edPLS (``--estimator``)."""
    a = job.args
    _need(job.ddf, [a.response], "response", job.name)
    cols = _x_columns(job, [a.response])
    if _edpls_estimator(a) == "recommended":
        return _edpls_recommended(job, cols)
    from engine.methods.edpls import EDPLS
    from engine.methods.edpls.release import shareable_release

    k = 5 if a.n_components in (None, "auto") else _int(a.n_components, "--n-components")
    est = EDPLS(n_components=k, epsilon=a.epsilon, delta=a.delta, mode="strict",
                x_bound=_positive(a.x_bound, "--x-bound"), y_bound=max(abs(v) for v in a.y_range), random_state=a.seed)
    return _one_response_fit(job, est, cols, "edpls", "fitting edPLS (strict, Analyze-Gauss)", shareable_release,
                             "channel")


def _one_response_fit(job: _Job, est, cols: list[str], method: str, what: str, shareable_release, coef_header: str):
    """A strict one-response fit whose release holds the declared response, range and channels (edPLS, DP-PCR):
    the fit, its shareable release and the owner's clipping count and coefficients."""
    a = job.args
    lazy = method in lazy_methods()
    X, y = _split(_arrays(job, [*cols, a.response], method.replace("_", "-"), lazy), 1)
    job.fit(est, lazy, what, X, y)
    release = shareable_release(est, public_inputs={"y_range": list(a.y_range)},
                                card=ModelCard(cols, a.response))
    return est, release, {"clipping": {"rows clipped (exact)": int(est.n_clipped_)},
                          "coefficients": {coef_header: [*cols, "intercept"],
                                           "coef_private": [*np.ravel(est.coef_), float(est.intercept_)]}}


def _edpls_recommended(job: _Job, cols: list[str]):
    from engine.data import load_table
    from engine.methods.edpls.recommended import make_strict_edpls
    from engine.methods.edpls.recommended_evaluation import choice_rows
    from engine.methods.edpls.recommended_release import shareable_release

    a = job.args
    x_bound = None if a.x_bound in (None, "data-free") else _positive(a.x_bound, "--x-bound")
    X_public = None
    if a.x_public:
        pub = load_table(a.x_public)
        missing = [c for c in cols if c not in pub.columns]
        if missing:
            raise DataError(f"{Path(a.x_public).name}: the public spectra lack the channel columns "
                            f"{', '.join(map(str, missing[:10]))} of the data set.", file=Path(a.x_public).name)
        X_public = pub[cols].to_numpy(dtype=float)
    k = a.n_components if a.n_components in ("auto", "ridge", None) else _int(a.n_components, "--n-components")
    est = make_strict_edpls(a.epsilon, a.delta, y_range=tuple(a.y_range), X_public=X_public, x_bound=x_bound,
                            n_components=k or "auto", random_state=a.seed)
    lazy = "edpls_recommended" in lazy_methods()
    X, y = _split(_arrays(job, [*cols, a.response], "edpls (recommended)", lazy), 1)
    job.fit(est, lazy, "fitting edPLS (recommended strict: response pass, then moments pass)", X, y)
    release = shareable_release(est, card=ModelCard(cols, a.response))
    coef = {"channel (preprocessed)": [*cols, "intercept"], "coef_private": [*est.coef_, est.intercept_]}
    return est, release, {"choices": choice_rows(est), "coefficients": coef}


def fit_dp_pcr(job: _Job):
    """``fit dp-pcr``: strict DP-PCR on the declared bounds, summed partition by partition."""
    from engine.methods.dp_pcr import DPPCR
    from engine.methods.dp_pcr.release import shareable_release

    a = job.args
    _need(job.ddf, [a.response], "response", job.name)
    cols = _x_columns(job, [a.response])
    est = DPPCR(n_components=a.n_components, epsilon=a.epsilon, delta=a.delta,
                x_bound=_positive(a.x_bound, "--x-bound"), y_bound=max(abs(v) for v in a.y_range), random_state=a.seed)
    return _one_response_fit(job, est, cols, "dp_pcr", "fitting DP-PCR", shareable_release, "column")


def fit_dp_cca(job: _Job):
    """``fit dp-cca``: strict DP-CCA of the X columns against ``--y-columns`` on the declared bounds."""
    from engine.methods.dp_cca import DPCCA
    from engine.methods.dp_cca.export import owner_sheets, shareable_release

    a = job.args
    ycols = _columns(a.y_columns)
    if ycols is None:  # the command line requires --y-columns; fit_dataset's callers must give y_columns too
        raise UsageError("fit dp-cca needs the second view's columns: --y-columns (y_columns)")
    _need(job.ddf, ycols, "second-view column", job.name)
    xcols = _x_columns(job, ycols)
    est = DPCCA(n_components=a.n_components, epsilon=a.epsilon, delta=a.delta, mode="strict",
                x_bound=_positive(a.x_bound, "--x-bound"), y_bound=_positive(a.y_bound, "--y-bound"),
                random_state=a.seed)
    lazy = "dp_cca" in lazy_methods()
    X, Y = _split(_arrays(job, xcols + ycols, "dp-cca", lazy), len(ycols))
    job.fit(est, lazy, "fitting DP-CCA (strict)", X, Y)
    release = shareable_release(est, public_inputs={"x_columns": xcols, "y_columns": ycols})
    return est, release, owner_sheets(est, x_names=xcols, y_names=ycols)


def fit_pca_gauss(job: _Job):
    """``fit pca-gauss``: strict PCA-Gauss synthetic data on the declared public box."""
    from engine.methods.pca_gauss import PCAGauss
    from engine.methods.pca_gauss.export import owner_sheets, shareable_release

    a = job.args
    exclude = [a.response] if a.response else []
    if a.response:
        _need(job.ddf, exclude, "response", job.name)
    cols = _x_columns(job, exclude)
    task = "regression" if a.response else "unsupervised"
    est = PCAGauss(n_components=a.n_components, epsilon=a.epsilon, task=task, pca_source="analyze_gauss",
                   mode="strict", delta=a.delta, bounds=tuple(a.x_range),
                   y_bounds=tuple(a.y_range) if a.response else None, random_state=a.seed)
    lazy = "pca_gauss" in lazy_methods()
    data = _arrays(job, cols + exclude, "pca-gauss", lazy)
    job.fit(est, lazy, "fitting PCA-Gauss (strict)", *(_split(data, 1) if a.response else (data,)))
    return est, shareable_release(est), owner_sheets(est, feature_names=cols)


def _fits() -> dict:
    """CLI name -> the method's ``CliSpec`` (``engine.methods.registry``: the one list of methods)."""
    return {spec.cli.name: spec.cli for spec in registry.METHODS if spec.cli is not None}
_NEVER_READ = "declared from domain knowledge; bounds are never read off the private data"


def _declared_bounds(a) -> None:
    """Every public bound the method needs is on the command line (checked before any data are opened)."""
    missing = []
    if a.method in ("edpls", "dp-pcr") and a.y_range is None:
        missing.append("--y-range LOW HIGH: the public physical range of the response (e.g. 7 10.5 for protein "
                       "in %)")
    if a.method == "edpls" and _edpls_estimator(a) == "plain" and a.x_bound is None:
        missing.append("--x-bound B: a public bound on the L2 norm of a row of X (e.g. sqrt(m) for m channels in "
                       "[-1, 1]); or, with the recommended estimator, --x-bound data-free or --x-public FILE (public "
                       "spectra the projection and bound come from)")
    if a.method == "edpls" and _edpls_estimator(a) == "plain" and (a.x_public or a.x_bound == "data-free"):
        raise UsageError("--x-public and --x-bound data-free belong to --estimator recommended; the plain estimator "
                         "needs a number: --x-bound B")
    if a.method in ("dp-pcr", "dp-cca") and a.x_bound is None:
        missing.append("--x-bound B: a public bound on the L2 norm of a row of X (e.g. sqrt(m) for m columns in "
                       "[-1, 1])")
    if a.method == "dp-cca" and a.y_bound is None:
        missing.append("--y-bound B: a public bound on the L2 norm of a row of the second view")
    if a.method == "pca-gauss" and a.x_range is None:
        missing.append("--x-range LOW HIGH: the public range of every X column (the box rows are clipped to)")
    if a.method == "pca-gauss" and a.response and a.y_range is None:
        missing.append("--y-range LOW HIGH: the public range of the response")
    if missing:
        raise UsageError(f"{a.method} needs " + "; and ".join(missing) + f". {_NEVER_READ[0].upper()}"
                         f"{_NEVER_READ[1:]}.")


def check_declared(a) -> None:
    """The budget is valid and every public bound the method needs is declared (UsageError otherwise)."""
    _check_budget(a)
    _declared_bounds(a)


def _positive(text, flag: str) -> float:
    try:
        v = float(text)
    except (TypeError, ValueError):
        raise UsageError(f"{flag} must be a number, got {text!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise UsageError(f"{flag} must be a finite number > 0, got {text!r}")
    return v


def _int(text, flag: str) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        raise UsageError(f"{flag} must be 'auto', 'ridge' or a whole number, got {text!r}") from None


def _check_budget(a) -> None:
    if not (a.epsilon > 0):
        raise UsageError(f"--epsilon must be > 0, got {a.epsilon}")
    if not (0 < a.delta < 1):
        raise UsageError(f"--delta must be in (0, 1), got {a.delta}")
    ranges = [(f, getattr(a, f.replace("-", "_"), None)) for f in ("y-range", "x-range")]
    for flag, r in ranges:
        if r is not None and not (np.all(np.isfinite(r)) and r[0] < r[1]):
            raise UsageError(f"--{flag} needs LOW < HIGH, got {r[0]:g} {r[1]:g}")



class TaskProgress:
    """A dask local-scheduler callback reporting ``report(done, total)`` after each task (dask's ``ProgressBar``
    counts the same way). Runs in the thread that called ``compute``, so a UI may update its widgets there."""

    def __init__(self, report):
        from dask.callbacks import Callback

        outer = self

        class _Cb(Callback):
            def _start_state(self, dsk, state):
                outer.done, outer.total = 0, sum(len(state[k]) for k in ("ready", "waiting", "running", "finished"))

            def _posttask(self, key, result, dsk, state, worker_id):
                outer.done += 1
                report(outer.done, max(outer.total, outer.done))

        self.done = self.total = 0
        self._cb = _Cb()

    def __enter__(self):
        self._cb.__enter__()
        return self

    def __exit__(self, *exc):
        self._cb.__exit__(*exc)
        return False


@dataclass
class DatasetFit:
    """One fit on a data set: the fitted estimator, its shareable release (dict), the owner's sheets and the shape."""

    method: str
    estimator: Any  # the method's fitted estimator (it has privacy_ledger_)
    release: dict
    sheets: dict
    shape: DatasetShape
    seconds: float
    noise_known: bool

    def release_json(self) -> str:
        """The shareable release as strict JSON text (the file ``--out`` names)."""
        from engine.release.manifest import release_to_json

        return release_to_json(self.release, indent=1)

    def owner_workbook(self, source: str, release_name: str):
        """The owner's workbook (``engine.release.workbook.OwnerWorkbook``): the data sheet, the method's sheets, the
        exact ledger."""
        from engine.release.workbook import OwnerWorkbook

        sh = self.shape
        data_sheet = {"source": str(source), "files": ", ".join(sh.files), "rows (exact)": sh.rows,
                      "columns": sh.columns, "partitions": sh.partitions, "seconds": round(self.seconds, 3),
                      "noise": "known seed (not proven)" if self.noise_known else "fresh OS entropy"}
        sheets = {"data": data_sheet, **self.sheets, "exact ledger": self.estimator.privacy_ledger_.to_frame()}
        return OwnerWorkbook(f"{self.method} on {source}", sheets,
                             notes=[f"Shareable release written separately ({release_name})."])


OPTIONS = ("response", "y_range", "x_range", "x_bound", "y_bound", "x_public", "n_components", "x_columns",
            "y_columns", "seed", "estimator")


def fit_dataset(method: str, ddf, *, epsilon: float, delta: float, name: str = "the data set", progress=None,
                scheduler=None, **options) -> DatasetFit:
    """Fit ``method`` ("edpls", "dp-pcr", "dp-cca", "pca-gauss") on an opened data set (``open_dataset``).

    Parameters
    ----------
    method : a CLI name (``engine.cli.commands.cli_methods``).
    ddf : dask DataFrame (rows, columns) from ``engine.data.open_dataset``.
    epsilon, delta : the budget.
    name : the data set's name in messages.
    progress : callable ``progress(what, tasks=True)`` returning a context manager around each pass over the
        partitions, which yields ``report(done, total)`` (partitions done, for the fits that report them;
        ``tasks=False`` then) (None: no progress).
    scheduler : what ``engine.data.scheduler.dask_scheduler`` yields (None: dask's local scheduler).
    options : the command line's options by their Python names: response, y_range, x_range, x_bound, y_bound,
        x_public (a file of public spectra), n_components, x_columns, y_columns (lists or comma-separated text),
        estimator (edpls: "plain", "recommended" or "auto"), seed (a known noise seed: tests and teaching; the
        ledger then says "not proven").

    Returns
    -------
    DatasetFit

    Raises
    ------
    UsageError : a public bound the method needs is not declared (nothing was read).
    DataError, ValueError : the data or the fit were refused.
    """
    from engine.data import dataset_shape

    unknown = set(options) - set(OPTIONS)
    if unknown:
        raise TypeError(f"fit_dataset: unknown options {sorted(unknown)}")
    fits = _fits()
    if method not in fits:
        raise UsageError(f"no method {method!r} on the command line; choose one of {', '.join(fits)}")
    a = argparse.Namespace(method=method, epsilon=float(epsilon), delta=float(delta), quiet=progress is None,
                           **{k: options.get(k) for k in OPTIONS})
    for k in ("x_columns", "y_columns"):
        if isinstance(getattr(a, k), (list, tuple)):
            setattr(a, k, ",".join(map(str, getattr(a, k))))
    if a.n_components is None:
        a.n_components = fits[method].default_components
    check_declared(a)
    t0 = time.perf_counter()
    job = _Job(a, ddf, dataset_shape(ddf), name, scheduler, progress or _silent)
    est, release, sheets = registry.resolve(fits[method].fit)(job)
    return DatasetFit(method, est, release, sheets, job.shape, time.perf_counter() - t0, a.seed is not None)


@contextlib.contextmanager
def _silent(what: str, tasks: bool = True):
    yield lambda done, total: None
