"""Time to the first plotly chart, per page, measured in a real browser: what a user waits.

Starts ``streamlit run app.py`` on a free loopback port and drives Debian's ``/usr/bin/chromium``
(headless, through Playwright, one fresh profile for the whole run). Every page in ``ui.pages`` is
timed; every timing is wall time measured in this script, from an action to the moment the page's first
plotly chart is drawn and visible in the browser (``.js-plotly-plot`` inside ``stPlotlyChart`` with a
non-empty box, checked every 50 ms; a busy browser answers late, which is part of the wait).

Figures printed (``key=value``; seconds):
- ``browser_floor_new_tab_s``: the same measurement as ``new_tab_first_chart_s`` on a minimal Streamlit
  app (a title and one three-point plotly chart; written to a temporary directory at run time and served
  the same way). No page can beat it in a new tab: it is Streamlit's and plotly.js's own start-up in a
  new tab on this machine (--quick: 1 visit, the browser's first; otherwise the median of 3 after a
  first visit that is not counted).
- ``browser_floor_nav_s``: the same minimal app with two pages (home with a chart, then a second page
  with one chart): click in the sidebar to the chart. The floor of ``first_chart_s``.
- ``first_chart_s_<page>``: **in-app navigation**, what a user waits when moving through the app. Each
  round opens the home page in a new tab (a new Streamlit session) and waits until it is idle and its
  charts, if any, are drawn (so plotly.js and the data grid are already loaded, as for a user who starts
  at home); then, page by page, the clock starts at the click on the page's link in the sidebar
  (``[data-testid="stSidebarNav"] a[href$="/<page>"]``) and stops at the page's first visible chart (a
  chart still on screen from the page before does not count); the run is left to finish, and the sidebar's
  Home link brings the tab back to the idle home page for the next page. Median over 1 round with
  --quick, 3 without; these rounds come after the cold one, so results cached by ``st.cache_data`` are
  reused across sessions, as in production.
- ``cold_first_chart_s_<page>``: the same navigation in the first round after the server started (module
  imports and an empty ``st.cache_data``: what the first user after a restart waits).
- ``new_tab_first_chart_s_<page>``: the page's URL opened in a new tab (``page.goto`` to the chart):
  a bookmark or a reload. Includes the browser's start-up of Streamlit and plotly.js in that tab (see
  ``browser_floor_new_tab_s``). Median over the same number of visits, after the cold ones.
- ``home_has_chart``: whether the home page drew a chart before the clicks (plotly.js preloaded); when
  false, every ``first_chart_s`` also includes loading plotly.js into the tab.
- ``measured_from_<page>``: ``navigation``, or ``click_of_primary_button`` for a page that draws no chart
  until its first primary button is pressed (e.g. the privacy audit's "Run audit"): its times then run
  from that click to the first chart; or ``first_view_no_chart`` for a page that has nothing to draw before the
  user gives it files (``NEEDS_USER_FILES`` of the browser harness: "Apply a model"): its times run to the end of
  its first run (title and uploaders shown), and count in the maxima like a first chart.
- ``server_cpu_new_tab_s_<page>``: CPU seconds of the server process from the new tab's ``goto`` to its first
  chart (median): the server's own share of ``new_tab_first_chart_s``, which other processes on the shared cores
  stretch less than wall time.
- ``first_tab_after_start_s_<page>``: **the first tab after a restart.** The main run's server is stopped, a new
  ``streamlit run app.py`` is started on the same port (the browser's cache is then that of a user who had the app
  open before), and as soon as it answers its health check (``/_stcore/health``, polled every 50 ms) a new tab
  opens the page; seconds from that first answer to the page's first chart. Counted from the health answer, not
  from the spawn, because no browser can open a tab before the server answers: the time before it is
  Streamlit's own start (importing streamlit and tornado, the same for any app) and is printed apart as
  ``first_tab_after_spawn_s_<page>`` (from the spawn of the process). In ``--quick`` mode one page: the one
  whose first visit in the main run was slowest; otherwise every page, each with its own restart.
  ``first_tab_server_cpu_s_<page>``: the server process's CPU seconds from that health answer to the end of the
  tab's first script run (its imports and the page's first run; the background warm-up starts later), which the
  machine's load stretches less than the wall time.
- ``first_tab_after_start_s``: the largest ``first_tab_after_start_s_<page>``; checked: at most 5.0 s
  (``first_tab_within_5s``, issue 33; the target holds on an idle machine, so read the figure with
  ``load_avg_start`` / ``load_avg_end``, the 1, 5 and 15 minute load averages).
- ``sweep_chart_s_<page>`` (full mode only): on pages whose extra chart needs a button (edPLS
  "Run RMSEP sweep", PCA-Gauss "Run the sweep", DP-CCA "Run the three sweeps"), the time from the click
  to the new chart (measured once, on the cold visit).
- ``bench_seconds``: how long the measurements took (``--quick`` aims at under two minutes on an idle
  machine; a loaded one stretches every figure and this one).
- ``max_new_tab_first_chart_s``, ``max_cold_first_chart_s``, ``slowest_page``, ``meets_2s_target``,
  and last, ``max_first_chart_s``: the slowest page's ``first_chart_s``. The target is under 2 s on this
  machine; ``meets_2s_target`` reports it, but it is NOT a checked claim (the machine is shared and its
  load varies).
- ``meets_3s_new_tab``: ``max_new_tab_first_chart_s`` under 3 s (issue #19's target; reported, not checked:
  on the shared 2-core machine the floor alone measured 1.9 s to 5.5 s from one run to the next), and
  ``new_tab_vs_floor``: ``max_new_tab_first_chart_s`` / ``browser_floor_new_tab_s``, the slowest page's
  new-tab wait in units of Streamlit's own start-up in a new tab, which the machine's load stretches alike.
  Reported (a wall-clock ratio, not a CPU-time one): ``new_tab_vs_floor < 2`` (``new_tab_within_2x_floor``).
  Checked: ``max_new_tab_first_chart_s`` at most 2.0 s (``new_tab_within_2s``, issue 33; on an idle machine).
  Pages with tabs compute only the open one (``ui/tabs.py``).

The script exits 1 when a checked claim fails: a page shows no chart (or first view) at all within the time
limit, or shows an exception box, on any visit (``chart_shown_<page>``), ``new_tab_within_2s``,
``first_tab_measured`` or ``first_tab_within_5s``; it exits 2 when the browser cannot run here. ``--seed``
shuffles the order in which pages are visited (the claims hold for any order).
"""
from __future__ import annotations

