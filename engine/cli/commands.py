"""The command line: ``privalab fit <method> --data 'runs/*.parquet' ... --out release.json`` (the same as
``python -m engine fit ...``) for batch jobs, ``privalab predict --model release.json --data spectra.csv --out
predictions.csv`` (a regression release applied to new spectra: ``engine.release.predict.predict_from_release``,
the "Apply a model" page's function), and ``privalab app`` for the dashboard.

``privalab app`` runs ``streamlit run app.py`` of this checkout with the running interpreter, bound to 127.0.0.1
(``--address`` opens it elsewhere, on purpose); it needs the ``app`` extra and a checkout (``app.py`` and
``pages/`` are not part of the installed package).

One fit (``engine.cli.batch.fit_dataset``) writes two files, never mixed: the shareable release (``--out``, JSON: the
method's own ``shareable_release`` built by ``engine.release.manifest.build_release`` and encoded by
``engine.release.manifest.release_to_json``, as the app's download) and the owner's workbook (``--workbook``, default
``<out>.owner_PRIVATE.xlsx``: ``engine.release.workbook.OwnerWorkbook``, marked private on every sheet), which holds
what the guarantee does not cover (exact row count, files, the exact ledger, the fit's choices).

Public means declared: every bound a method needs comes from the command line (or from a public sample set
given with ``--x-public``); a missing one stops the command with exit code 2 and a message naming the flag,
before any data are read. Nothing is read off the data to fill it in. Bad data: exit code 1 and the message
naming the file, row and column. Noise: fresh operating-system entropy; ``--seed`` (tests, teaching) makes it
reproducible and the ledger then says "not proven".

Data: ``engine.data.open_dataset`` (a Parquet folder, a CSV glob), every cell checked chunk by chunk unless
``--skip-check``. Progress on stderr: dask's ``ProgressBar`` (tasks done) for the check pass and the gathering
of in-memory columns, a partitions bar for the chunked fits. BLAS runs on one thread per dask thread
(``engine.threads.one_blas_thread``): a 1,000,000 x 100 strict edPLS took 136 s with OpenBLAS's own threads on
the shared 2-core machine and the product per partition was 7x faster on one thread.
Scheduler (``engine.data.scheduler``): dask's local one, or a ``dask.distributed`` cluster with
``--scheduler tcp://host:8786`` (or ``DASK_SCHEDULER_ADDRESS``).

Written by hand on argparse (standard library): no kept library offers a command line for these fits.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import sys
from pathlib import Path

import engine
from engine.cli.batch import OPTIONS, UsageError, check_declared, fit_dataset
from engine.data.scheduler import SCHEDULER_ENV
from engine.data.validate import DataError
from engine.methods import registry

__all__ = ["build_parser", "cli_methods", "dp_cca_arguments", "dp_pcr_arguments", "edpls_arguments", "main",
           "pca_gauss_arguments"]

#: The dashboard's script in this checkout (``privalab app``): beside the ``engine`` package, wherever this module sits.
APP_SCRIPT = Path(engine.__file__).resolve().parent.parent / "app.py"


def cli_methods() -> dict:
    """Methods the command line fits: CLI name -> registry key (``MethodSpec.cli``)."""
    return {spec.cli.name: spec.key for spec in registry.METHODS if spec.cli is not None}


# ------------------------------------------------------------------------------------------------ parser
def _methods_epilog() -> str:
    lines = ["methods (engine/methods/registry.py):"]
    fit_names = {v: k for k, v in cli_methods().items()}
    for spec in registry.METHODS:
        how = f"python -m engine fit {fit_names[spec.key]}" if spec.key in fit_names else "in the app only"
        lines.append(f"  {spec.key:<10} {spec.title}: {spec.summary} [{how}]")
    return "\n".join(lines)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, help="a Parquet folder, a CSV or Parquet glob ('runs/*.parquet') or file")
    p.add_argument("--epsilon", type=float, required=True, help="privacy budget epsilon (> 0)")
    p.add_argument("--delta", type=float, required=True, help="privacy budget delta (0 < delta < 1)")
    p.add_argument("--out", required=True, help="the shareable release (JSON) to write")
    p.add_argument("--workbook", help="the owner's private workbook (default: <out>.owner_PRIVATE.xlsx)")
    p.add_argument("--x-columns", help="comma-separated X columns (default: every numeric column but the response)")
    p.add_argument("--scheduler", help=f"a dask.distributed scheduler, e.g. tcp://host:8786 (default: ${SCHEDULER_ENV}"
                                       ", else dask's local scheduler), or threads / sync / processes")
    p.add_argument("--seed", type=int, help="a known noise seed (tests, teaching): the ledger says 'not proven'")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--skip-check", action="store_true",
                   help="skip the pass that checks every cell before the fit (the chunked fits still refuse a bad "
                        "cell, naming its partition and row)")


def edpls_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``fit edpls`` (its ``CliSpec.arguments``)."""
    p.add_argument("--estimator", choices=("auto", "plain", "recommended"), default="auto",
                   help="plain: EDPLS strict (Analyze-Gauss), summed partition by partition (any size; needs "
                        "--x-bound B on the row norm of X); recommended: the app's recommended strict edPLS "
                        "(public preprocessing and projection; its columns are gathered in memory); auto (default): "
                        "recommended when --x-public or --x-bound data-free is given, else plain")
    p.add_argument("--response", required=True, help="the response column")
    p.add_argument("--y-range", type=float, nargs=2, metavar=("LOW", "HIGH"),
                   help="public physical range of the response (required)")
    p.add_argument("--x-bound", help="plain: public bound on the L2 norm of a row of X; recommended: on the norm of a "
                                     "preprocessed, projected spectrum, or 'data-free' (the bound of the "
                                     "data-independent spline basis); or give --x-public")
    p.add_argument("--x-public", help="a CSV/XLSX of public spectra (same channel columns): projection and bound")
    p.add_argument("--n-components", default=None,
                   help="plain: a number (default 5); recommended: 'auto' (default), 'ridge' or a number")


