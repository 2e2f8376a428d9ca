"""Shared machinery for the real-browser suite (tests/browser) and bench/bench_ui.py.

- ``missing_reason()``: why the browser suite cannot run here (no Debian chromium, no Playwright), or None.
- ``StreamlitServer``: ``streamlit run app.py`` on a free loopback port, from the repo root; a context
  manager that waits for ``/_stcore/health`` and stops the server (and only it) on exit.
- ``open_browser(playwright, user_data_dir)``: Debian's ``/usr/bin/chromium`` through Playwright, headless,
  no sandbox, background networking off, a fresh profile. Playwright's own browser download
  (``playwright install``) is never used.
- ``goto_page`` / ``wait_idle`` / ``first_chart`` / ``assert_no_exception``: Streamlit-aware waits.
- ``download(page, key)``: click a download button by its Streamlit key, return the file the browser got.

Streamlit's ``st.navigation`` serves each ``st.Page("pages/<name>.py")`` at ``/<name>``; ``PAGE_PATHS``
is derived from the page registry (``ui.pages``) so a new page is covered without editing this file.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from ui.pages import METHOD_PAGES, TOOL_PAGES

ROOT = Path(__file__).resolve().parents[2]

# Debian's chromium; PRIVALAB_CHROMIUM overrides the path (e.g. to check the skip/fail behaviour).
CHROMIUM = os.environ.get("PRIVALAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",  # /dev/shm is small in containers; Chromium then crashes on big pages
]
ARTIFACTS = ROOT / "test-artifacts"
PLOTLY_CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot'
EXCEPTION = '[data-testid="stException"]'
REQUIRE_ENV = "PRIVALAB_REQUIRE_BROWSER"

# url path (st.navigation derives it from the file name) -> PageInfo
PAGE_PATHS = {Path(p.file).stem: p for p in METHOD_PAGES + TOOL_PAGES}
#: Pages with nothing to draw or download before the user gives them files: "Apply a model" applies an uploaded
#: release to uploaded spectra (tests/test_apply_model.py drives it under AppTest, with files).
NEEDS_USER_FILES = {"apply_model"}


def browser_required() -> bool:
    """CI sets PRIVALAB_REQUIRE_BROWSER=1: then a missing browser is a failure, not a skip."""
    return os.environ.get(REQUIRE_ENV, "").strip() not in ("", "0", "false", "no")


def missing_reason() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"Debian's chromium is not installed ({CHROMIUM} missing; apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install playwright; no browser download needed)"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StreamlitServer:
    """``python -m streamlit run app.py`` on 127.0.0.1:<free port>; use as a context manager."""

    def __init__(self, root: Path = ROOT, port: int | None = None, log_path: Path | None = None,
                 start_timeout: float = 90.0):
        self.root = Path(root)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # one log per pytest-xdist worker (PYTEST_XDIST_WORKER = gw0, gw1, ...), so two servers never share a file
        worker = os.environ.get("PYTEST_XDIST_WORKER", "")
        self.log_path = log_path or (ARTIFACTS / f"streamlit_server{'-' + worker if worker else ''}.log")
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen | None = None
        self._log = None
        self.spawned_at = self.healthy_at = None  # time.perf_counter() at the spawn and at the first health answer

    def start(self) -> "StreamlitServer":
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "w")
        cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(self.port),
               "--server.address", "127.0.0.1", "--server.headless", "true",
               "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.spawned_at = time.perf_counter()  # bench_ui's first_tab_after_start_s counts from healthy_at
        self.proc = subprocess.Popen(cmd, cwd=self.root, stdout=self._log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {self.proc.returncode}:\n{self.log_text()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        self.healthy_at = time.perf_counter()
                        return self
            except OSError:
                pass
            time.sleep(0.05)  # fine enough that ``healthy_at`` is within 50 ms of the server's first answer
        self.stop()
        raise RuntimeError(f"streamlit did not answer on {self.url} within {self.start_timeout:.0f} s:\n"
                           f"{self.log_text()}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_text(self) -> str:
        try:
            return self.log_path.read_text()[-4000:]
        except OSError:
            return ""

    def __enter__(self) -> "StreamlitServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def open_browser(playwright, user_data_dir: Path):
    """A persistent Chromium context on a fresh profile (``--user-data-dir``), headless."""
    return playwright.chromium.launch_persistent_context(
        str(user_data_dir), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
        viewport={"width": 1400, "height": 1000}, accept_downloads=True,
    )


def wait_idle(page, timeout_ms: float = 60_000, settle_ms: int = 600) -> None:
    """Wait until Streamlit's script run is over: the status widget ("Running...") is gone."""
    deadline = time.monotonic() + timeout_ms / 1000
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_ms)
    quiet_since = None
    while time.monotonic() < deadline:
        # busy: any script state but "notRunning" (also "initial", "rerunRequested"), or the status widget
        running = page.locator('[data-testid="stStatusWidget"]').count() > 0 or \
            page.locator('[data-testid="stApp"]:not([data-test-script-state="notRunning"])').count() > 0
        if running:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif (time.monotonic() - quiet_since) * 1000 >= settle_ms:
            return
        page.wait_for_timeout(100)
    raise TimeoutError(f"the app was still running after {timeout_ms / 1000:.0f} s")