import math
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from _common import ROOT, Claims, emit, emit_load, load_module, parse_args  # bench/ is the script's own directory

# The browser suite's harness (tests/browser is not a package): loaded from its file.
_harness = load_module("browser_harness", ROOT / "tests" / "browser" / "browser_harness.py")
PAGE_PATHS = _harness.PAGE_PATHS
PLOTLY_CHART = _harness.PLOTLY_CHART
StreamlitServer = _harness.StreamlitServer
exception_text = _harness.exception_text
goto_page = _harness.goto_page
missing_reason = _harness.missing_reason
NEEDS_USER_FILES = _harness.NEEDS_USER_FILES
open_browser = _harness.open_browser
wait_idle = _harness.wait_idle

CHART_TIMEOUT_MS = 120_000
NO_CHART_SETTLE_S = 3.0  # a run that ended and stayed quiet this long without a chart needs a click
POLL_MS = 50
TARGET_S = 2.0
NEW_TAB_TARGET_S = 3.0
NEW_TAB_MAX_S = 2.0  # checked: max_new_tab_first_chart_s (issue 33)
FIRST_TAB_MAX_S = 5.0  # checked: first_tab_after_start_s (issue 33)
MEASURED_FROM = {"load": "navigation", "after_click": "click_of_primary_button", "first_view": "first_view_no_chart"}
NEW_TAB_VS_FLOOR_MAX = 2.0  # the slowest page's own work in a new tab costs less than Streamlit's start-up there
SWEEPS = {  # page -> (tab to open first or None, primary button label)
    "edpls": (None, "Run RMSEP sweep"),
    "pca_gauss": ("Utility vs ε", "Run the sweep"),
    "dp_cca": ("Sweeps (ε, N, δ)", "Run the three sweeps"),
}
PRIMARY_BUTTON = '[data-testid="stMain"] [data-testid="stBaseButton-primary"] >> visible=true'