def dp_pcr_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``fit dp-pcr`` (its ``CliSpec.arguments``)."""
    p.add_argument("--response", required=True, help="the response column")
    p.add_argument("--y-range", type=float, nargs=2, metavar=("LOW", "HIGH"), help="public range of the response")
    p.add_argument("--x-bound", type=float, help="public bound on the L2 norm of a row of X (required)")
    p.add_argument("--n-components", type=int, default=2)


def dp_cca_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``fit dp-cca`` (its ``CliSpec.arguments``)."""
    p.add_argument("--y-columns", required=True, help="comma-separated columns of the second view")
    p.add_argument("--x-bound", type=float, help="public bound on the L2 norm of a row of the first view")
    p.add_argument("--y-bound", type=float, help="public bound on the L2 norm of a row of the second view")
    p.add_argument("--n-components", type=int, default=1)


def pca_gauss_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``fit pca-gauss`` (its ``CliSpec.arguments``)."""
    p.add_argument("--x-range", type=float, nargs=2, metavar=("LOW", "HIGH"),
                   help="public range of every X column (the box; required)")
    p.add_argument("--response", help="a response column (regression task; needs --y-range)")
    p.add_argument("--y-range", type=float, nargs=2, metavar=("LOW", "HIGH"), help="public range of the response")
    p.add_argument("--n-components", type=int, default=2)


def _prog() -> str:
    """``privalab`` when started by the console script, else ``python -m engine``."""
    return "privalab" if os.path.basename(sys.argv[0]) == "privalab" else "python -m engine"


def _app_parser(sub) -> None:
    app = sub.add_parser("app", help="start the dashboard (streamlit run app.py) on 127.0.0.1")
    app.add_argument("--port", type=int, default=8501, help="the port (default 8501)")
    app.add_argument("--address", default="127.0.0.1",
                     help="the address to listen on (default 127.0.0.1: this machine only; another address opens "
                          "the app to that network, on purpose)")
    app.add_argument("--app", default=str(APP_SCRIPT), help=f"the app's script (default: {APP_SCRIPT})")


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``privalab`` / ``python -m engine``: app, fit (one sub-command per registry method) and predict."""
    parser = argparse.ArgumentParser(
        prog=_prog(), formatter_class=argparse.RawDescriptionHelpFormatter,
        description="PrivaLab: the dashboard (app) and batch jobs (fit): differentially private fits on data sets "
                    "of any size (Dask).",
        epilog=_methods_epilog())
    sub = parser.add_subparsers(dest="command", required=True)
    _app_parser(sub)
    fit = sub.add_parser("fit", help="fit a method and write its shareable release and the owner's workbook",
                         formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_methods_epilog())
    methods = fit.add_subparsers(dest="method", required=True, metavar="method")
    for spec in registry.METHODS:
        if spec.cli is not None:
            m = methods.add_parser(spec.cli.name, help=spec.cli.help)
            _common(m)
            registry.resolve(spec.cli.arguments)(m)
    pred = sub.add_parser("predict", help="apply a shareable regression release to new spectra (CSV of predictions)")
    pred.add_argument("--model", required=True, help="the shareable release JSON of a regression (edPLS, DP-PCR, "
                                                      "AdaSSP), as `fit` or a page wrote it")
    pred.add_argument("--data", required=True, help="a table of spectra (CSV, TSV or Excel) with the model's "
                                                     "channel columns, matched by name")
    pred.add_argument("--out", required=True, help="the predictions CSV to write")
    pred.add_argument("--quiet", action="store_true", help="no notes on stderr")
    return parser


