"""No request leaves the machine (issue #19): every page, loaded in a real browser, talks to the app only.

For the home page and every page of ``ui.pages`` (METHOD_PAGES + TOOL_PAGES) on its default sample data, the
test records every request the tab makes (Playwright ``page.on("request")``, registered before the first
navigation) and, because Chromium does not report favicon loads to Playwright, also every resource the
document fetched (``performance.getEntriesByType("resource")``) and every ``link[rel~=icon]`` / ``img`` /
``script`` / ``link`` URL in the DOM. Each must go to the app's own origin (``http://127.0.0.1:<port>``) or
be ``data:`` / ``blob:``. Before issue #19 the favicon (``page_icon=":material/shield_lock:"``) came from a font
CDN on every load.

It also asserts that the toolbar is in viewer mode: no Deploy button on any page.

The harness's Chromium flags hide no request from this check (``test_harness_flags_hide_no_request``): they
turn off the *browser's* own background traffic (updates, sync), never the page's (no proxy, no host
rules, no blocked images or scripts).
"""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from browser_harness import CHROMIUM_ARGS, PAGE_PATHS, assert_no_exception, chart_coming, goto_page, wait_idle
from test_browser_app import LOAD_MS

PATHS = ["", *PAGE_PATHS]  # "" is the home page

_DOM_URLS_JS = """() => [
  ...Array.from(document.querySelectorAll('link[href]')).map(e => e.href),
  ...Array.from(document.querySelectorAll('script[src], img[src], iframe[src], source[src]')).map(e => e.src),
  ...performance.getEntriesByType('resource').map(e => e.name),
]"""


def foreign(urls, origin: str) -> list:
    """The URLs that go anywhere but ``origin`` (data: and blob: stay in the page)."""
    own = urlsplit(origin)
    out = []
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about"):
            continue
        if (parts.scheme, parts.netloc) != (own.scheme, own.netloc):
            out.append(url)
    return sorted(set(out))


def test_foreign_flags_every_other_host():
    origin = "http://127.0.0.1:8501"
    urls = [f"{origin}/_stcore/health", "data:image/png;base64,AAAA", "blob:http://127.0.0.1:8501/x",
            "https://fonts.gstatic.com/s/i/short-term/release/materialsymbolsrounded/shield_lock/default/24px.svg",
            "http://127.0.0.1:9999/other-port", "http://localhost:8501/other-name"]
    assert foreign(urls, origin) == sorted(urls[3:])


def test_harness_flags_hide_no_request():
    hiding = ("--proxy-server", "--host-resolver-rules", "--blink-settings", "--disable-images",
              "--disable-javascript", "--block-new-web-contents", "--disable-remote-fonts")
    assert not [a for a in CHROMIUM_ARGS if a.startswith(hiding)], CHROMIUM_ARGS


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p or "home")
def test_every_request_stays_on_the_apps_origin_and_no_deploy_button(page, app_url, path):
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    goto_page(page, app_url, path, timeout_ms=LOAD_MS)
    if path:
        chart_coming(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    page.wait_for_timeout(1500)  # late loads: the favicon, fonts, images of the first charts
    where = path or "home"
    assert_no_exception(page, where)
    assert len(requests) > 3, f"{where}: the recorder saw no request at all ({requests})"
    seen = requests + page.evaluate(_DOM_URLS_JS)
    icons = page.evaluate("() => Array.from(document.querySelectorAll('link[rel~=icon]')).map(e => e.href)")
    assert icons, f"{where}: the page has no favicon link"
    assert foreign(icons, app_url) == [], f"{where}: the favicon comes from elsewhere: {icons}"
    assert foreign(seen, app_url) == [], f"{where}: requests leave the machine: {foreign(seen, app_url)}"
    assert page.locator('[data-testid="stAppDeployButton"]').count() == 0, f"{where}: a Deploy button shows"
    assert page.get_by_role("button", name="Deploy").count() == 0, f"{where}: a Deploy button shows"
