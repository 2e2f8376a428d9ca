"""The chemometrics staples (issue #19) on the edPLS page in a real browser: the expander "Model diagnostics
(owner's view, not private)" opens on the NIR sample, computes only then, and shows RMSECV, VIP and T² / Q with
their charts drawn and no exception box."""
from __future__ import annotations

from browser_harness import (
    PLOTLY_CHART,
    assert_no_exception,
    first_chart,
    goto_page,
    screenshot,
    wait_idle,
)
from test_browser_app import LOAD_MS, assert_texts, open_tab, visible_charts


def test_edpls_page_shows_rmsecv_vip_and_t2(page, app_url):
    goto_page(page, app_url, "edpls")
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    before = visible_charts(page)
    title = "Model diagnostics (owner's view, not private)"
    expander = page.locator('[data-testid="stExpander"]').filter(has_text=title)
    expander.locator("summary").first.click()
    # the expander reruns the page and draws the staples' first tab (RMSECV) inside it
    page.wait_for_function(
        "([sel, n]) => Array.from(document.querySelectorAll(sel)).filter(e => e.offsetParent !== null).length > n",
        arg=[PLOTLY_CHART, before], timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert_texts(page, ["RMSECV vs latent variables", "by the one-standard-error rule",
                        "Private choice of k, as the private fit made it"], "edpls staples, RMSECV")
    open_tab(page, "Loadings and VIP")
    assert_texts(page, ["VIP (variable importance in projection", "VIP, non-private PLS"], "edpls staples, VIP")
    open_tab(page, "T² and Q outliers")
    assert_texts(page, ["Over the 95 % / 99 % limits", "Hotelling T²"], "edpls staples, T² and Q")
    for tab in ("RMSECV vs latent variables", "Loadings and VIP", "T² and Q outliers"):
        assert page.get_by_role("tab", name=tab).is_visible(), tab
    assert visible_charts(page) > before
    assert_no_exception(page, "edpls with the staples open")
    screenshot(page, "edpls_staples")
