"""The app through nginx in front of two app processes (ui.runtime.proxy.Team), in a real browser: the page loads,
a file uploaded through the proxy is read and shown, and every request of that browser, the upload's included,
reached the one process that holds its session (read off nginx's access log, ``$upstream_addr``).

Skipped without nginx (``apt-get install nginx``; the CI script does not install it); the team is always stopped.
"""
from __future__ import annotations

import shutil
import time

import pytest

from browser_harness import assert_no_exception, goto_page, wait_idle
from ui.runtime.proxy import COOKIE, Team

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None and not shutil.which("/usr/sbin/nginx"),
                                reason="nginx is not installed (apt-get install nginx)")

PICKER_INPUT = '[class*="_data_upload"] [data-testid="stFileUploaderDropzoneInput"]'
GOOD_CSV = b"a,b,c\n1,2,3\n4,5,6\n7,8,9.5\n10,11,12\n"


@pytest.fixture(scope="module")
def team(browser_available):
    with Team(2, start_timeout=180) as t:
        yield t


def test_an_upload_through_the_proxy_reaches_the_session_s_process(team, browser_context):
    tab = browser_context.new_page()
    try:
        goto_page(tab, team.url, "")
        tab.get_by_role("heading", name="PrivaLab").wait_for(timeout=120_000)
        wait_idle(tab, timeout_ms=120_000)
        tab.locator('[data-testid="stRadio"]').filter(has_text="Data source").get_by_text("Upload a file").click()
        tab.locator(PICKER_INPUT).first.set_input_files(
            files=[{"name": "team.csv", "mimeType": "text/csv", "buffer": GOOD_CSV}])
        tab.get_by_text("team.csv: 4 rows × 3 columns").wait_for(timeout=60_000)
        wait_idle(tab, timeout_ms=60_000)
        assert_no_exception(tab, "home after an upload through the proxy")
        cookie = [c["value"] for c in browser_context.cookies(team.url) if c["name"] == COOKIE]
    finally:
        tab.close()
    assert cookie and cookie[0] in ("0", "1")
    mine = f"127.0.0.1:{team.backends[int(cookie[0])]}"
    deadline = time.monotonic() + 20
    while True:  # nginx logs the websocket when it closes (the tab was closed just now)
        lines = [ln for ln in team.log_text("access.log", 1_000_000).splitlines() if "/_stcore/health" not in ln]
        streams = [line for line in lines if '"GET /_stcore/stream ' in line]
        if streams or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    uploads = [line for line in lines if "/_stcore/upload_file/" in line]
    assert uploads and streams, lines[-20:]
    # after the first answer (which set the cookie), every request went to the cookie's process
    served = [line.rsplit(" ", 1)[1] for line in lines]
    assert set(served) == {mine}, lines[-20:]
