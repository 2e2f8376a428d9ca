"""The app in a real browser (headless Debian Chromium through Playwright), end to end.

Every page of ui.pages is opened by URL (st.navigation serves pages/<name>.py at /<name>) on its default
sample data; a page that draws no chart on load gets its first primary button pressed, and the pages with
a run button in RUN_BUTTONS get it pressed (with the fewest replicates); each test asserts the page's
headline text, at least one drawn plotly chart, and no exception box, and saves a screenshot to
test-artifacts/. The budget test changes ε in the sidebar and checks the σ shown against the engine and
that ε survives sidebar navigation.
The upload tests go through the real file input: a good CSV is loaded, then a bad one is refused with
a message naming the file and the column while the previous data stays selected.
"""
from __future__ import annotations

import io
import re

import pandas as pd
import pytest

from browser_harness import (
    NEEDS_USER_FILES,
    PAGE_PATHS,
    PLOTLY_CHART,
    assert_no_exception,
    chart_coming,
    download,
    first_chart,
    goto_page,
    screenshot,
    wait_idle,
)
from ui.pages import METHOD_PAGES

LOAD_MS = 120_000  # a cold page (imports + first fit) on a loaded machine
SWEEP_MS = 240_000

# page path -> texts that must appear once the page has drawn its results on sample data
EXPECTED_TEXT = {
    "edpls": ["edPLS: differentially private PLS1 regression", "RMSEP, private", "RMSEP, non-private",
              "RMSEP, private constant", "Recommended strict estimator", "What the recommended estimator chose",
              "proven guarantee", "Privacy vs accuracy"],
    "dp_pcr": ["DP-PCR: differentially private principal component regression", "RMSEP, private",
               "RMSEP, non-private", "Privacy vs accuracy: PCR and PLS side by side"],
    "pca_gauss": ["PCA-Gauss", "Total ε (basic composition)", "Strict mode is on"],
    "dp_cca": ["DP-CCA", "Captured correlation (held-out)", "Strict mode"],
    "p3ls": ["P3LS simulation", "No privacy budget applies", "Max |B_P3LS − B_central|"],
    "var_admm": ["VAR-ADMM", "ADMM iterations", "Guarantee, in words"],
    "attack_lab": ["Attack lab (PLS)", "Attack success against ε", "Plain PLS"],
    "calculator": ["Noise & budget calculator", "Analytic Gaussian σ"],
}
# page path -> (tab to open first or None, label of the primary button that adds a chart (None: the first
#               primary button), (number input, value) set first to keep the run short: the fewest replicates
#               allowed).
RUN_BUTTONS = {
    "edpls": (None, "Run RMSEP sweep", ("Replicates per ε", "5")),
    "dp_pcr": (None, "Run RMSEP sweep", ("Replicates per ε", "5")),
    "pca_gauss": ("Utility vs ε", "Run the sweep", ("Replicates", "1")),
    "dp_cca": ("Sweeps (ε, N, δ)", "Run the three sweeps", ("Replicates per point", "2")),
}


def visible_charts(page) -> int:
    return page.locator(f"{PLOTLY_CHART} >> visible=true").count()


def assert_texts(page, texts, where, timeout_ms: float = 30_000):
    """Each text appears in the main area (waiting for it: a rerun may still be drawing)."""
    main = page.locator('[data-testid="stMain"]')
    missing = []
    for text in texts:
        try:
            main.get_by_text(text).first.wait_for(state="attached", timeout=timeout_ms)
        except Exception:
            missing.append(text)
    assert not missing, f"{where}: missing text {missing}"


def open_tab(page, label: str) -> None:
    """Click a tab; lazy tabs (ui/tabs.py) compute its content in the rerun the click starts: wait for it."""
    page.get_by_role("tab", name=label).click()
    page.wait_for_timeout(300)
    wait_idle(page, timeout_ms=LOAD_MS)


def set_number(page, label: str, value: str, required: bool = True) -> None:
    """Type into a visible number input (main area) and wait for the rerun it triggers."""
    box = page.locator('[data-testid="stMain"]').get_by_role("spinbutton", name=label, exact=True)
    box = box.locator("visible=true").first
    if not required and box.count() == 0:
        return
    box.fill(value)
    box.press("Enter")
    page.wait_for_timeout(300)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert box.input_value() == value, f"{label}: could not set {value}"