# The minimal apps behind the browser floors (written to a temporary directory at run time).
FLOOR_APP = '''import plotly.graph_objects as go
import streamlit as st


def chart(title):
    st.title(title)
    st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[1, 3, 2])), width="stretch")


st.navigation([st.Page(lambda: chart("Floor"), title="Home", url_path="home", default=True),
               st.Page(lambda: chart("Second page"), title="Second", url_path="second")]).run()
'''

# One DOM read: the page's state, ignoring the chart elements present before the clock started
# (window.__benchOld; the home page's own charts when navigating from it).
_STATE_JS = """() => {
  const old = window.__benchOld || [];
  const app = document.querySelector('[data-testid=stApp]');
  const busy = !app || app.getAttribute('data-test-script-state') !== 'notRunning'
    || document.querySelector('[data-testid=stStatusWidget]') !== null;
  const title = document.querySelector('[data-testid=stMain] h1') !== null;
  // a lazily loaded element (plotly.js, the data grid) shows a skeleton until its code has loaded
  const loading = document.querySelector('[data-testid=stMain] [data-testid=stSkeleton]') !== null;
  const charts = Array.from(document.querySelectorAll('[data-testid=stPlotlyChart]')).filter(e => !old.includes(e));
  const drawn = charts.some(e => {
    const p = e.querySelector('.js-plotly-plot');
    if (!p || p.offsetParent === null) return false;
    const r = p.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  });
  return {busy, title, loading, sent: charts.length, drawn, path: location.pathname};
}"""
_MARK_OLD_JS = "() => { window.__benchOld = Array.from(document.querySelectorAll('[data-testid=stPlotlyChart]')); }"


def _state(tab) -> dict:
    return tab.evaluate(_STATE_JS)


def _wait_drawn_or_quiet(tab, start: float, path: str | None, timeout_s: float, watch=None) -> tuple[bool, float]:
    """Poll until a new chart is drawn (True, when) or the run has ended without one and stayed quiet for
    NO_CHART_SETTLE_S (False, when the quiet began: the page needs a click, or files). ``path``: the URL path the
    tab must be on. ``watch(state)``: called with every poll's state."""
    quiet_since = None
    while time.perf_counter() - start < timeout_s:
        s = _state(tab)
        if watch is not None:
            watch(s)
        now = time.perf_counter()
        on_page = path is None or s["path"].rstrip("/").endswith("/" + path)
        if on_page and s["drawn"]:
            return True, now
        if on_page and s["title"] and not s["busy"] and not s["loading"] and s["sent"] == 0:
            quiet_since = quiet_since or now
            if now - quiet_since >= NO_CHART_SETTLE_S:
                return False, quiet_since
        else:
            quiet_since = None
        tab.wait_for_timeout(POLL_MS)
    raise TimeoutError(f"no chart and no end of the run within {timeout_s:.0f} s")


def _no_chart_or_click(tab, path: str, start: float, quiet_at: float) -> tuple[float, str]:
    """(seconds, how) for a page that drew no chart by itself: a page that needs the user's files shows its first
    view (title, uploaders) when its run ends (``quiet_at``); any other page is timed from a click of its first
    primary button."""
    if path in NEEDS_USER_FILES:
        return quiet_at - start, "first_view"
    return _after_click(tab, CHART_TIMEOUT_MS / 1000), "after_click"


def _wait_drawn(tab, start: float, timeout_s: float) -> None:
    while time.perf_counter() - start < timeout_s:
        if _state(tab)["drawn"]:
            return
        tab.wait_for_timeout(POLL_MS)
    raise TimeoutError(f"no chart within {timeout_s:.0f} s")


