"""A chemometrician's session in a real browser (issue 31, "Done when"), one walk against one Streamlit server.

On the edPLS page a lab export (``sample_id``, 100 channels named by wavelength, two responses ``moisture`` and
``protein``; written here, synthetic) is uploaded and ``protein`` chosen; the planner speaks before any fit; a
two-step chain (SNV → Savitzky–Golay 1st derivative) is built step by step in the chain builder and a response
range declared in the Public information panel, which starts the fit; the shareable release JSON names the
chain, the channels in order and the response. On the Apply page that JSON and new spectra (channels shuffled,
an extra column) give predictions whose CSV equals predictions computed here from the JSON's coefficients and
intercept with SNV and SG written in numpy/scipy (tolerance from an error analysis). Back on edPLS (the upload and
the fit kept, not counted twice) a second fit (chain SNV alone) makes the run history hold two runs, compared side
by side; the privacy odometer's total is checked against the closed form of the ledger's composition (μ-GDP:
μ² adds up) and against dp-accounting's PLD accountant. The session is saved, then opened in a fresh tab (a new
Streamlit session): the declared range, the response and the chain come back, and the two runs are listed.

The page layout is top to bottom: data, planner, chain builder, Public information panel (which stops the page
until a range is declared), fit. So the chain is built before the range is declared: every fit is a release that
spends budget, and building the chain after the range would fit each intermediate chain.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import re

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.signal import savgol_coeffs, savgol_filter
from scipy.stats import norm

from browser_harness import assert_no_exception, download, goto_page, screenshot, wait_idle
from test_browser_app import LOAD_MS, assert_texts, choose_upload, metric_value, upload
from test_browser_lab_export import _selectbox_text
from test_browser_method_uploads import set_main_number

# 3,000 rows: at 300 the recommended fit's noisy slopes (100 channels, no public spectra, epsilon = 1) fail its
# gain test in 21 fits of 30 and the model is the private mean (0/300 fits at 3,000), which would leave the
# Apply page's channel matching untested
N_ROWS, N_NEW, N_WAVES = 3000, 40, 100
WAVES = [str(1100 + 8 * j) for j in range(N_WAVES)]  # 1100 ... 1892 nm
NAME = "lab_walk.csv"
Y_RANGE = (5.0, 15.0)  # protein, % w/w: a physical range a chemist would declare, not read off the rows
U = np.finfo(float).eps / 2  # unit roundoff
CHAIN_LABEL = "Preprocessing chain (steps in the order picked)"


# ------------------------------------------------------------------------------------------------ data
def lab_spectra(n: int, seed: int) -> pd.DataFrame:
    """NIR-like rows: three Gaussian bands whose heights follow the constituents, a sloped baseline and a
    multiplicative scatter factor per row, small noise; moisture and protein linear in two constituents."""
    rng = np.random.default_rng(seed)
    grid = np.linspace(0.0, 1.0, N_WAVES)
    bands = np.stack([np.exp(-(((grid - c) / w) ** 2)) for c, w in ((0.3, 0.05), (0.55, 0.08), (0.8, 0.04))])
    conc = rng.uniform(size=(n, 3))
    base = 0.3 + 0.1 * rng.normal(size=(n, 1)) + 0.05 * rng.normal(size=(n, 1)) * grid
    X = (1 + 0.05 * rng.normal(size=(n, 1))) * (base + 0.2 * conc @ bands) + 1e-3 * rng.normal(size=(n, N_WAVES))
    frame = pd.DataFrame(X.round(6), columns=WAVES)
    frame.insert(0, "sample_id", [f"S{seed}-{i:04d}" for i in range(1, n + 1)])
    frame["moisture"] = (10 + 4 * conc[:, 0] + 0.05 * rng.normal(size=n)).round(3)
    frame["protein"] = (8 + 3 * conc[:, 1] + 0.05 * rng.normal(size=n)).round(3)
    return frame


def new_spectra() -> pd.DataFrame:
    """Spectra to apply the model to: other rows, channels in another order, an id and an operator column."""
    frame = lab_spectra(N_NEW, seed=32).drop(columns=["moisture", "protein"])
    order = list(np.random.default_rng(3).permutation(WAVES))
    frame = frame[["sample_id", *order]]
    frame["operator"] = "AB"
    return frame


# ---------------------------------------------------------------------------------------------- oracles
def snv_sg1(X: np.ndarray) -> np.ndarray:
    """SNV (row centred, divided by its population std) then Savitzky–Golay 1st derivative (window 5,
    polyorder 2, edges 'nearest'): the chain's published definition, in numpy/scipy."""
    Z = (X - X.mean(axis=1, keepdims=True)) / X.std(axis=1, keepdims=True)
    return savgol_filter(Z, 5, 2, deriv=1, mode="nearest", axis=1)


