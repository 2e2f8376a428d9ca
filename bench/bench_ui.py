"""Time from navigation to the first plotly chart, per page, measured in a real browser.

Starts ``streamlit run app.py`` on a free loopback port and drives Debian's ``/usr/bin/chromium``
(headless, through Playwright, fresh profile). For every page with a chart (every page in ``ui.pages``;
the home page draws none) it opens the page's URL in a new tab, i.e. a new Streamlit session on the
page's default sample data, and measures the wall time from ``page.goto`` to the first plotly chart
being visible in the browser.

Figures printed (``key=value``):
- ``cold_first_chart_s_<page>``: the first visit after the server started (module imports and empty
  ``st.cache_data``: what the first user after a restart waits).
- ``first_chart_s_<page>``: a later visit in a new session (median of 1 visit with --quick, 3
  without): what a user typically waits. Cached results are reused across sessions, as in production.
- ``measured_from_<page>``: ``navigation``, or ``click_of_primary_button`` for a page that draws no chart
  until its first primary button is pressed (e.g. the privacy audit's "Run audit"): its time then runs
  from the click to the first chart.
- ``sweep_chart_s_<page>`` (full mode only): on pages whose extra chart needs a button (edPLS
  "Run RMSEP sweep", PCA-Gauss "Run the sweep", DP-CCA "Run the three sweeps"), the time from the click
  to the new chart (those pages already draw a first chart on load).
- last, ``max_first_chart_s``: the slowest page's ``first_chart_s``. The target is under 2 s on this
  machine; ``meets_2s_target`` reports it, but it is NOT a checked claim (the machine is shared and its
  load varies). The script exits non-zero only when a page shows no chart at all within the time limit
  or shows an exception box (checked claims), or when the browser cannot run here (exit 2).
``--seed`` shuffles the order in which pages are visited (the claims hold for any order).
"""
from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))

from bench._common import Claims, emit, parse_args  # noqa: E402
from browser_harness import (  # noqa: E402
    PAGE_PATHS,
    PLOTLY_CHART,
    StreamlitServer,
    chart_coming,
    exception_text,
    goto_page,
    missing_reason,
    open_browser,
    wait_idle,
)

CHART_TIMEOUT_MS = 120_000
TARGET_S = 2.0
SWEEPS = {  # page -> (tab to open first or None, primary button label)
    "edpls": (None, "Run RMSEP sweep"),
    "pca_gauss": ("Utility vs ε", "Run the sweep"),
    "dp_cca": ("Sweeps (ε, N, δ)", "Run the three sweeps"),
}


def time_to_first_chart(context, base_url: str, path: str):
    """(seconds, how, tab, error): from navigation to the first visible plotly chart; how = "load", or
    "after_click" when the page draws no chart until its first primary button is pressed (then the time
    runs from the click)."""
    tab = context.new_page()
    start = time.perf_counter()
    how = "load"
    try:
        goto_page(tab, base_url, path, timeout_ms=CHART_TIMEOUT_MS)
        if not chart_coming(tab, timeout_ms=CHART_TIMEOUT_MS):
            how = "after_click"
            button = tab.locator('[data-testid="stMain"] [data-testid="stBaseButton-primary"] >> visible=true').first
            start = time.perf_counter()
            button.click(timeout=10_000)
            tab.locator(PLOTLY_CHART).first.wait_for(state="visible", timeout=4 * CHART_TIMEOUT_MS)
        else:  # the chart element has arrived: wait for plotly.js to draw it
            tab.locator(PLOTLY_CHART).first.wait_for(state="visible", timeout=CHART_TIMEOUT_MS)
        elapsed = time.perf_counter() - start
    except Exception as err:  # a timeout: the page drew no chart
        return None, how, tab, f"{type(err).__name__}: {str(err).splitlines()[0]}"
    return elapsed, how, tab, None


def time_sweep(tab, path: str):
    tab_label, button = SWEEPS[path]
    wait_idle(tab, timeout_ms=CHART_TIMEOUT_MS)
    if tab_label is not None:
        tab.get_by_role("tab", name=tab_label).click()
        tab.wait_for_timeout(300)
    visible = "([sel, n]) => Array.from(document.querySelectorAll(sel)).filter(e => e.offsetParent !== null).length > n"
    before = tab.locator(f"{PLOTLY_CHART} >> visible=true").count()
    start = time.perf_counter()
    tab.get_by_role("button", name=button).click()
    tab.wait_for_function(visible, arg=[PLOTLY_CHART, before], timeout=4 * CHART_TIMEOUT_MS)
    return time.perf_counter() - start


def main() -> int:
    args = parse_args(__doc__)
    reason = missing_reason()
    if reason is not None:
        print(f"bench_ui: cannot run: {reason}", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    claims = Claims()
    pages = list(PAGE_PATHS)
    random.Random(args.seed).shuffle(pages)
    repeats = 1 if args.quick else 3
    emit("pages", len(pages))
    emit("warm_visits_per_page", repeats)
    cold, warm, sweep, measured_from = {}, {}, {}, {}
    failures = {}
    with StreamlitServer(log_path=Path(tempfile.gettempdir()) / "bench_ui_streamlit.log") as server, \
            sync_playwright() as pw, tempfile.TemporaryDirectory(prefix="bench-ui-chromium-") as profile:
        context = open_browser(pw, Path(profile))
        try:
            for visit in range(1 + repeats):
                for path in pages:
                    seconds, how, tab, error = time_to_first_chart(context, server.url, path)
                    if error is None:
                        measured_from.setdefault(path, how)
                    if error is None:
                        wait_idle(tab, timeout_ms=CHART_TIMEOUT_MS)
                        error = exception_text(tab)
                    if error is not None:
                        failures.setdefault(path, error)
                    elif visit == 0:
                        cold[path] = seconds
                        if not args.quick and path in SWEEPS and how == "load":
                            try:
                                sweep[path] = time_sweep(tab, path)
                            except Exception as err:
                                failures.setdefault(f"{path}_sweep", f"{type(err).__name__}: {err}".splitlines()[0])
                    else:
                        warm.setdefault(path, []).append(seconds)
                    tab.close()
        finally:
            context.close()
    for path in sorted(measured_from):
        emit(f"measured_from_{path}", "navigation" if measured_from[path] == "load" else "click_of_primary_button")
    for path in sorted(cold):
        emit(f"cold_first_chart_s_{path}", round(cold[path], 3))
    for path in sorted(sweep):
        emit(f"sweep_chart_s_{path}", round(sweep[path], 3))
    for path in sorted(failures):
        print(f"failure_{path}={failures[path]}", flush=True)
    for path in pages:
        claims.check(f"chart_shown_{path}", path not in failures and path in warm)
    medians = {p: statistics.median(v) for p, v in warm.items()}
    for path in sorted(medians):
        emit(f"first_chart_s_{path}", round(medians[path], 3))
    if cold:
        emit("max_cold_first_chart_s", round(max(cold.values()), 3))
    slowest = max(medians, key=medians.get) if medians else None
    if slowest is not None:
        emit("slowest_page", slowest)
        emit("meets_2s_target", medians[slowest] < TARGET_S)
    exit_code = claims.exit_code()
    emit("max_first_chart_s", round(medians[slowest], 3) if slowest is not None else "nan")  # last line
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