def _run_predict(a) -> dict:
    """``predict``: ``engine.release.predict.predict_from_release`` on one table, written as CSV."""
    from engine.data import load_table
    from engine.release.predict import predict_from_release

    model, data, out = Path(a.model), Path(a.data), Path(a.out)
    if out.resolve() in (model.resolve(), data.resolve()):
        raise UsageError("--out must be a new file, not the model or the data")
    try:
        text = model.read_bytes()
    except OSError as err:
        raise UsageError(f"--model {a.model}: {err.strerror or err}") from None
    try:
        frame = load_table(str(data))
    except OSError as err:
        raise UsageError(f"--data {a.data}: {err.strerror or err}") from None
    try:
        pred = predict_from_release(text, frame)
    except ValueError as err:
        raise DataError(f"{model.name} on {data.name}: {err}", file=data.name) from None
    pred.to_csv(out, index=False)
    if not a.quiet:
        for note in pred.attrs.get("notes", []):
            print(f"[privalab] note: {note}", file=sys.stderr)
    return {"predictions": str(out), "rows": len(pred), "response": pred.columns[0],
            "estimator": pred.attrs["release"].get("estimator")}


# ------------------------------------------------------------------------------------------------ running
class _TextBar:
    """``report(done, total)`` as a text bar on stderr, redrawn in place: ``[#####     ] 3/8 partitions``."""

    def __init__(self, quiet: bool):
        self.quiet, self.drawn = quiet, False

    def __call__(self, done: int, total: int | None) -> None:
        if self.quiet:
            return
        total = total or done
        filled = int(40 * done / max(total, 1))
        print(f"\r[{'#' * filled}{' ' * (40 - filled)}] {done}/{total} partitions", end="", file=sys.stderr,
              flush=True)
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            print(file=sys.stderr, flush=True)


@contextlib.contextmanager
def _progress(quiet: bool, sched, what: str, tasks: bool = True):
    """One pass over the partitions, announced on stderr; yields ``report(done, total)`` (a text bar) for a fit
    that reports partitions itself (``tasks=False``), else shows dask's ``ProgressBar`` (tasks done, local
    scheduler; on a cluster the announcement only)."""
    from engine.data.scheduler import is_distributed

    if not quiet:
        print(f"[privalab] {what} ...", file=sys.stderr, flush=True)
    bar = _TextBar(quiet)
    try:
        if quiet or not tasks or is_distributed(sched):
            yield bar
        else:
            from dask.diagnostics import ProgressBar

            with ProgressBar(minimum=0, out=sys.stderr):
                yield bar
    finally:
        bar.close()