def prediction_tolerance(X: np.ndarray, D: np.ndarray, coef: np.ndarray, intercept: float) -> np.ndarray:
    """Per-row bound on |app − oracle| from rounding alone (Higham's γ_m for the dot product; SNV's rounding,
    amplified by the cancellation x − mean, i.e. by max|x| / std(x), then passed through the SG kernel), times 16
    for the different but equivalent evaluation orders (the app scales each row by its max before SNV)."""
    m = X.shape[1]
    kappa = np.abs(X).max(axis=1) / X.std(axis=1)
    gain = np.abs(savgol_coeffs(5, 2, deriv=1)).sum()
    dot = m * (np.abs(D * coef).sum(axis=1) + abs(intercept))
    snv = m * gain * kappa * np.abs(coef).sum()
    return 16 * U * (dot + snv)


def gdp_delta(eps: float, mu: float) -> float:
    """δ(ε) of μ-GDP (Dong, Roth & Su 2019; Balle & Wang 2018 for one Gaussian)."""
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def gdp_mu(eps: float, delta: float) -> float:
    """The μ whose curve passes through (ε, δ)."""
    return brentq(lambda mu: gdp_delta(eps, mu) - delta, 1e-6, 50.0, xtol=1e-15, rtol=1e-15)


def gdp_eps(mu: float, delta: float) -> float:
    return brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, 200.0, xtol=1e-15, rtol=1e-15)


def ledger_mu(release: dict) -> tuple[float, float]:
    """(μ, δ) of a release JSON's ledger: Gaussian releases compose to μ = sqrt(Σ (Δ/σ)²); δ is their sum."""
    entries = release["ledger"]["entries"]
    assert entries and all(e["mechanism"] == "gaussian" for e in entries), entries
    mu = math.sqrt(sum((e["sensitivity"] / e["scale"]) ** 2 for e in entries if e["sensitivity"] > 0))
    return mu, sum(e["delta"] for e in entries)