def press_and_wait_for_new_chart(page, label: str | None, where: str) -> None:
    """Press the button (label None: the first visible primary button); a new chart must appear."""
    before = visible_charts(page)
    if label is None:
        buttons = page.locator('[data-testid="stMain"] [data-testid="stBaseButton-primary"] >> visible=true')
        if buttons.count() == 0:
            # No button to press, so the page draws its chart on its own; it had not yet when the script first
            # stood idle for the settle time (the VAR-ADMM page in CI run 9, load 7-9: no chart and no primary
            # button, and the old code then failed looking for the button). The chart must still come.
            page.wait_for_function(
                "([sel, n]) => Array.from(document.querySelectorAll(sel)).filter(e => e.offsetParent !== null)"
                ".length > n", arg=[PLOTLY_CHART, before], timeout=SWEEP_MS)
            wait_idle(page, timeout_ms=SWEEP_MS)
            assert_no_exception(page, f"{where} (its first run's chart)")
            return
        button = buttons.first
        label = button.inner_text().strip()
    else:
        button = page.get_by_role("button", name=label)
    button.click()
    page.wait_for_function(
        "([sel, n]) => Array.from(document.querySelectorAll(sel)).filter(e => e.offsetParent !== null).length > n",
        arg=[PLOTLY_CHART, before], timeout=SWEEP_MS,
    )
    wait_idle(page, timeout_ms=SWEEP_MS)
    assert_no_exception(page, f"{where} after '{label}'")


def metric_value(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


# the data picker's own file input (its key is "<page>_data_upload"): a page may have other uploaders (PCA-Gauss's
# separate public file), which must not receive the data
PICKER_INPUT = '[class*="_data_upload"] [data-testid="stFileUploaderDropzoneInput"]'


def upload(page, name: str, data: bytes) -> None:
    page.locator(PICKER_INPUT).first.set_input_files(
        files=[{"name": name, "mimeType": "text/csv", "buffer": data}])


def choose_upload(page) -> None:
    page.locator('[data-testid="stRadio"]').filter(has_text="Data source").get_by_text("Upload a file").click()
    page.locator(PICKER_INPUT).first.wait_for(state="attached")


# ----------------------------------------------------------------------------------------- tests
def test_home_lists_the_five_methods(page, app_url):
    goto_page(page, app_url, "")
    page.get_by_role("heading", name="PrivaLab").wait_for()
    wait_idle(page)
    links = page.locator('[data-testid="stPageLink"]')
    # the script run can end before a busy browser (cold start: plotly.js loading) has drawn its elements
    page.wait_for_function("n => document.querySelectorAll('[data-testid=stPageLink]').length >= n",
                           arg=len(PAGE_PATHS), timeout=LOAD_MS)
    labels = " ".join(links.all_inner_texts())
    for info in METHOD_PAGES:
        assert info.title in labels, f"home page: no link to {info.title}"
    assert links.count() == len(PAGE_PATHS)
    # the data picker loaded the first sample set and shows its shape
    page.locator('[data-testid="stMain"]').get_by_text(re.compile(r"\d+ rows × \d+ columns")).first.wait_for()
    assert_no_exception(page, "home")
    screenshot(page, "home")


@pytest.mark.parametrize("path", [p for p in PAGE_PATHS if p not in NEEDS_USER_FILES])
def test_page_draws_charts_on_sample_data(page, app_url, path):
    """Every registered page; a page without a chart on load must draw one after its primary button."""
    goto_page(page, app_url, path)
    page.locator('[data-testid="stMain"] h1').first.wait_for(state="visible", timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert page.url.rstrip("/").endswith(f"/{path}")
    assert_no_exception(page, path)
    assert_texts(page, EXPECTED_TEXT.get(path, [PAGE_PATHS[path].title]), path)
    pressed = False
    if not chart_coming(page, timeout_ms=LOAD_MS):
        # the page needs a click for its first chart (e.g. a long run)
        press_and_wait_for_new_chart(page, None, path)
        pressed = True
    else:
        first_chart(page, timeout_ms=LOAD_MS)  # sent by the script; plotly.js may still be drawing it
    if path in RUN_BUTTONS and not (pressed and RUN_BUTTONS[path][1] is None):
        tab, label, (number_label, value) = RUN_BUTTONS[path]
        if tab is not None:
            open_tab(page, tab)
        set_number(page, number_label, value, required=label is not None)
        press_and_wait_for_new_chart(page, label, path)
    assert visible_charts(page) >= 1
    screenshot(page, path)


def test_sidebar_navigation_keeps_the_budget(page, app_url):
    """Change ε on the calculator (the analytic σ metric follows), then move by the sidebar: ε persists."""
    from engine.privacy import analytic_gaussian_sigma

    goto_page(page, app_url, "calculator")
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page)
    assert metric_value(page, "Analytic Gaussian σ") == f"{analytic_gaussian_sigma(1.0, 1e-5, 1.0):.5g}"
    eps_box = page.locator('[data-testid="stSidebar"]').get_by_role("spinbutton", name="ε (epsilon)", exact=True)
    eps_box.fill("2")
    eps_box.press("Enter")
    expected = f"{analytic_gaussian_sigma(2.0, 1e-5, 1.0):.5g}"
    page.locator('[data-testid="stMetricValue"]').filter(has_text=expected).first.wait_for(timeout=30_000)
    wait_idle(page)
    assert_no_exception(page, "calculator after changing ε")
    page.locator('[data-testid="stSidebarNav"] a[href$="/dp_cca"]').click()
    page.wait_for_url(re.compile(r"/dp_cca$"))
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    eps_after = page.locator('[data-testid="stSidebar"]').get_by_role("spinbutton", name="ε (epsilon)", exact=True)
    assert eps_after.input_value() == "2"
    assert_texts(page, ["ε = 2"], "dp_cca after navigation")  # the strict-mode note quotes the budget in force
    assert_no_exception(page, "dp_cca after navigation")


GOOD_CSV = b"a,b,c\n1,2,3\n4,5,6\n7,8,9.5\n10,11,12\n"
BAD_CSV = b"a,b,c\n1,2,3\n4,oops,6\n7,8,9\n"


def test_home_upload_good_then_bad_file(page, app_url):
    goto_page(page, app_url, "")
    page.get_by_role("heading", name="PrivaLab").wait_for()
    wait_idle(page)
    choose_upload(page)
    upload(page, "browser_good.csv", GOOD_CSV)
    page.get_by_text("browser_good.csv: 4 rows × 3 columns").wait_for(timeout=30_000)
    wait_idle(page)
    assert_no_exception(page, "home after a good upload")
    upload(page, "browser_bad.csv", BAD_CSV)
    error = page.locator('[data-testid="stAlertContentError"]').filter(has_text="browser_bad.csv")
    error.wait_for(timeout=30_000)
    wait_idle(page)
    message = error.inner_text()
    assert "column 'b'" in message and "oops" in message, message
    assert_texts(page, ["Still using the previous data: browser_good.csv", "browser_good.csv: 4 rows × 3 columns"],
                 "home after a bad upload")
    assert_no_exception(page, "home after a bad upload")
    screenshot(page, "home_upload_rejected")


def _value_chain_csv(n_rows: int = 90, seed: int = 3) -> bytes:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 6))
    y = X @ np.array([1.0, -0.5, 0.3, 0.8, 0.0, -1.2]) + 0.1 * rng.normal(size=n_rows)
    frame = pd.DataFrame(X, columns=["sup_t1", "sup_t2", "sup_t3", "mfg_p1", "mfg_p2", "mfg_p3"])
    frame["kpi"] = y
    return frame.to_csv(index=False).encode()