def _after_click(tab, timeout_s: float) -> float:
    """Press the page's first primary button; seconds from the click to the first chart."""
    tab.evaluate(_MARK_OLD_JS)
    button = tab.locator(PRIMARY_BUTTON).first
    start = time.perf_counter()
    button.click(timeout=10_000)
    _wait_drawn(tab, start, 4 * timeout_s)
    return time.perf_counter() - start


def visit_new_tab(context, base_url: str, path: str, start: float | None = None, watch=None):
    """(seconds, how, tab, error): ``page.goto(<page url>)`` in a new tab to the first visible chart. ``start``: the
    clock's start (``time.perf_counter()``; default: just before the ``goto``); ``watch``: see
    ``_wait_drawn_or_quiet``."""
    tab = context.new_page()
    how = "load"
    try:
        tab.evaluate(_MARK_OLD_JS)
        start = time.perf_counter() if start is None else start
        goto_page(tab, base_url, path, timeout_ms=CHART_TIMEOUT_MS)
        drawn, at = _wait_drawn_or_quiet(tab, start, None, CHART_TIMEOUT_MS / 1000, watch)
        elapsed = at - start
        if not drawn:
            elapsed, how = _no_chart_or_click(tab, path, start, at)
    except Exception as err:  # a timeout: the page drew no chart
        return None, how, tab, f"{type(err).__name__}: {str(err).splitlines()[0]}"
    return elapsed, how, tab, None


def open_home(context, base_url: str):
    """A new tab (a new Streamlit session) on the home page, idle. Returns (tab, home_has_chart)."""
    tab = context.new_page()
    goto_page(tab, base_url, "", timeout_ms=CHART_TIMEOUT_MS)
    return tab, _home_ready(tab)


def _home_ready(tab) -> bool:
    """Wait until the home page is idle and its charts, if any, are drawn (plotly.js loaded)."""
    wait_idle(tab, timeout_ms=CHART_TIMEOUT_MS, settle_ms=400)
    chart_or_skeleton = '[data-testid="stPlotlyChart"], [data-testid="stMain"] [data-testid="stSkeleton"]'
    has_chart = tab.locator(chart_or_skeleton).count() > 0
    if has_chart:
        tab.locator(PLOTLY_CHART).first.wait_for(state="visible", timeout=CHART_TIMEOUT_MS)
    return has_chart


def go_home(tab) -> bool:
    """Back to the home page through its sidebar link (the first one), idle again."""
    tab.locator('[data-testid="stSidebarNav"] a').first.click()
    tab.wait_for_function("() => !/\\/[^/]+$/.test(location.pathname)", timeout=CHART_TIMEOUT_MS)
    return _home_ready(tab)


def click_to_chart(tab, path: str):
    """(seconds, how, error): on the idle home page, click the page's link in the sidebar; seconds from that
    click to the page's first visible chart."""
    how = "load"
    try:
        tab.evaluate(_MARK_OLD_JS)
        link = tab.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').first
        link.wait_for(state="visible", timeout=10_000)
        start = time.perf_counter()
        link.click()
        drawn, at = _wait_drawn_or_quiet(tab, start, path, CHART_TIMEOUT_MS / 1000)
        elapsed = at - start
        if not drawn:
            elapsed, how = _no_chart_or_click(tab, path, start, at)
    except Exception as err:
        return None, how, f"{type(err).__name__}: {str(err).splitlines()[0]}"
    return elapsed, how, None


def nav_round(context, base_url: str, paths, visit):
    """One new session: open the home page in a new tab, then for each page in turn click its sidebar link,
    time the first chart, let the run end and go back home. ``visit(path, seconds, how, error, tab)``
    records each result (error is None on success). Returns whether the home page drew a chart."""
    tab, has_chart = None, None
    for path in paths:
        if tab is None:
            tab, h = open_home(context, base_url)
            has_chart = h if has_chart is None else (has_chart and h)
        seconds, how, error = click_to_chart(tab, path)
        visit(path, seconds, how, error, tab)
        try:
            if error is not None:
                raise RuntimeError(error)
            has_chart = go_home(tab) and has_chart
        except Exception:  # start the next page from a fresh tab
            tab.close()
            tab = None
    if tab is not None:
        tab.close()
    return bool(has_chart)


