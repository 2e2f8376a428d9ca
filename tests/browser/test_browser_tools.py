"""The tool pages and PCA-Gauss's defaults in a real browser (issue #19).

- Privacy audit: at the page's defaults (ε = 1, 100,000 trials) the first planted bug (noise scaled down by 4)
  is reported caught, under a human heading (the target's title, not its catalogue key), at 99 % confidence.
- Calculator: a typed σ gives the smallest ε the analytic Gaussian mechanism satisfies at the budget's δ
  (the engine's value), and the σ-vs-ε chart carries the marker of the chosen ε.
- PCA-Gauss: the default utility chart (digits, clustering) is titled with the fair metric (transfer ARI,
  trained on synthetic rows and tested on real rows), not the silhouette.
"""
from __future__ import annotations

from browser_harness import assert_no_exception, first_chart, goto_page, screenshot, wait_idle
from test_browser_app import LOAD_MS, SWEEP_MS, assert_texts, metric_value
from test_browser_method_uploads import set_main_number


def choose_option(page, key: str, option: str) -> None:
    """Pick ``option`` in the selectbox whose Streamlit key is ``key`` (a react-aria combobox in Streamlit 1.67)."""
    page.locator(f".st-key-{key} [role='combobox']").first.click()
    page.get_by_role("option", name=option, exact=True).first.click()
    page.wait_for_timeout(300)
    wait_idle(page, timeout_ms=LOAD_MS)


def chart_titles(page) -> list:
    """The layout titles of every drawn plotly chart (plotly keeps its layout on the chart's div)."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd => {
        const t = gd.layout && gd.layout.title; return ((t && (t.text || t)) || '').toString(); })""")


def test_audit_defaults_catch_the_planted_bug(page, app_url):
    from engine.methods.audit_catalog import DEFAULT_BUG, DEFAULT_TRIALS, PAGE_BUGS, target_label

    goto_page(page, app_url, "privacy_audit")
    page.get_by_role("heading", name="Privacy audit").first.wait_for(timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert_texts(page, ["99 % confidence", f"{DEFAULT_TRIALS:,}"], "privacy audit (defaults)")
    choose_option(page, "audit_bug", PAGE_BUGS[DEFAULT_BUG])
    page.get_by_role("button", name="Run audit").click()
    # the verdict: "exceeds the claimed ε ... caught" (not the warning "the planted bug was not caught")
    page.locator('[data-testid="stAlert"]').filter(has_text="exceeds the claimed ε").first.wait_for(timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert page.locator('[data-testid="stAlert"]').filter(has_text="not caught").count() == 0
    assert_texts(page, [f"Audit: {target_label('analytic_gaussian')}", ": caught)"], "privacy audit (result)")
    heading = page.locator('[data-testid="stMain"] h3').filter(has_text="Audit:").first.inner_text()
    assert "analytic_gaussian" not in heading and "_bug_" not in heading, heading
    assert float(metric_value(page, "Audited ε lower bound (99 % confidence)")) > 1.0
    first_chart(page, timeout_ms=LOAD_MS)
    assert_no_exception(page, "privacy audit")
    screenshot(page, "tools_privacy_audit_bug_caught")


def test_calculator_inverse_gives_epsilon_for_a_typed_sigma(page, app_url):
    from engine.privacy.calibration import gaussian_epsilon

    goto_page(page, app_url, "calculator")
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    set_main_number(page, "Noise σ (standard deviation)", "2")
    label = "Smallest ε at σ = 2"
    page.locator('[data-testid="stMetric"]').filter(has_text=label).first.wait_for(timeout=LOAD_MS)
    shown = float(metric_value(page, label))
    want = gaussian_epsilon(2.0, 1e-5, 1.0)
    assert abs(shown - want) <= 1e-4 * want, (shown, want)
    names = page.evaluate("""() => Array.from(document.querySelectorAll('.js-plotly-plot'))
        .flatMap(gd => (gd.data || []).map(t => t.name || ''))""")
    assert any(n.startswith("chosen ε = 1") for n in names), names
    assert any(n.startswith("typed σ = 2") for n in names), names
    assert_no_exception(page, "calculator")


def test_pca_gauss_default_chart_names_the_fair_metric(page, app_url):
    goto_page(page, app_url, "pca_gauss")
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    page.get_by_role("tab", name="Utility vs ε").click()
    page.wait_for_timeout(300)
    set_main_number(page, "Replicates", "1")
    page.get_by_role("button", name="Run the sweep").click()
    page.wait_for_function("""() => Array.from(document.querySelectorAll('.js-plotly-plot')).some(gd =>
        ((gd.layout && gd.layout.title && (gd.layout.title.text || '')) + '').includes('tested on real rows'))""",
                           timeout=SWEEP_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    titles = [t.replace("<br>", " ") for t in chart_titles(page)]
    fair = [t for t in titles if "tested on real rows" in t]
    assert fair and "transfer ARI" in fair[0] and "silhouette" not in fair[0].lower(), titles
    assert_no_exception(page, "pca_gauss")