def test_p3ls_upload_and_fit_then_reject_bad_file(page, app_url):
    """Upload a two-company table on the P3LS page: the federation fits on it; a bad file is refused."""
    goto_page(page, app_url, "p3ls")
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    choose_upload(page)
    upload(page, "two_companies.csv", _value_chain_csv())
    page.get_by_text("two_companies.csv: 90 rows × 7 columns").wait_for(timeout=60_000)
    wait_idle(page, timeout_ms=LOAD_MS)
    first_chart(page, timeout_ms=LOAD_MS)
    assert_no_exception(page, "p3ls on the uploaded file")
    # the prefix split finds the two companies, and the federation is fitted on them
    assert_texts(page, ["company sup", "company mfg", "Max |B_P3LS − B_central|"], "p3ls upload")
    r2 = float(metric_value(page, "Test R² P3LS (federated)"))
    assert r2 > 0.9, f"federated R² on a near-linear table: {r2}"
    screenshot(page, "p3ls_upload")
    upload(page, "broken_chain.csv", BAD_CSV)
    page.locator('[data-testid="stAlertContentError"]').filter(has_text="broken_chain.csv").wait_for(timeout=30_000)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert_texts(page, ["column 'b'", "Still using the previous data: two_companies.csv"], "p3ls bad upload")
    assert visible_charts(page) >= 1, "the previous data's results should stay on the page"
    assert_no_exception(page, "p3ls after a bad upload")


