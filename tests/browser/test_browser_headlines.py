"""Headlines a stakeholder reads right, in a real browser (issue #19).

- edPLS in paper-faithful mode: the private fit's legend and the run report's title call its ε a *claim*
  ("claimed ε = 1 per release (not valid; audit finds ε ≥ …)"), never "ε = 1" as if it held; the ledger's one
  headline says "not proven".
- The attack lab on the user's own data (no public bounds declared): every guarantee statement comes from that
  fit's own ledger, so no block that says "not proven" also claims "proven", and nothing claims
  "proven (ε, δ)-DP".
"""
from __future__ import annotations

import re

from browser_harness import (
    PLOTLY_CHART,
    assert_no_exception,
    download,
    first_chart,
    goto_page,
    wait_idle,
)
from test_browser_app import LOAD_MS, assert_texts

# the negated forms a "not proven" statement may use; what is left of the block must not say "proven"
NEGATED = re.compile(r"not proven|not a proven|is not proven|\"proven\"|“proven”", re.IGNORECASE)


def legend_texts(page, chart=None) -> list[str]:
    """Every legend entry of every drawn plotly chart, or of ``chart`` (a locator): the SVG's own text, as the
    user sees it."""
    where = page.locator(PLOTLY_CHART) if chart is None else chart
    return where.locator(".legendtext").evaluate_all("els => els.map(e => e.textContent || '')")


def main_blocks(page) -> list[str]:
    """The text of every markdown, caption and alert block of the main area."""
    sel = ('[data-testid="stMain"] [data-testid="stMarkdownContainer"]')
    return [t.strip() for t in page.locator(sel).all_inner_texts() if t.strip()]


def switch_mode(page, label: str) -> None:
    page.locator('[data-testid="stSidebar"] [data-testid="stRadio"]').filter(has_text="Mode").get_by_text(
        label).click()
    page.wait_for_timeout(300)
    wait_idle(page, timeout_ms=LOAD_MS)


def test_edpls_paper_mode_says_claimed(page, app_url):
    goto_page(page, app_url, "edpls")
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    switch_mode(page, "Paper-faithful")
    page.locator('[data-testid="stMetric"]').filter(has_text="cond(P'W)").first.wait_for(timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert_no_exception(page, "edpls paper mode")
    legends = " | ".join(legend_texts(page))
    assert "claimed ε = 1 per release" in legends and "not valid" in legends, legends
    assert "(paper, ε = 1)" not in legends, legends
    # the one ledger headline: "Guarantee: (ε = …, δ = …)-differential privacy per row (…), not proven."
    assert_texts(page, ["Guarantee: (ε = ", "differential privacy per row (one row added or removed), not proven"],
                 "edpls paper mode ledger")
    name, body = download(page, "edpls_export_report", timeout_ms=LOAD_MS)
    title = re.search(r"<h1>(.*?)</h1>", body.decode()).group(1)
    assert "claimed ε = 1 per release" in title and "not valid" in title, title


def test_attack_lab_own_data_labels_come_from_the_fit(page, app_url):
    goto_page(page, app_url, "attack_lab")
    page.locator('[data-testid="stMain"] h1').first.wait_for(state="visible", timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    switch_mode(page, "Strict")
    page.locator('[data-testid="stMain"] [data-testid="stRadio"]').filter(has_text="Scenario").get_by_text(
        "Own data").click()
    page.get_by_text("What the attacker recovers at ε = 1").first.wait_for(timeout=LOAD_MS)
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=3 * LOAD_MS)
    assert_no_exception(page, "attack lab, own data")
    blocks = main_blocks(page)
    text = " ".join(blocks)
    # own data without declared public bounds: the fit's own ledger says "not proven", and the page says so
    assert "not proven" in text, text[:2000]
    assert not re.search(r"proven \(ε", text), "a 'proven (ε, δ)-DP' claim on the page"
    for block in blocks:
        if "not proven" in block:
            rest = NEGATED.sub("", block)
            assert "proven" not in rest.lower(), f"'proven' beside 'not proven': {block!r}"
    # the reconstruction (the page's first chart) names the strict fit's status from its ledger, not paper mode
    legends = " | ".join(legend_texts(page, page.locator(PLOTLY_CHART).first))
    assert "edPLS strict mode, ε = 1, not proven" in legends, legends
    assert "paper mode" not in legends.lower(), legends
    # the sweep compares the paper variants too: their legends say their ε is a claim
    sweep = " | ".join(legend_texts(page))
    assert all("claimed ε per release (not valid" in t for t in sweep.split(" | ") if "paper mode" in t), sweep
