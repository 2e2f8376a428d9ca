"""Warm the server once per process, in the background: every page's modules, plotly's figure machinery, Arrow, and
the job runner's forkserver (with its preloads), so that the first visit of each page after a start does not pay them.

Why: a new server process imports its libraries on demand, the first session of each page paying for that page's
(issue 33: "the first tab after the server starts took 49 s under load, because the first session imports
everything"). Once every page's modules are in ``sys.modules`` a page's first visit costs what its later visits
cost. The forkserver (``ui.runtime.jobs``) starts at the first job otherwise: 1.3-2.6 s before the first fit of an
upload, paid by the user who uploaded.

When: :func:`start_warmup` is called at the end of ``app.py``, after the page of that run was drawn, and starts one
daemon thread per server process (later calls return at once). ``streamlit run`` runs no code of the app before
the first session, so the first run is the earliest point; starting after that run's page (not before it) keeps the
thread from sharing the GIL with the very first page, which imports what it needs itself (a module imported by
both threads at once is imported once: the other waits on the import lock); the thread then waits ``DELAY_S`` for
the browser to draw that page before it takes a core. It does not start under Streamlit's
AppTest (its runtime is a mock, not a served process): the page tests then import no more than they use.

Safety: the thread only imports and builds throw-away objects; whatever it raises is logged and dropped (a page
that needs a module that failed here imports it again and shows its own error). The forkserver start returns
without waiting for its preloads (they run in the forkserver's own process, on another core when there is one).

What to import is read from the page registry (``ui.pages``) and each page file's own ``import`` lines (ast), so a
new page is warmed without editing this module. Written by hand: Streamlit has no start-up hook for a
``streamlit run`` script and nothing in the kept libraries pre-imports an application.
"""
from __future__ import annotations

import ast
import importlib
import logging
import threading
import time
from pathlib import Path

__all__ = ["start_warmup", "page_modules", "warm", "WARMUP_THREAD"]

WARMUP_THREAD = "privalab-warmup"
ROOT = Path(__file__).resolve().parents[2]
_LOG = logging.getLogger(__name__)
_STARTED = threading.Event()
_LOCK = threading.Lock()
DELAY_S = 3.0  # after the first run's page, before the warm-up's first step
#: Libraries every chart or table of the pages goes through (imported lazily by Streamlit and plotly otherwise).
LIBRARIES = ("plotly.graph_objects", "plotly.io", "plotly.subplots", "pyarrow", "streamlit.elements.plotly_chart",
             "streamlit.elements.arrow")


def page_modules() -> list[str]:
    """The app's modules each page file imports (``from ui.x import y`` / ``import engine.z``), in page order,
    without repeats. Read from the files, not imported: a page module draws itself when imported."""
    from ui.pages import METHOD_PAGES, TOOL_PAGES

    out: list[str] = []
    for page in (*METHOD_PAGES, *TOOL_PAGES):
        try:
            tree = ast.parse((ROOT / page.file).read_text())
        except (OSError, SyntaxError):
            continue
        for node in tree.body:
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            out += [n for n in names if n.split(".")[0] in ("ui", "engine") and n not in out]
    return out


def _start_forkserver() -> None:
    """The job runner's forkserver, with its preloads (``ui.runtime.jobs.preload_modules``), started now."""
    from multiprocessing import forkserver

    from ui.runtime import jobs

    jobs._context()  # sets the preload list (once) before the forkserver starts
    forkserver.ensure_running()


def _first_figure_and_table() -> None:
    """One small figure and one small table through the paths Streamlit takes (plotly's validators and JSON
    encoder, pandas to Arrow): their first use builds caches that later figures reuse."""
    import pandas as pd
    import plotly.graph_objects as go
    import plotly.io as pio
    import pyarrow as pa

    fig = go.Figure([go.Scatter(x=[1, 2, 3], y=[1, 3, 2], mode="lines+markers", name="a"),
                     go.Bar(x=[1, 2], y=[2, 1]), go.Heatmap(z=[[1, 2], [3, 4]])])
    fig.update_layout(title="warm-up", xaxis_title="x", yaxis_title="y", legend={"orientation": "h"})
    pio.to_json(fig, validate=False)
    pa.Table.from_pandas(pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]}))


def _first_pls_path() -> None:
    """A tiny non-private edPLS fit: its row passes pick their kernel on the first one in a process, timing both on a
    64 MB matrix (``engine.methods.edpls.core._products_by_blas``, about 60 ms), here instead of in a page's run."""
    import numpy as np

    from engine.methods.edpls import EDPLS

    X = np.arange(12.0).reshape(4, 3) ** 1.5
    EDPLS(n_components=1, epsilon=np.inf).fit(X, X[:, 0] - X[:, 2])


def warm(modules: list[str] | None = None, forkserver: bool = True) -> dict:
    """Import ``modules`` (default: :data:`LIBRARIES` and :func:`page_modules`), start the forkserver, build a
    first figure and table and run a first edPLS path; {step: seconds}, or {step: "error: ..."} for a step that
    failed (never raises)."""
    steps: dict = {}

    def step(name, fn):
        t0 = time.perf_counter()
        try:
            fn()
            steps[name] = round(time.perf_counter() - t0, 3)
        except Exception as err:  # noqa: BLE001 - a warm-up never breaks anything; the page will say what failed
            steps[name] = f"error: {type(err).__name__}: {err}"
            _LOG.warning("warm-up step %s failed: %s", name, err)

    if forkserver:
        step("forkserver", _start_forkserver)  # first: its preloads run in their own process meanwhile
    for name in (modules if modules is not None else [*LIBRARIES, *page_modules()]):
        step(name, lambda name=name: importlib.import_module(name))
    step("first_figure_and_table", _first_figure_and_table)
    step("first_pls_path", _first_pls_path)
    from ui.gc_freeze import freeze_after_imports

    step("gc_freeze", freeze_after_imports)  # the full collection before the freeze runs here, not in a page's run
    return steps


def _served() -> bool:
    """True in a process that serves the app (``streamlit run``), False under AppTest (its runtime is a mock)."""
    from streamlit.runtime import Runtime

    return Runtime.exists() and type(Runtime.instance()) is Runtime


def start_warmup() -> bool:
    """Start the warm-up thread once per served process; True when this call started it."""
    if _STARTED.is_set():
        return False
    with _LOCK:
        if _STARTED.is_set() or not _served():
            return False
        _STARTED.set()
    threading.Thread(target=_run, name=WARMUP_THREAD, daemon=True).start()
    return True


def _run() -> None:
    # The first run's page has been sent, but the browser is still drawing it: on two cores the forkserver's
    # preloads and these imports would compete with that tab's first chart (on an idle machine it is drawn within
    # a second or two; a page clicked meanwhile imports what it needs itself, as without the warm-up).
    time.sleep(DELAY_S)
    t0 = time.perf_counter()
    steps = warm()
    _LOG.info("warm-up done in %.1f s: %s", time.perf_counter() - t0, steps)
