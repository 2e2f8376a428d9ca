"""The data picker's "Large data set on the server", and its fit on the edPLS page (issue #21).

The operator sets ``PRIVALAB_DATA_ROOT`` to a folder on the server; without it the option is not offered. The user
types a path relative to it (a Parquet folder, a file, or a CSV/Parquet pattern such as ``runs/*.csv``);
``engine.data.large`` resolves it and refuses anything outside the root (``..``, absolute paths, links pointing
out). The picker previews the first rows and the shape from the files' footers, without reading the data set.

The fit (:func:`large_edpls_section`): strict edPLS (Analyze-Gauss, ``EDPLS(mode="strict")``) through
``engine.cli.batch.fit_dataset`` (the command line's fit), its one release summed partition by partition
(``engine.privacy.chunked``): the data set is never held in memory. A progress bar follows each pass over the
partitions (the cell check: ``engine.cli.batch.TaskProgress``; the fit: the estimator's ``progress(done, total)``), with
Cancel (``ui.progress.Sweep``). Its shareable release and the owner's workbook are two separate downloads. Widgets only:
the checks, the fit and the release are the engine's.
"""
from __future__ import annotations

import contextlib
import os
import time

import streamlit as st

from engine.data import DataError, data_root, open_dataset
from ui.dataset import Dataset, still_using, store_dataset

# The fit's modules (the command line's batch fit, edPLS's pipeline, the ledger view: ~1 s of imports with
# scikit-learn and chemotools) are imported where the fit runs: every page's data picker imports this module for
# LARGE, ORIGIN and large_available, and a page without edPLS (or a server without a data root) never needs them.

__all__ = ["LARGE", "ORIGIN", "large_available", "large_choice", "large_edpls_section"]

LARGE = "Large data set on the server"
ORIGIN = "server"
_RESULTS = "edpls_large_results"


def large_available() -> bool:
    """Whether the operator configured a data root (``PRIVALAB_DATA_ROOT``, an existing folder)."""
    return data_root() is not None


def _entries(root: str, limit: int = 30) -> list[str]:
    try:
        names = sorted(n for n in os.listdir(root) if not n.startswith("."))
    except OSError:
        return []
    return [n + ("/" if os.path.isdir(os.path.join(root, n)) else "") for n in names[:limit]]


def large_choice(current: Dataset | None, key: str, slot: str) -> Dataset | None:
    """The path box, the preview (first rows, shape from the footers) and the stored choice."""
    root = data_root()
    default = current.name if current is not None and current.origin == ORIGIN else ""
    text = st.text_input("Path under the server's data root", value=default, key=f"{key}_large_path",
                         placeholder="runs   or   runs/*.parquet   or   exports/*.csv",
                         help="A folder of Parquet (or CSV) files, one file, or a pattern. Only data under the data "
                              "root the operator set up can be opened.")
    entries = _entries(root)
    if entries:
        st.caption("In the data root: " + ", ".join(entries))
    if not text.strip():
        st.info("Type the path of a Parquet folder or a CSV pattern under the data root.")
        still_using(current)
        return current if current is not None and current.origin == ORIGIN else None
    from engine.data.large import peek_dataset

    try:
        preview, shape = peek_dataset(text, root, n=20)
    except DataError as err:
        st.error(str(err))
        still_using(current)
        return current if current is not None and current.origin == ORIGIN else None
    ds = Dataset(text.strip(), preview, ORIGIN, None, (), large=shape)
    store_dataset(ds, slot)
    rows = f"{shape.rows:,} rows" if shape.rows is not None else "rows counted when checked (CSV)"
    st.markdown(f"**{ds.name}**: {rows} × {shape.columns} columns, {len(shape.files)} "
                f"file{'s' if len(shape.files) != 1 else ''}, {shape.partitions} partitions.")
    with st.expander("Preview (first rows of the first file)", expanded=False):
        st.dataframe(preview.iloc[:, :40], width="stretch")
        if shape.columns > 40:
            st.caption(f"First 40 of {shape.columns} columns shown.")
    return ds


@contextlib.contextmanager
def _pass(bar, what: str, tasks: bool = True):
    """One pass over the partitions: yields ``report(done, total)``, which moves the bar (at most every 0.2 s;
    each update is where a Cancel click stops the run). ``tasks``: dask's task callbacks drive it (the cell
    check); else the fit calls ``report`` itself as partitions finish."""
    last = [0.0]
    unit = "tasks (partitions)" if tasks else "partitions"

    def report(done: int, total: int | None) -> None:
        total = total or done
        now = time.monotonic()
        if done < total and now - last[0] < 0.2:
            return
        last[0] = now
        bar.progress(min(1.0, done / max(total, 1)), text=f"{what}: {done} of {total} {unit} done")

    from engine.cli.batch import TaskProgress

    bar.progress(0.0, text=f"{what} ...")
    if tasks:
        with TaskProgress(report):
            yield report
    else:
        yield report


def _fit(ds: Dataset, response: str, channels: list, inputs: dict, budget, bar) -> dict:
    from engine.cli.batch import fit_dataset
    from engine.data.scheduler import dask_scheduler

    with dask_scheduler() as sched:
        with _pass(bar, "Checking every cell"):
            ddf = open_dataset(ds.name, root=data_root(), scheduler=sched)
        fit = fit_dataset("edpls", ddf, epsilon=budget.epsilon, delta=budget.delta, name=ds.name, scheduler=sched,
                          progress=lambda what, tasks=True: _pass(bar, what[:1].upper() + what[1:], tasks),
                          response=response, x_columns=channels, estimator="plain", seed=budget.noise_seed, **inputs)
    return {"fit": fit, "release": fit.release_json(),
            "workbook": fit.owner_workbook(ds.name, "edpls_large_release.json").to_xlsx()}


