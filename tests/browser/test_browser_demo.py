"""The home page's guided demo in a real browser (headless Debian Chromium through Playwright).

Opens the home page (its teaser chart is drawn on load, so plotly.js is loaded before the click),
presses "Run the guided demo", and checks that the three steps' charts are drawn and their headline
numbers say what the engine says: plain PLS leaks (|corr| > 0.9), strict edPLS at ε = 1 stops the
attack (|corr| < 0.3), and the private RMSEP is not below the non-private one. Saves test-artifacts/demo.png.
"""
from __future__ import annotations

from browser_harness import (
    PLOTLY_CHART,
    assert_no_exception,
    first_chart,
    goto_page,
    screenshot,
    wait_idle,
)
from test_browser_app import assert_texts, metric_value

#: The proven guarantee of a strict fit at the default budget, as the headline states it.
PROVEN = "(ε = 1, δ = 1e-5)-differential privacy per row (one row added or removed), proven"

LOAD_MS = 120_000
RUN_MS = 180_000
STEP_CHARTS = ("demo_leak_chart", "demo_protect_chart", "demo_cost_chart")


def keyed_chart(page, key: str):
    """The drawn plotly chart of the element with this Streamlit key (container class st-key-<key>)."""
    return page.locator(f".st-key-{key} .js-plotly-plot").first


def test_home_guided_demo_runs_the_three_steps(page, app_url):
    goto_page(page, app_url, "")
    page.get_by_role("heading", name="PrivaLab").wait_for(timeout=LOAD_MS)
    # The teaser chart is drawn on load (plotly.js is loaded while the user reads).
    keyed_chart(page, "demo_teaser_chart").wait_for(state="visible", timeout=LOAD_MS)
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert_no_exception(page, "home")
    assert page.locator('[data-testid="stMetric"]').count() == 0

    page.get_by_role("button", name="Run the guided demo").click()
    for key in STEP_CHARTS:
        keyed_chart(page, key).wait_for(state="visible", timeout=RUN_MS)
    wait_idle(page, timeout_ms=RUN_MS)
    assert_no_exception(page, "home after 'Run the guided demo'")
    # The teaser gives way to the story's own charts; each step's chart has its traces drawn.
    assert page.locator(".st-key-demo_teaser_chart").count() == 0
    for key in STEP_CHARTS:
        assert keyed_chart(page, key).locator(".scatterlayer .trace").count() >= 2, f"{key}: no traces drawn"
    assert page.locator(f"{PLOTLY_CHART} >> visible=true").count() >= 3

    assert_texts(page, ["1. Plain PLS leaks the other party's secret", "2. edPLS (strict mode) at ε = 1",
                        "3. The cost: RMSEP at ε = 1", PROVEN, "no guarantee"], "guided demo")
    leak = float(metric_value(page, "Plain PLS: |corr| with the secret band"))
    protected = float(metric_value(page, "edPLS strict ε = 1: |corr| with secret"))
    private = float(metric_value(page, "RMSEP, strict edPLS ε = 1"))
    plain = float(metric_value(page, "RMSEP, non-private PLS"))
    sigma_y = float(metric_value(page, "σ_y (test responses)"))
    assert leak > 0.9, leak
    assert protected < 0.3, protected
    assert private >= plain > 0, (private, plain)
    assert sigma_y > 0
    # the "go deeper" links
    links = " ".join(page.locator('[data-testid="stPageLink"]').all_inner_texts())
    assert "Attack lab: run the attack yourself" in links and "edPLS: fit on your spectra" in links
    screenshot(page, "demo")
