"""The edPLS page end to end under AppTest: fit, both modes, sweep, strict sample-size simulation."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "edpls.py")


@pytest.fixture()
def page():
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def metrics(at):
    return {m.label: m.value for m in at.metric}


def test_strict_fit_shows_figures_ledger_and_downloads(page):
    m = metrics(page)
    assert float(m["RMSEP, non-private"]) < 0.1  # the NIR sample is easy without privacy
    assert "of 84" in m["Rows clipped"]
    assert len(page.get("plotly_chart")) == 2
    text = " ".join(x.value for x in page.markdown)
    assert "proven guarantee" in text and "Strict mode" in text
    labels = [b.proto.label for b in page.get("download_button")]
    assert "Coefficients (CSV)" in labels and "Model (JSON)" in labels and "Run report (HTML)" in labels


def test_paper_mode_states_its_flaws_and_unproven_total(page):
    page.sidebar.radio(key="edpls_mode").set_value("paper").run()
    assert not page.exception
    text = " ".join(x.value for x in page.markdown)
    assert "not** a proven guarantee" in text and "depends on the private data" in text
    assert "cond(P'W)" in metrics(page)


def test_sweep_draws_rmsep_curves(page):
    page.number_input(key="edpls_reps").set_value(5).run()
    page.button(key="edpls_run_sweep").click().run()
    assert not page.exception
    assert len(page.get("plotly_chart")) == 3
    curves = page.session_state["edpls_curves"]
    assert set(curves["epsilon"]) == {0.5, 1, 2, 5, 10, 50, 100}
    assert (curves["median"] >= curves["nonprivate"] * 0.5).all()


def test_bad_epsilon_grid_is_reported_not_crashing(page):
    page.text_input(key="edpls_eps_grid").set_value("1, banana").run()
    assert not page.exception
    assert any("ε grid" in e.value for e in page.error)


def test_strict_samples_needed_simulation(page):
    page.button(key="edpls_samples").click().run()
    assert not page.exception
    assert len(page.get("plotly_chart")) == 3
    assert any("strict mode" in x.value and "rows" in x.value for x in page.markdown)


def test_the_same_sweep_in_a_second_session_is_served_from_the_shared_cache():
    """Two sessions run the same sweep: the second gets the stored curves (no replay of the first one's
    progress bar, which st.cache_data would attempt and fail on) and draws the same chart."""
    from streamlit.testing.v1 import AppTest

    curves = []
    for _ in range(2):
        at = AppTest.from_file(PAGE, default_timeout=120)
        at.run()
        at.number_input(key="edpls_reps").set_value(5).run()
        at.button(key="edpls_run_sweep").click().run()
        assert not at.exception, at.exception
        assert len(at.get("plotly_chart")) == 3
        curves.append(at.session_state["edpls_curves"])
    assert curves[0].equals(curves[1])


def test_strict_mode_with_a_chain_fitted_on_the_private_rows_is_not_called_proven(page):
    page.selectbox(key="edpls_chain").set_value("msc").run()
    assert not page.exception
    text = " ".join(x.value for x in page.markdown)
    assert "not** a proven guarantee" in text and "proven guarantee." not in text.replace("not** a proven guarantee", "")
    report = page.session_state["export_report_edpls"]
    assert "not a proven guarantee" in report.guarantee and "msc" in report.guarantee
    assert not report.ledger.proven