def time_sweep(tab, path: str):
    tab_label, button = SWEEPS[path]
    wait_idle(tab, timeout_ms=CHART_TIMEOUT_MS)
    if tab_label is not None:
        tab.get_by_role("tab", name=tab_label).click()
        tab.wait_for_timeout(300)
        wait_idle(tab, timeout_ms=CHART_TIMEOUT_MS)  # a lazy tab reruns the script when opened
    visible = "([sel, n]) => Array.from(document.querySelectorAll(sel)).filter(e => e.offsetParent !== null).length > n"
    before = tab.locator(f"{PLOTLY_CHART} >> visible=true").count()
    start = time.perf_counter()
    tab.get_by_role("button", name=button).click()
    tab.wait_for_function(visible, arg=[PLOTLY_CHART, before], timeout=4 * CHART_TIMEOUT_MS)
    return time.perf_counter() - start


def browser_floors(pw, repeats: int) -> dict:
    """The minimal app: new-tab and in-app-navigation times to its chart (medians; the first visit, which warms
    the browser's cache, is dropped unless ``repeats`` is 0: then the one visit is kept, as --quick does)."""
    out = {"new_tab": [], "nav": []}
    with tempfile.TemporaryDirectory(prefix="bench-ui-floor-") as root, \
            tempfile.TemporaryDirectory(prefix="bench-ui-chromium-") as profile:
        (Path(root) / "app.py").write_text(FLOOR_APP)
        with StreamlitServer(root=Path(root), log_path=Path(root) / "streamlit.log") as server:
            context = open_browser(pw, Path(profile))
            try:
                for visit in range(1 + repeats):
                    seconds, _, tab, error = visit_new_tab(context, server.url, "")
                    tab.close()
                    if error is not None:
                        raise RuntimeError(f"the minimal app drew no chart: {error}")
                    if visit or not repeats:
                        out["new_tab"].append(seconds)
                    tab, _ = open_home(context, server.url)
                    seconds, _, error = click_to_chart(tab, "second")
                    tab.close()
                    if error is not None:
                        raise RuntimeError(f"the minimal app's second page drew no chart: {error}")
                    if visit or not repeats:
                        out["nav"].append(seconds)
            finally:
                context.close()
    return {k: statistics.median(v) for k, v in out.items()}


def _finish(tab, failures: dict, key: str) -> None:
    """Let the run end; record an exception box."""
    try:
        wait_idle(tab, timeout_ms=CHART_TIMEOUT_MS, settle_ms=300)
        error = exception_text(tab)
    except Exception as err:
        error = f"{type(err).__name__}: {str(err).splitlines()[0]}"
    if error is not None:
        failures.setdefault(key, error)