def pld_epsilon(mus: list[float], delta: float) -> float:
    import dp_accounting
    from dp_accounting.pld import PLDAccountant

    acc = PLDAccountant(neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    for mu in mus:
        acc.compose(dp_accounting.GaussianDpEvent(1.0 / mu))
    return acc.get_epsilon(delta)


# -------------------------------------------------------------------------------------------- widgets
def main_area(page):
    return page.locator('[data-testid="stMain"]')


@contextlib.contextmanager
def showing(page, where: str):
    """On a failed wait inside: an AssertionError holding what the page shows, and a screenshot."""
    try:
        yield
    except Exception as err:
        screenshot(page, "walk_" + re.sub(r"[^a-z0-9]+", "_", where.lower())[:40])
        raise AssertionError(f"{where}: {type(err).__name__}: {str(err)[:300]}\nthe page shows:\n"
                             f"{_head_tail(main_area(page).inner_text())}") from None


def _head_tail(text: str) -> str:
    return text if len(text) < 5000 else f"{text[:1500]}\n[...]\n{text[-3500:]}"


def open_list(page, box):
    """Open the option list of a selectbox/multiselect; returns its input. A click may land while a rerun redraws
    the widget and open nothing: then the keyboard, then a second click."""
    field = box.get_by_role("combobox").first
    field.click(timeout=LOAD_MS / 4)
    for retry in (lambda: (field.focus(), field.press("ArrowDown")), lambda: field.click(), None):
        try:
            page.get_by_role("option").first.wait_for(timeout=5_000)
            return field
        except Exception:
            if retry is None:
                raise
            retry()
    return field


def pick_option(page, label: str, option: str) -> None:
    """Open the selectbox/multiselect labelled ``label`` and click ``option``; wait for the rerun. The list is
    opened by a click, else by the keyboard (a rerun may redraw the widget under the click); the option is clicked,
    else typed as a filter and taken with Enter."""
    box = main_area(page).locator('[data-testid="stMultiSelect"], [data-testid="stSelectbox"]').filter(
        has_text=label).first
    with showing(page, f"pick {option!r} in {label!r}"):
        field = open_list(page, box)
        wanted = page.get_by_role("option", name=option, exact=True).first
        try:
            wanted.click(timeout=10_000)
        except Exception as err:
            options = page.get_by_role("option").all_inner_texts()
            if option not in options:
                raise AssertionError(f"{option!r} is not offered: {options}") from err
            field.fill(option)
            field.press("ArrowDown")
            field.press("Enter")
    page.keyboard.press("Escape")
    page.wait_for_timeout(300)
    wait_idle(page, timeout_ms=LOAD_MS)


def clear_multiselect(page, label: str) -> None:
    """Remove every picked item by its own "Remove <item>" button (the clear-all icon shows on hover only), one
    click per rerun, until none is left."""
    box = main_area(page).locator('[data-testid="stMultiSelect"]').filter(has_text=label).first
    remove = box.get_by_role("button", name=re.compile(r"^Remove "))
    with showing(page, f"clear {label!r}"):
        box.wait_for(timeout=LOAD_MS / 4)
        for _ in range(20):
            if remove.count() == 0:
                return
            remove.first.click(timeout=LOAD_MS / 4)
            page.wait_for_timeout(300)
            wait_idle(page, timeout_ms=LOAD_MS)
        raise AssertionError(f"{label}: still {remove.count()} items after 20 removals")


def remove_tag(page, label: str, tag: str) -> None:
    box = main_area(page).locator('[data-testid="stMultiSelect"]').filter(has_text=label).first
    with showing(page, f"remove {tag!r} from {label!r}"):
        box.get_by_role("button", name=f"Remove {tag}", exact=True).first.click(timeout=LOAD_MS / 4)
    page.wait_for_timeout(300)
    wait_idle(page, timeout_ms=LOAD_MS)


def compare_runs(page, text: str) -> list[str]:
    """Pick in "Compare selected runs" every run whose label holds ``text``; returns their labels."""
    box = main_area(page).locator('[data-testid="stMultiSelect"]').filter(has_text="Compare selected runs").first
    with showing(page, "compare runs"):
        open_list(page, box)
        labels = [t.strip() for t in page.get_by_role("option").all_inner_texts() if text in t]
        page.keyboard.press("Escape")
    for label in labels:
        pick_option(page, "Compare selected runs", label)
    return labels


def go_sidebar(page, path: str) -> None:
    page.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').click()
    page.wait_for_url(re.compile(rf"/{path}$"))
    page.locator('[data-testid="stMain"] h1').first.wait_for(state="visible", timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)


def file_input(page, key: str):
    return page.locator(f'.st-key-{key} [data-testid="stFileUploaderDropzoneInput"]').first


def wait_metric(page, label: str, where: str) -> None:
    """Wait for the metric tile ``label``; on timeout the message holds what the page shows instead."""
    tile = main_area(page).locator('[data-testid="stMetric"]').filter(has_text=label).first
    try:
        tile.wait_for(timeout=LOAD_MS)
    except Exception:
        screenshot(page, f"walk_no_{re.sub(r'[^a-z]+', '_', where.lower())}")
        raise AssertionError(f"{where}: no '{label}' tile; the page shows:\n{main_area(page).inner_text()[:3000]}")
    wait_idle(page, timeout_ms=LOAD_MS)


def upload_to(page, key: str, name: str, data: bytes, mime: str) -> None:
    """Send a file to the uploader ``key`` and wait until it lists the file and the rerun is over (a second upload
    sent during the first one's rerun can be dropped with the redrawn widget)."""
    file_input(page, key).set_input_files(files=[{"name": name, "mimeType": mime, "buffer": data}])
    with showing(page, f"upload {name}"):
        page.locator(f".st-key-{key}").get_by_text(name).first.wait_for(timeout=LOAD_MS)
    page.wait_for_timeout(300)
    wait_idle(page, timeout_ms=LOAD_MS)


def odometer_caption(page) -> str:
    text = main_area(page).get_by_text("Session privacy odometer:").first
    text.wait_for(timeout=LOAD_MS)
    return text.inner_text()


def session_expander(page):
    box = page.locator('[data-testid="stSidebar"] [data-testid="stExpander"]').filter(has_text="Session: save or open")
    if not box.locator(".st-key-pl_session_save button").first.is_visible():
        box.locator("summary").first.click()
    return box


# ------------------------------------------------------------------------------------------------ walk
def test_a_chemometricians_session(page, app_url, browser_context, tmp_path):
    train = lab_spectra(N_ROWS, seed=31)
    (tmp_path / NAME).write_text(train.to_csv(index=False))
    data = (tmp_path / NAME).read_bytes()

    # 1. upload the lab export on edPLS and choose the second response
    goto_page(page, app_url, "edpls")
    page.locator('[data-testid="stMain"] h1').first.wait_for(state="visible", timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    choose_upload(page)
    upload(page, NAME, data)
    page.get_by_text(f"{NAME}: {N_ROWS} rows × {N_WAVES + 3} columns").first.wait_for(timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    pick_option(page, "Response (y)", "protein")
    assert_texts(page, ["Left out of X: moisture"], "edpls, protein chosen")

    # 2. the planner speaks before any fit; the page waits for a declared range
    assert_texts(page, ["Before you fit: what to expect", "Expected private RMSEP", "Enter the public range of y"],
                 "edpls before the fit", timeout_ms=LOAD_MS)
    assert page.locator('[data-testid="stMetric"]').filter(has_text="RMSEP, private").count() == 0

    # 3. the chain, step by step (the first step picked runs first); the recommended estimator's default first
    assert_texts(page, ["Chain: snv → sg1."], "the default chain")
    clear_multiselect(page, CHAIN_LABEL)
    assert_texts(page, ["Chain: none."], "chain cleared")
    pick_option(page, CHAIN_LABEL, "snv")
    pick_option(page, CHAIN_LABEL, "sg1")
    assert_texts(page, ["Chain: snv → sg1."], "chain built")

    # 4. declare the response's range in the Public information panel: the fit runs
    assert_texts(page, ["Public information"], "panel")
    set_main_number(page, "Lowest possible y", f"{Y_RANGE[0]:g}")
    set_main_number(page, "Highest possible y", f"{Y_RANGE[1]:g}")
    wait_metric(page, "RMSEP, private", "first fit")
    assert_no_exception(page, "edpls after the first fit")
    assert "1 fits composed" in odometer_caption(page)
    screenshot(page, "walk_first_fit")

    # 5. the shareable release names the chain, the channels in order and the response
    _, body = download(page, "edpls_export_model")
    rel1 = json.loads(body)
    f1 = rel1["fields"]
    assert rel1["kind"] == "shareable release"
    assert f1["preprocessing_chain"] == "snv+sg1" and f1["preprocessing"] == "snv+sg1"
    assert f1["channels"] == WAVES
    assert f1["response"] == "protein"
    assert f1["y_range"] == list(Y_RANGE)
    assert "moisture" not in body.decode() and "S31-0001" not in body.decode()

    # 6. apply it to new spectra on the Apply page (same session)
    go_sidebar(page, "apply_model")
    new = new_spectra()
    upload_to(page, "apply_model_upload", "model.json", body, "application/json")
    upload_to(page, "apply_data_upload", "new_spectra.csv", new.to_csv(index=False).encode(), "text/csv")
    wait_metric(page, "Rows predicted", "apply page")
    assert_no_exception(page, "apply page")
    assert metric_value(page, "Rows predicted") == str(N_NEW)
    assert_texts(page, ["2 column(s) that are not channels of the model were ignored: sample_id, operator"], "apply")
    _, csv = download(page, "apply_download")
    got = pd.read_csv(io.BytesIO(csv))
    assert list(got.columns) == ["protein (predicted)"] and len(got) == N_NEW

    # 7. the predictions equal the model's, computed here from the JSON
    coef, intercept = np.asarray(f1["coef_"], dtype=float), float(f1["intercept_"])
    X_new = new[WAVES].to_numpy(dtype=float)
    D = snv_sg1(X_new)
    expected = D @ coef + intercept
    err = np.abs(got["protein (predicted)"].to_numpy() - expected)
    tol = prediction_tolerance(X_new, D, coef, intercept)
    assert np.all(err <= tol), f"max error {err.max():.3g}, tolerance {tol.min():.3g}..{tol.max():.3g}"
    assert np.ptp(expected) > 0  # not a constant model

    # 8. back on edPLS: the upload and the fit are kept (shown again, not counted again); then a second fit
    go_sidebar(page, "edpls")
    wait_metric(page, "RMSEP, private", "back on edpls")
    assert "1 fits composed" in odometer_caption(page)
    remove_tag(page, CHAIN_LABEL, "sg1")  # SNV alone: the recommended estimator wants SNV first without public spectra
    assert_texts(page, ["Chain: snv."], "chain snv")
    with showing(page, "second fit"):
        page.wait_for_function("() => document.body.innerText.includes('2 fits composed')", timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert_no_exception(page, "edpls after the second fit")
    _, body2 = download(page, "edpls_export_model")
    rel2 = json.loads(body2)
    assert rel2["fields"]["preprocessing_chain"] == "snv" and rel2["fields"]["channels"] == WAVES

    # 9. the history holds two runs; compare them side by side
    assert_texts(page, ["Runs in this session"], "history")
    # the page fitted its default sample set on load (a run on another data set): compare the two on the upload
    mine = compare_runs(page, f"protein · upload: {NAME}")
    assert len(mine) == 2, mine
    with showing(page, "compare"):
        assert_texts(page, ["Private coefficients of the selected runs"], "compare", timeout_ms=LOAD_MS)
    assert main_area(page).get_by_text("Pick two runs or more to compare them.").count() == 0
    screenshot(page, "walk_compare")

    # 10. the odometer's total: both fits and their private constant predictors, composed
    caption = odometer_caption(page)
    match = re.search(r"total ε = ([0-9.]+) at δ = ([0-9.e+-]+)", caption)
    assert match, caption
    shown_eps, shown_delta = float(match.group(1)), float(match.group(2))
    (mu1, d1), (mu2, d2) = ledger_mu(rel1), ledger_mu(rel2)
    eps, delta = f1["epsilon"], f1["delta"]
    assert abs(gdp_eps(mu1, d1) - eps) < 1e-9 and abs(gdp_eps(mu2, d2) - eps) < 1e-9  # each fit at its budget
    mu_const = gdp_mu(eps, delta)  # the private constant predictor beside each fit: its own (ε, δ) release
    mus = [mu1, mu2, mu_const, mu_const]
    total_delta = d1 + d2 + 2 * delta
    closed = gdp_eps(math.sqrt(sum(mu ** 2 for mu in mus)), total_delta)
    pld = pld_epsilon(mus, total_delta)
    digits = 10 ** (math.floor(math.log10(closed)) - 2)  # the caption shows 3 significant digits
    assert abs(shown_eps - closed) <= 0.5 * digits + 1e-12, (shown_eps, closed)
    assert closed <= pld <= closed + 1e-3, (closed, pld)  # the PLD accountant is pessimistic, and close
    assert abs(shown_delta - total_delta) <= 0.05 * total_delta, (shown_delta, total_delta)
    assert eps < shown_eps < 4 * eps  # more than one fit, less than the sum of the four releases

    # 11. save the session, open it in a fresh tab (a new session): declarations and runs come back
    session_expander(page)
    _, saved = download(page, "pl_session_save")
    doc = json.loads(saved)
    assert doc["format"] == "privalab.session/1"
    assert [r.get("chain") for r in doc["runs"] if r.get("response") == "protein"] == ["snv+sg1", "snv"], doc["runs"]
    assert list(Y_RANGE) in [d.get("y_range") for d in doc["public"].values()]
    text = saved.decode()
    assert "rmsep" not in text.lower() and "S31-0001" not in text and "coef_" not in text
    fresh = browser_context.new_page()
    try:
        _reopen(fresh, app_url, saved, data)
    finally:
        fresh.close()


def _reopen(page, app_url: str, saved: bytes, data: bytes) -> None:
    goto_page(page, app_url, "edpls")
    page.locator('[data-testid="stMain"] h1').first.wait_for(state="visible", timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    session_expander(page)
    file_input(page, "pl_session_upload").set_input_files(
        files=[{"name": "privalab_session.json", "mimeType": "application/json", "buffer": saved}])
    with showing(page, "open the session file"):
        page.get_by_text("settings restored").first.wait_for(timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    # the opened runs (settings only) are listed under the history, here below the page's own sample-set fit
    assert_texts(page, ["Runs listed in the session file you opened"], "reopened, before the data")
    # the data are not in the file: upload them again; the response, the chain and the range come back
    if not page.get_by_role("radio", name="Upload a file").is_checked():
        choose_upload(page)
    upload(page, NAME, data)
    page.get_by_text(f"{NAME}: {N_ROWS} rows × {N_WAVES + 3} columns").first.wait_for(timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert_texts(page, ["Chain: snv."], "reopened chain", timeout_ms=LOAD_MS)
    low = main_area(page).get_by_role("spinbutton", name="Lowest possible y", exact=True).first
    high = main_area(page).get_by_role("spinbutton", name="Highest possible y", exact=True).first
    low.wait_for(timeout=LOAD_MS)
    assert float(low.input_value()) == Y_RANGE[0] and float(high.input_value()) == Y_RANGE[1]
    assert "protein" in _selectbox_text(page, "Response (y)")
    assert_no_exception(page, "reopened session")
    screenshot(page, "walk_reopened")