def _bounds(ds: Dataset, response: str, n_channels: int) -> dict | None:
    """The public inputs the user declares: the response's range, the bound on a row of X, the components."""
    from engine.methods.edpls.pipeline import PAGE_DEFAULTS, default_x_bound
    from ui.public_info import Y_HIGH_LABEL, Y_LOW_LABEL

    c1, c2, c3, c4 = st.columns(4)
    where = f"{ds.name}_{response}"  # a declared range never carries over to other data
    lo = c1.number_input(Y_LOW_LABEL, value=None, format="%.6g", key=f"edpls_large_lo_{where}",
                         help="The physical range of the response, from domain knowledge (never read off the data).")
    hi = c2.number_input(Y_HIGH_LABEL, value=None, format="%.6g", key=f"edpls_large_hi_{where}")
    x_bound = c3.number_input("Public bound on ‖x‖ (row L2 norm)", min_value=1e-9,
                              value=default_x_bound(n_channels), format="%.4g", key=f"edpls_large_xb_{n_channels}",
                              help="Default √m: assumes every channel lies in [-1, 1] (absorbance units), an "
                                   "assumption about the instrument, not read from the data.")
    k_max = max(1, min(20, n_channels))
    k = int(c4.number_input("Latent variables", 1, k_max, min(PAGE_DEFAULTS["max_components"], k_max),
                            key="edpls_large_k"))
    if lo is None or hi is None:
        st.info("Enter the public range of the response to fit: public means declared, so nothing is read off the "
                "data to fill it in (|y| is bounded by the larger end).")
        return None
    if not lo < hi:
        st.error(f"The response range needs low < high; got {lo:g} and {hi:g}.")
        return None
    return {"y_range": (float(lo), float(hi)), "x_bound": float(x_bound), "n_components": k}


def large_edpls_section(ds: Dataset, budget) -> None:
    """edPLS on a large data set: the recommended strict fit over every partition, its ledger and two downloads."""
    from engine.cli.batch import UsageError
    from engine.release.workbook import OwnerWorkbook
    from ui.column_choice import enough_x_columns, response_picker, x_picker
    from ui.ledger_view import show_ledger
    from ui.progress import Sweep
    from ui.run_history import history_section, record_release

    st.subheader("Fit on the whole data set")
    st.markdown("Strict edPLS (Analyze-Gauss): one release of the clipped second moments, summed partition by "
                "partition, so the data set never has to fit in memory; the noise is added once to the sum. No "
                "preprocessing is applied (the page's preprocessing choice and the recommended estimator are for "
                "data in memory).")
    if budget.mode != "strict":
        st.info("Large data sets are fitted in strict mode only (one pass over the partitions, public bounds); "
                "paper mode's fits stay with uploads and sample sets.", icon=":material/info:")
    response = response_picker(ds, "edpls_large")
    channels = x_picker(ds, response, "edpls_large")
    if not enough_x_columns(ds, response, channels):
        return
    inputs = _bounds(ds, response, len(channels))
    if inputs is None:
        return
    settings = (ds.name, response, tuple(channels), tuple(sorted(inputs.items())), budget.epsilon, budget.delta,
                budget.noise_seed, budget.session_noise_key)
    sweep = Sweep("edpls_large", "fit on the large data set")
    results = st.session_state.setdefault(_RESULTS, {})
    if st.button("Fit on the whole data set", key="edpls_large_fit", type="primary"):
        try:
            with sweep.running("Starting ...") as bar:
                res = _fit(ds, response, channels, inputs, budget, bar)
        except (DataError, UsageError, ValueError, OSError) as err:
            st.error(f"The fit on {ds.name} was refused: {err}")
            return
        results.clear()  # one fit kept per session: a new one replaces it
        results[settings] = res
    res = results.get(settings)
    if res is None:
        st.caption("Not fitted yet with these settings.")
        return
    fit = res["fit"]
    est = fit.estimator
    m1, m2, m3 = st.columns(3)
    m1.metric("Rows clipped (for you only)", f"{est.n_clipped_:,} of {fit.shape.rows:,}")
    m2.metric("Partitions", fit.shape.partitions)
    m3.metric("Fit time", f"{fit.seconds:.1f} s")
    st.caption("The row counts are exact and private: they are in the owner's workbook, never in the release.")
    show_ledger(est.privacy_ledger_, budget.delta)
    # in the session's history and odometer (no test split here: no RMSEP); the fit is kept across reruns
    record_release("edPLS (large data)", ds, method=f"edPLS, large data (ε = {budget.epsilon:g})",
                   ledger=est.privacy_ledger_, released=(est.coef_, est.intercept_), response=response,
                   settings={"components": inputs["n_components"], "y range": inputs["y_range"],
                             "x bound": inputs["x_bound"]}, epsilon=budget.epsilon, delta=budget.delta)
    history_section("edpls_large", ds)
    d1, d2 = st.columns(2)
    d1.download_button("Shareable release (JSON)", res["release"], file_name="edpls_large_release.json",
                       mime="application/json", key="edpls_large_release", on_click="ignore",
                       help="DP outputs and the inputs you declared public only.")
    d2.download_button("Owner's workbook (PRIVATE)", res["workbook"], file_name=OwnerWorkbook.file_name("edpls_large"),
                       key="edpls_large_workbook", on_click="ignore",
                       help="Exact row count, files, choices, exact ledger: do not share.")