@dataclass
class _Timings:
    """What the visits measured, per page path (seconds)."""

    cold: dict = field(default_factory=dict)
    nav: dict = field(default_factory=dict)
    new_tab: dict = field(default_factory=dict)
    sweep: dict = field(default_factory=dict)
    measured_from: dict = field(default_factory=dict)
    failures: dict = field(default_factory=dict)
    home_charts: set = field(default_factory=set)
    server_cpu: dict = field(default_factory=dict)  # CPU seconds of the server process from a new tab to its chart
    after_start: dict = field(default_factory=dict)  # page -> (s from health, s from spawn, server CPU s)


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (its own threads; not its children)."""
    import psutil  # comes with dask.distributed

    try:
        t = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return math.nan
    return t.user + t.system


def _visit_pages(context, server, pages: list, repeats: int, quick: bool, t: _Timings) -> None:
    """One cold round by navigation, then ``repeats`` rounds by navigation and in new tabs."""
    for visit in range(1 + repeats):
        def record(path, seconds, how, error, tab, visit=visit):
            if error is not None:
                t.failures.setdefault(path, error)
                return
            t.measured_from.setdefault(path, how)
            if visit == 0:
                t.cold[path] = seconds
                if not quick and path in SWEEPS and how == "load":
                    try:
                        t.sweep[path] = time_sweep(tab, path)
                    except Exception as err:
                        t.failures.setdefault(f"{path}_sweep", f"{type(err).__name__}: {err}".splitlines()[0])
            else:
                t.nav.setdefault(path, []).append(seconds)
            _finish(tab, t.failures, path)

        t.home_charts.add(nav_round(context, server.url, pages, record))
        if visit == 0:
            continue
        for path in pages:
            cpu0 = _cpu_seconds(server.proc.pid)
            seconds, how, tab, error = visit_new_tab(context, server.url, path)
            if error is None:
                t.new_tab.setdefault(path, []).append(seconds)
                t.server_cpu.setdefault(path, []).append(_cpu_seconds(server.proc.pid) - cpu0)
                _finish(tab, t.failures, path)
            else:
                t.failures.setdefault(path, f"new tab: {error}")
            tab.close()


def first_tabs_after_start(context, port: int, paths: list, t: _Timings) -> None:
    """For each page: a new server process on ``port`` (the main run's, so the browser's cache is that of a user
    who had the app open before the restart), then at once a new tab on the page; the seconds from the server's
    first health answer (and from its spawn) to the page's first chart. Each server is stopped before the next."""
    for path in paths:
        try:
            with StreamlitServer(port=port, log_path=Path(tempfile.gettempdir()) / "bench_ui_restart.log") as server:
                cpu0, run = _cpu_seconds(server.proc.pid), {}

                def watch(state, pid=server.proc.pid, run=run):  # the server's CPU when the first run ends
                    if state["busy"]:
                        run["started"] = True
                    elif run.get("started") and state["title"] and "cpu" not in run:
                        run["cpu"] = _cpu_seconds(pid)

                seconds, how, tab, error = visit_new_tab(context, server.url, path, start=server.healthy_at,
                                                         watch=watch)
                if error is None:
                    t.after_start[path] = (seconds, seconds + server.healthy_at - server.spawned_at,
                                           run.get("cpu", math.nan) - cpu0)
                    _finish(tab, t.failures, f"{path}_after_start")
                else:
                    t.failures.setdefault(f"{path}_after_start", error)
                tab.close()
        except Exception as err:  # the server did not start: reported as a failure of that measurement
            t.failures.setdefault(f"{path}_after_start", f"{type(err).__name__}: {str(err).splitlines()[0]}")


def _emit_timings(t: _Timings, floors: dict) -> None:
    emit("browser_floor_new_tab_s", round(floors["new_tab"], 3))
    emit("browser_floor_nav_s", round(floors["nav"], 3))
    emit("home_has_chart", t.home_charts == {True})
    for path in sorted(t.measured_from):
        emit(f"measured_from_{path}", MEASURED_FROM[t.measured_from[path]])
    for path in sorted(t.cold):
        emit(f"cold_first_chart_s_{path}", round(t.cold[path], 3))
    for path in sorted(t.new_tab):
        emit(f"new_tab_first_chart_s_{path}", round(statistics.median(t.new_tab[path]), 3))
    for path in sorted(t.server_cpu):
        emit(f"server_cpu_new_tab_s_{path}", round(statistics.median(t.server_cpu[path]), 3))
    for path in sorted(t.sweep):
        emit(f"sweep_chart_s_{path}", round(t.sweep[path], 3))
    for path in sorted(t.failures):
        print(f"failure_{path}={t.failures[path]}", flush=True)