def test_edpls_sample_numbers_paper_mode_and_sweep(page, app_url):
    """edPLS on its default sample (the NIR consortium, 3,500 training rows): the recommended strict estimator by
    default (its choices, the private constant predictor beside it), the plain Analyze-Gauss fit selectable with
    the headline numbers right, paper mode says it is unproven, the sweep draws."""
    goto_page(page, app_url, "edpls")
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    plain = float(metric_value(page, "RMSEP, non-private"))
    sigma_y = float(metric_value(page, "σ_y (test)"))
    assert plain < 0.2 * sigma_y, (plain, sigma_y)  # 0.051 against 0.39 on the NIR consortium sample
    assert float(metric_value(page, "RMSEP, private")) > plain  # strict ε = 1 costs accuracy
    assert float(metric_value(page, "RMSEP, private constant")) >= sigma_y * 0.999  # a constant never beats σ_y
    assert visible_charts(page) == 2
    assert_texts(page, ["What the recommended estimator chose, and why", "Preprocessing", "Projection",
                        "proven guarantee", "Shareable release",
                        "Owner's workbook: contains private information"], "edpls strict, recommended")
    # the recommended fit has its own shareable model file (privalab.edpls_recommended.release/1)
    for key in ("edpls_export_model", "edpls_export_report", "edpls_export_workbook"):
        assert page.locator(f".st-key-{key} button").count() >= 1, f"no {key} button"
    # the plain Analyze-Gauss strict fit stays selectable, with its shareable model file
    page.locator('[data-testid="stMain"] [data-testid="stRadio"]').filter(has_text="Strict estimator").get_by_text(
        "plain Analyze-Gauss").click()
    page.locator('[data-testid="stMetric"]').filter(has_text="Rows clipped").first.wait_for(timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert metric_value(page, "Rows clipped").endswith("of 3500")
    assert float(metric_value(page, "RMSEP, private")) > plain
    assert visible_charts(page) == 2
    # the export bar: the shareable group and the owner's workbook (the coefficients are in the workbook)
    assert_texts(page, ["Strict mode", "proven guarantee", "Shareable release",
                        "Owner's workbook: contains private information"], "edpls strict, plain")
    for key in ("edpls_export_model", "edpls_export_report", "edpls_export_workbook"):
        assert page.locator(f".st-key-{key} button").count() >= 1, f"no {key} button"
    # paper-faithful mode: the page states that its total is not a proven guarantee
    page.locator('[data-testid="stSidebar"] [data-testid="stRadio"]').filter(has_text="Mode").get_by_text(
        "Paper-faithful").click()
    page.locator('[data-testid="stMetric"]').filter(has_text="cond(P'W)").first.wait_for(timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert_texts(page, ["What paper-faithful mode does and does not guarantee",
                        "these totals are not a proven guarantee"],
                 "edpls paper mode")
    assert_no_exception(page, "edpls paper mode")
    set_number(page, "Replicates per ε", "5")
    press_and_wait_for_new_chart(page, "Run RMSEP sweep", "edpls paper mode")
    assert visible_charts(page) == 3
    # the sweep's curves are results on private rows: they reach the owner's workbook, built on click
    name, body = download(page, "edpls_export_workbook", timeout_ms=LOAD_MS)
    sheets = pd.read_excel(io.BytesIO(body), sheet_name=None)
    assert name.endswith("_PRIVATE.xlsx") and list(sheets)[0] == "PRIVATE read me", (name, list(sheets))
    assert any(s.startswith("RMSEP sweep") for s in sheets), list(sheets)
    screenshot(page, "edpls_paper_sweep")


def test_deep_link_as_first_request_uses_the_app_navigation(browser_context, tmp_path):
    """A fresh server whose first request is /calculator: the page still runs through app.py's st.navigation
    (sections and page titles in the sidebar, the app's page config), not as a bare legacy pages/ script."""
    from browser_harness import StreamlitServer

    with StreamlitServer(log_path=tmp_path / "deep_link_server.log") as server:
        tab = browser_context.new_page()
        try:
            goto_page(tab, server.url, "calculator")
            first_chart(tab, timeout_ms=LOAD_MS)
            wait_idle(tab, timeout_ms=LOAD_MS)
            nav = tab.locator('[data-testid="stSidebarNav"]')
            nav.get_by_text("Noise & budget calculator").first.wait_for(timeout=30_000)
            text = nav.inner_text()
            assert "Methods" in text and "Tools" in text and "P3LS simulation" in text, text
            assert "privacy audit" not in text, f"legacy file-name navigation shown:\n{text}"
            assert tab.url.rstrip("/").endswith("/calculator")
            assert_no_exception(tab, "calculator opened by a deep link")
        finally:
            tab.close()