_STATE_JS = """() => {
  const app = document.querySelector('[data-testid=stApp]');
  const busy = !app || app.getAttribute('data-test-script-state') !== 'notRunning'
    || document.querySelector('[data-testid=stStatusWidget]') !== null;
  const title = document.querySelector('[data-testid=stMain] h1') !== null;
  const sent = document.querySelectorAll('[data-testid=stPlotlyChart]').length;
  return {busy, title, sent};
}"""


def chart_coming(page, timeout_ms: float = 120_000, settle_ms: int = 3000) -> bool:
    """True once the page has a chart element (drawn or still being drawn); False when the run ended and
    nothing changed for ``settle_ms`` without one (the page then needs a click for its first chart).

    Streamlit reports the end of a run before it has rendered the run's elements (the browser's main
    thread may be busy for a second or more), hence the long quiet period; one atomic DOM read per poll."""
    deadline = time.monotonic() + timeout_ms / 1000
    quiet_since = None
    while time.monotonic() < deadline:
        state = page.evaluate(_STATE_JS)
        if state["sent"] > 0:
            return True
        if state["title"] and not state["busy"]:
            quiet_since = quiet_since or time.monotonic()
            if (time.monotonic() - quiet_since) * 1000 >= settle_ms:
                return False
        else:
            quiet_since = None
        page.wait_for_timeout(50)
    raise TimeoutError(f"no chart and no end of the run within {timeout_ms / 1000:.0f} s")


def goto_page(page, base_url: str, path: str = "", timeout_ms: float = 60_000) -> None:
    page.goto(f"{base_url}/{path}", wait_until="domcontentloaded", timeout=timeout_ms)
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_ms)


def first_chart(page, timeout_ms: float = 90_000):
    """Wait for the first plotly chart to be drawn and visible; return its locator."""
    chart = page.locator(PLOTLY_CHART).first
    chart.wait_for(state="visible", timeout=timeout_ms)
    return chart


def download(page, key: str, timeout_ms: float = 120_000):
    """Click the download button whose Streamlit key is ``key`` (Streamlit marks its element ``st-key-<key>``,
    e.g. ``edpls_export_workbook``); return (suggested file name, bytes) of the file the browser received."""
    button = page.locator(f".st-key-{key} button").first
    button.wait_for(state="visible", timeout=timeout_ms)
    with page.expect_download(timeout=timeout_ms) as info:
        button.click()
    dl = info.value
    assert dl.failure() is None, f"{key}: download failed: {dl.failure()}"
    with open(dl.path(), "rb") as fh:
        return dl.suggested_filename, fh.read()


def exception_text(page) -> str | None:
    boxes = page.locator(EXCEPTION)
    if boxes.count() == 0:
        return None
    return "\n---\n".join(boxes.nth(i).inner_text() for i in range(boxes.count()))


def assert_no_exception(page, where: str) -> None:
    text = exception_text(page)
    assert text is None, f"{where}: the page shows an exception:\n{text}"


def screenshot(page, name: str, max_height: int = 8000) -> Path:
    """The whole page: Streamlit scrolls inside its main container, so the viewport is made as tall as it."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    size = page.viewport_size or {"width": 1400, "height": 1000}
    height = page.evaluate(
        "() => Math.max(...Array.from(document.querySelectorAll('[data-testid=stMain], [data-testid=stSidebar]'))"
        ".map(e => e.scrollHeight), 0)")
    tall = max(size["height"], min(int(height) + 80, max_height))
    page.set_viewport_size({"width": size["width"], "height": tall})
    try:
        page.wait_for_timeout(400)  # let plotly re-lay out its charts
        page.screenshot(path=str(path), full_page=True)
    finally:
        page.set_viewport_size(size)
    return path