def main() -> int:
    args = parse_args(__doc__)
    reason = missing_reason()
    if reason is not None:
        print(f"bench_ui: cannot run: {reason}", file=sys.stderr)
        return 2
    # Imported here: without playwright the script exits 2 ("cannot run") instead of failing to import.
    from playwright.sync_api import sync_playwright

    # The servers start as an installed app does, from the bytecode cached at its previous start (__pycache__,
    # git-ignored): a PYTHONDONTWRITEBYTECODE inherited from a sandbox would make every start compile the app's
    # modules again, which a user's restart does not.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    claims = Claims()
    pages = list(PAGE_PATHS)
    random.Random(args.seed).shuffle(pages)
    repeats = 1 if args.quick else 3
    emit("pages", len(pages))
    emit("visits_per_page", repeats)
    emit_load("load_avg_start")
    t = _Timings()
    t_start = time.perf_counter()
    with sync_playwright() as pw:
        floors = browser_floors(pw, 0 if args.quick else 3)  # --quick: one visit, to stay under two minutes
        with tempfile.TemporaryDirectory(prefix="bench-ui-chromium-") as profile:
            context = open_browser(pw, Path(profile))
            try:
                with StreamlitServer(log_path=Path(tempfile.gettempdir()) / "bench_ui_streamlit.log") as server:
                    port = server.port
                    _visit_pages(context, server, pages, repeats, args.quick, t)
                emit("visits_seconds", round(time.perf_counter() - t_start, 1))
                # --quick: the page whose first visit after the start was slowest; otherwise every page
                slowest_cold = sorted(t.cold, key=t.cold.get)[-1:] if t.cold else pages[:1]
                first_tabs_after_start(context, port, slowest_cold if args.quick else pages, t)
            finally:
                context.close()
    _emit_timings(t, floors)
    for path in pages:
        claims.check(f"chart_shown_{path}", path not in t.failures and path in t.nav and path in t.new_tab)
    medians = {p: statistics.median(v) for p, v in t.nav.items()}
    for path in sorted(medians):
        emit(f"first_chart_s_{path}", round(medians[path], 3))
    if t.cold:
        emit("max_cold_first_chart_s", round(max(t.cold.values()), 3))
    if t.new_tab:
        max_new_tab = max(statistics.median(v) for v in t.new_tab.values())
        emit("max_new_tab_first_chart_s", round(max_new_tab, 3))
        emit("meets_3s_new_tab", max_new_tab < NEW_TAB_TARGET_S)  # issue #19's target, reported
        ratio = max_new_tab / floors["new_tab"]
        emit("new_tab_vs_floor", round(ratio, 3))
        claims.report("new_tab_within_2x_floor", ratio < NEW_TAB_VS_FLOOR_MAX,  # a wall-clock ratio: reported only
                      f"slowest page in a new tab / minimal app in a new tab = {ratio:.2f}")
        claims.check("new_tab_within_2s", max_new_tab <= NEW_TAB_MAX_S,
                     f"max_new_tab_first_chart_s={max_new_tab:.3f} (target {NEW_TAB_MAX_S} s on an idle machine)")
    for path, (seconds, from_spawn, cpu) in sorted(t.after_start.items()):
        emit(f"first_tab_after_start_s_{path}", round(seconds, 3))
        emit(f"first_tab_after_spawn_s_{path}", round(from_spawn, 3))
        emit(f"first_tab_server_cpu_s_{path}", round(cpu, 3))
    claims.check("first_tab_measured", bool(t.after_start))
    if t.after_start:
        first_tab = max(v[0] for v in t.after_start.values())
        emit("first_tab_after_start_s", round(first_tab, 3))
        claims.check("first_tab_within_5s", first_tab <= FIRST_TAB_MAX_S,
                     f"first_tab_after_start_s={first_tab:.3f} (target {FIRST_TAB_MAX_S} s on an idle machine)")
    emit_load("load_avg_end")
    emit("bench_seconds", round(time.perf_counter() - t_start, 1))
    slowest = max(medians, key=medians.get) if medians else None
    if slowest is not None:
        emit("slowest_page", slowest)
        emit("meets_2s_target", medians[slowest] < TARGET_S)
    exit_code = claims.exit_code()
    emit("max_first_chart_s", round(medians[slowest], 3) if slowest is not None else "nan")  # last line
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