def _workbook_path(a) -> Path:
    if a.workbook:
        path = Path(a.workbook)
    else:
        out = Path(a.out)
        path = out.with_name((out.stem if out.suffix.lower() == ".json" else out.name) + ".owner_PRIVATE.xlsx")
    if path.resolve() == Path(a.out).resolve():
        raise UsageError("--workbook and --out must be different files: the workbook is private")
    return path


def _run_fit(a) -> dict:
    from engine.data import open_dataset
    from engine.data.scheduler import dask_scheduler

    check_declared(a)
    wb_path = _workbook_path(a)
    with contextlib.ExitStack() as stack:
        try:
            sched = stack.enter_context(dask_scheduler(a.scheduler))
        except ValueError as err:
            raise UsageError(str(err)) from None
        what = f"opening {a.data}" + ("" if a.skip_check else " and checking every cell")
        with _progress(a.quiet, sched, what):
            ddf = open_dataset(a.data, validate=not a.skip_check, scheduler=sched)
        options = {k: getattr(a, k, None) for k in OPTIONS}
        fit = fit_dataset(a.method, ddf, epsilon=a.epsilon, delta=a.delta, name=Path(str(a.data)).name,
                          progress=lambda what, tasks=True: _progress(a.quiet, sched, what, tasks), scheduler=sched,
                          **options)

    Path(a.out).write_text(fit.release_json(), encoding="utf-8")
    wb_path.write_bytes(fit.owner_workbook(a.data, a.out).to_xlsx())
    return {"release": a.out, "workbook": str(wb_path), "method": a.method, "epsilon": a.epsilon, "delta": a.delta,
            "partitions": fit.shape.partitions, "seconds": f"{fit.seconds:.3f}"}


def _run_app(parser: argparse.ArgumentParser, a) -> int:
    """``streamlit run`` with this interpreter (the venv's streamlit, activated or not), in place of this process:
    a signal to ``privalab app`` (Ctrl+C, ``kill``) reaches the server itself and leaves no orphan behind."""
    if importlib.util.find_spec("streamlit") is None:
        parser.exit(2, f"{parser.prog} app: error: streamlit is not installed: pip install -r requirements.txt "
                       "(or the package's [app] extra)\n")
    if not Path(a.app).is_file():
        parser.exit(2, f"{parser.prog} app: error: no app script at {a.app}: run it from a checkout of PrivaLab "
                       "or give --app PATH\n")
    cmd = [sys.executable, "-m", "streamlit", "run", str(a.app), "--server.address", a.address,
           "--server.port", str(a.port)]
    os.chdir(Path(a.app).resolve().parent)  # streamlit reads .streamlit/config.toml from the working directory
    os.execv(sys.executable, cmd)
    return 0  # not reached (execv replaces the process); a test's stand-in returns here


def main(argv=None) -> int:
    """Run the command line; returns the exit code (0 done, 1 refused data or fit, 2 usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "app":
        return _run_app(parser, args)
    from engine.threads import one_blas_thread

    try:
        with one_blas_thread():  # dask runs partitions side by side: one BLAS thread each (engine.threads says why)
            out = _run_predict(args) if args.command == "predict" else _run_fit(args)
    except UsageError as err:
        what = "predict" if args.command == "predict" else f"fit {args.method}"
        parser.exit(2, f"{parser.prog} {what}: error: {err}\n")
    except DataError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except (ValueError, OSError) as err:
        print(f"error: the fit was refused: {err}", file=sys.stderr)
        return 1
    for k, v in out.items():
        print(f"{k}={v}")
    return 0
