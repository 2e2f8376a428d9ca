"""Fixtures of the real-browser suite: one Streamlit server and one headless Chromium per session.

Without Debian's chromium or Playwright the suite is SKIPPED with the reason, except when
PRIVALAB_REQUIRE_BROWSER=1 (set by .ci/run): then every browser test FAILS, so CI cannot pass
without having driven a real browser.
"""
from __future__ import annotations

import pytest

from browser_harness import (
    REQUIRE_ENV,
    StreamlitServer,
    browser_required,
    missing_reason,
    open_browser,
)


@pytest.fixture(scope="session")
def browser_available() -> None:
    reason = missing_reason()
    if reason is not None:
        if browser_required():
            pytest.fail(f"{REQUIRE_ENV}=1 but the browser suite cannot run: {reason}", pytrace=False)
        pytest.skip(f"browser suite skipped: {reason}")


@pytest.fixture(scope="session")
def app_url(browser_available) -> str:
    """Base URL of ``streamlit run app.py`` on a free loopback port; stopped at the end of the session."""
    server = StreamlitServer()
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser_context(browser_available, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        context = open_browser(pw, tmp_path_factory.mktemp("chromium-profile"))
        context.set_default_timeout(60_000)
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser_context, app_url):
    """A fresh tab, hence a fresh Streamlit session (session_state starts empty)."""
    tab = browser_context.new_page()
    try:
        yield tab
    finally:
        tab.close()
