"""The home page's guided demo (issue #10): ui.home.story's story and its rendering under AppTest."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from ui.home.story import DEMO_COST_EPSILONS, guided_story, leak_example
from ui.pages import METHOD_PAGES, TOOL_PAGES

#: The proven guarantee of a strict fit at the default budget, as the headline states it.
PROVEN = "(ε = 1, δ = 1e-5)-differential privacy per row (one row added or removed), proven"

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 120
STORY_CHARTS = ("demo_leak_chart", "demo_protect_chart", "demo_cost_chart")


@pytest.fixture(scope="module")
def story():
    """The default story: fresh privacy noise (the labels say "proven")."""
    return guided_story(epsilon=1.0, delta=1e-5, seed=0)


@pytest.fixture(scope="module")
def seeded_story():
    """A fixed noise seed (teaching): reproducible numbers for the statistical checks, labelled not proven."""
    return guided_story(epsilon=1.0, delta=1e-5, seed=0, noise_seed=0)


def _sentences(text: str) -> list[str]:
    return [t.strip() for t in text.split(". ") if t.strip()]


# ----------------------------------------------------------------------------------------- engine
def test_story_has_four_steps_in_order(story):
    assert [s.key for s in story.steps] == ["leak", "protect", "cost", "consortium"]
    assert [s.number for s in story.steps] == [1, 2, 3, 4]
    assert story.epsilon == 1.0 and story.delta == 1e-5
    assert story.fresh_noise and story.as_dict()["noise"] == "fresh"
    for step in story.steps:
        assert step.headline and step.title
        for n in step.numbers:
            assert math.isfinite(n.value), (step.key, n.key)
            assert n.guarantee.strip(), f"{step.key}/{n.key} states no guarantee"


def test_plain_pls_leaks_the_secret_band(story):
    leak = story.step("leak")
    assert leak.value("leak_corr") > 0.9
    assert leak.value("leak_hit") >= 0.9
    assert "no guarantee" in leak.get("leak_corr").guarantee
    # the picture is the secret band and its reconstruction, peak-scaled, on the 100 channels
    f = leak.figure
    assert len(f["axis"]) == len(f["secret"]["P"]) == len(f["leaked"]["P"]) == 100
    assert np.max(np.abs(f["leaked"]["P"])) == pytest.approx(1.0)


def test_strict_edpls_at_eps_1_stops_the_attack(seeded_story):
    protect = seeded_story.step("protect")
    corr, chance = protect.value("strict_corr"), protect.value("chance")
    assert corr < 0.3
    assert protect.value("strict_hit") <= 0.3
    assert 0.0 < chance < 0.2
    assert corr < seeded_story.step("leak").value("leak_corr") - 0.6
    assert protect.figure["verdict"] == "stops" and "no longer works" in protect.headline


def test_fresh_noise_strict_numbers_are_labelled_from_their_ledgers(story):
    """Default (fresh noise): the label says what the math gives, proven (ε = 1, δ = 1e-5), and the ledgers agree."""
    protect, cost = story.step("protect"), story.step("cost")
    assert protect.figure["status"] == "proven" and protect.figure["proven"] is True
    assert protect.figure["picture_status"] == "proven"
    assert PROVEN in protect.get("strict_corr").guarantee
    assert "not proven" not in protect.get("strict_corr").guarantee
    ledger = protect.figure["ledger"]
    assert len(ledger) == 1 and ledger.proven and ledger.status == "proven" and not ledger.caveats
    assert PROVEN in cost.get("rmsep_private").guarantee
    curve = cost.figure["curve"]
    assert set(curve.status) == {"proven"} and bool(curve.proven.all())


def test_a_known_noise_seed_is_labelled_not_proven_everywhere(seeded_story):
    protect, cost = seeded_story.step("protect"), seeded_story.step("cost")
    assert not seeded_story.fresh_noise
    for n in (protect.get("strict_corr"), protect.get("strict_hit"), cost.get("rmsep_private")):
        assert "not proven: the noise seed is known" in n.guarantee, n.key
        assert PROVEN not in n.guarantee
    assert protect.figure["status"] == "not proven" and protect.figure["proven"] is False
    assert protect.figure["ledger"].status == "not proven"
    curve = cost.figure["curve"]
    assert set(curve.status) == {"not proven"} and not curve.proven.any()
    assert "not proven" in cost.notes[-1] and "own proven guarantee" not in cost.notes[-1]


def test_success_sentences_carry_the_utility(seeded_story):
    """'The attack no longer works' / 'the leak is gone' always come with the protected model's RMSEP."""
    protect = seeded_story.step("protect")
    f = protect.figure
    claim = next(t for t in _sentences(protect.headline) if "no longer works" in t)
    assert "RMSEP" in claim and "predicting the mean" in claim and f"{f['sim_rmsep_strict']:.3g}" in claim
    assert f"{f['sim_rmsep_mean']:.3g}" in claim
    if not f["sim_rmsep_strict"] < f["sim_rmsep_mean"]:  # the honest part: a useless model is called so
        assert "no better than predicting the mean" in claim
    assert "the leak is gone" in protect.title and f"RMSEP {f['sim_rmsep_strict']:.3g}" in protect.title
    # the title's success claim says, in the same sentence, whether the protected model beats the mean
    useless = not f["sim_rmsep_strict"] < f["sim_rmsep_mean"]
    assert ("predicts no better than the mean" in protect.title) == useless
    assert ("predicts better than the mean" in protect.title) == (not useless)


def test_privacy_costs_rmsep_on_the_nir_sample_set(seeded_story):
    cost = seeded_story.step("cost")
    private, plain, constant, sigma_y = (cost.value(k) for k in ("rmsep_private", "rmsep_plain", "rmsep_constant",
                                                                  "sigma_y"))
    assert private >= plain
    assert 0.1 < sigma_y < 1.0  # moisture, % w/w (sample_data/README: sd 0.38)
    assert "no guarantee" in cost.get("rmsep_plain").guarantee
    curve = cost.figure["curve"]
    assert sorted(curve.epsilon) == sorted(set(DEMO_COST_EPSILONS) | {1.0})
    # the cost does not grow with epsilon, and the headline states sigma_y for scale. Issue #30: with the declared
    # [0, 100] range refined privately at an adaptive share, 96 rows at epsilon = 1 already sit at about sigma_y
    # (0.38, the private constant's level) as they do at epsilon = 1000 (0.39: no public spectra, 96 rows), so the
    # two ends agree within the replicates' noise instead of the small-epsilon end being several units off
    med = curve.sort_values("epsilon")["median"]
    assert med.iloc[-1] <= 1.1 * med.iloc[0]
    assert "σ_y" in cost.headline and f"{sigma_y:.3g}" in cost.headline
    if private >= sigma_y:
        assert "no better than predicting the mean" in cost.headline
    # the success sentence carries the utility: the private constant predictor at the same budget beside it
    assert f"{constant:.3g}" in cost.headline and "private constant predictor" in cost.headline
    assert ("PLS, better than the private constant predictor" in cost.headline) == (private < constant)
    assert ("PLS, no better than the private constant predictor" in cost.headline) == (private >= constant)
    # a constant c scores sqrt(σ_y² + (mean - c)²) >= σ_y on the test rows (closed form), at every ε
    assert (curve["constant"] >= sigma_y * (1 - 1e-12)).all()


def test_cost_step_runs_the_recommended_estimator_and_measures_against_sklearn(seeded_story, story):
    """Step 3 is the recommended strict estimator (its own ledgers: three releases inside the budget), its
    non-private reference is scikit-learn's PLS on the same split, and the old strict fit is reported beside."""
    from sklearn.cross_decomposition import PLSRegression

    from engine.methods.edpls.recommended import RELEASES, make_strict_edpls
    from engine.methods.tukey_em import PTR_RELEASE, TUKEY_RELEASE
    from engine.privacy.ranges import RANGE_RELEASE, RANGE_RELEASE_2, ZOOM_RELEASE
    from ui.home.story import DEMO_Y_RANGE, NIR_COMPONENTS, _nir_split

    cost = seeded_story.step("cost")
    curve = cost.figure["curve"]
    X, y, tr, te, _ = _nir_split()
    sk = PLSRegression(NIR_COMPONENTS, scale=False).fit(X[tr], y[tr])
    sk_rmsep = float(np.sqrt(np.mean((sk.predict(X[te]).ravel() - y[te]) ** 2)))
    assert curve["nonprivate"].to_numpy() == pytest.approx(sk_rmsep, rel=1e-6)
    assert cost.value("rmsep_plain") == pytest.approx(sk_rmsep, rel=1e-6)
    assert set(curve["model"]) == {"strict edPLS, recommended estimator"}
    # the count, the private refinement of the declared range (in two halves, the second on the log grid or a
    # zoom, on the moments path; one draw on TukeyEM's), then the moments (or TukeyEM with many rows)
    moments = {", ".join([RELEASES[0], RANGE_RELEASE, second, *RELEASES[1:]]) for second in (RANGE_RELEASE_2,
                                                                                            ZOOM_RELEASE)}
    tukey = ", ".join([RELEASES[0], RANGE_RELEASE, PTR_RELEASE, TUKEY_RELEASE])
    assert set(curve["releases"]) <= moments | {tukey} and moments & set(curve["releases"])
    fit = make_strict_edpls(1.0, 1e-5, y_range=DEMO_Y_RANGE).fit(X[tr], y[tr])
    led = fit.privacy_ledger_
    assert led.total(led.accountant, 1e-5)[0] == pytest.approx(1.0)  # the whole fit inside ε = 1
    fresh = story.step("cost").get("rmsep_private").guarantee  # fresh noise: the proven label names the releases
    assert PROVEN in fresh and all(name in fresh for name in RELEASES)
    # the earlier strict fit is reported at the same budgets (and is no better than non-private PLS)
    assert (curve["plain_strict"] > curve["nonprivate"]).all()
    assert all(f"{v:.3g} at ε = {e:g}" in cost.notes[1] for v, e in zip(curve["plain_strict"], curve["epsilon"]))


def test_two_default_stories_draw_different_noise(story):
    """Fresh noise by default: a second run gives other private numbers (same data, same plain numbers)."""
    again = guided_story(epsilon=1.0, delta=1e-5, seed=0)
    assert again.step("leak").value("leak_corr") == story.step("leak").value("leak_corr")  # no noise there
    assert again.step("protect").value("strict_corr") != story.step("protect").value("strict_corr")
    # Not the median at the chosen ε: when James-Stein shrinks the private mean all the way, the intercept is
    # the centre of a privately chosen histogram range, an atom the median of 10 draws can land on twice (CI
    # run of 34ecc9e: 0.38956... both times). The mean over every ε's replicates has no such atom.
    assert not np.array_equal(again.step("cost").figure["curve"]["mean"], story.step("cost").figure["curve"]["mean"])
    assert not np.array_equal(again.step("protect").figure["private"]["P"],
                              story.step("protect").figure["private"]["P"])


def test_story_is_reproducible_for_a_fixed_noise_seed(seeded_story):
    again = guided_story(epsilon=1.0, delta=1e-5, seed=0, noise_seed=0).as_dict()
    first = seeded_story.as_dict()
    first.pop("seconds"), again.pop("seconds")
    assert first == again
    assert first["noise"].startswith("fixed")


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_story_holds_for_other_seeds(seed, seeded_story):
    s = guided_story(epsilon=1.0, delta=1e-5, seed=seed, noise_seed=seed)
    assert s.step("leak").value("leak_corr") > 0.9
    assert s.step("protect").value("strict_corr") < 0.3
    assert s.step("cost").value("rmsep_private") >= s.step("cost").value("rmsep_plain")
    # other simulated data: the noise-free numbers of step 1 change too
    assert s.step("leak").value("leak_corr") != seeded_story.step("leak").value("leak_corr")


def test_the_demo_shows_both_worlds(story, seeded_story):
    """Issue #31: the small set where privacy costs everything, then the consortium-size pooled set (>= 5,000 rows)
    where the private model at ε = 1 is within twice the non-private RMSEP, and a sentence on what makes the
    difference. Oracle for the second world: the private fit's RMSEP against non-private PLS on the same split
    (the known noise seed makes the median of 5 draws reproducible; fresh noise keeps the structure and the label).
    """
    for s in (story, seeded_story):
        cost, scale = s.step("cost"), s.step("consortium")
        assert cost.value("rmsep_private") >= cost.value("sigma_y")  # the first world: no better than the mean
        f = scale.figure
        assert f["n_train"] + f["n_test"] >= 5000 and f["n_public"] == 500
        difference = scale.notes[0]
        assert "What makes the difference" in difference and "public spectra" in difference and "rows" in difference
    scale = seeded_story.step("consortium")
    private, plain = scale.value("rmsep_private"), scale.value("rmsep_plain")
    assert private <= 2 * plain and scale.figure["within"], (private, plain)
    assert private < scale.value("sigma_y") and "within 2× the non-private RMSEP" in scale.headline
    assert "noise seed is known" in scale.get("rmsep_private").guarantee
    assert PROVEN in story.step("consortium").get("rmsep_private").guarantee


def test_headline_follows_the_numbers_at_a_useless_epsilon():
    """At ε = 10^5 strict edPLS no longer stops the attack, and the story must say so."""
    s = guided_story(epsilon=1e5, delta=1e-5, seed=0, noise_seed=0)
    protect = s.step("protect")
    assert protect.value("strict_corr") > 0.5
    assert protect.figure["verdict"] != "stops"
    assert "no longer works" not in protect.headline and "still works" in protect.headline
    assert "the leak is not closed" in protect.title


def test_leak_example_is_the_cheap_teaser():
    t = leak_example(0)
    assert t["correlation"] > 0.9 and t["hit"]
    assert len(t["axis"]) == len(t["secret"]) == len(t["leaked"]) == 100
    assert "no guarantee" in t["guarantee"]


@pytest.mark.parametrize("bad", [dict(epsilon=0.0), dict(epsilon=-1.0), dict(epsilon=math.inf), dict(delta=0.0),
                                 dict(delta=1.0)])
def test_story_refuses_a_bad_budget(bad):
    with pytest.raises(ValueError):
        guided_story(**{"epsilon": 1.0, "delta": 1e-5, **bad})


# ----------------------------------------------------------------------------------------- app
def chart_keys(at) -> list[str]:
    return [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")]


def test_home_shows_the_demo_button_and_one_teaser_chart():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception
    assert at.title[0].value == "PrivaLab"
    assert "Guided demo" in [s.value for s in at.subheader]
    assert at.button(key="demo_run").label == "Run the guided demo"
    assert chart_keys(at) == ["demo_teaser_chart"]  # one small chart, so plotly.js loads on the home page
    assert any("no guarantee" in c.value for c in at.caption)  # the teaser says it is plain PLS
    assert len(at.get("page_link")) == len(METHOD_PAGES + TOOL_PAGES)
    assert not at.metric


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_home_demo_click_shows_the_three_steps():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.button(key="demo_run").click().run()
    assert not at.exception, at.exception
    assert chart_keys(at) == list(STORY_CHARTS)
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["Plain PLS: |corr| with the secret band"]) > 0.9
    assert float(metrics["edPLS strict ε = 1: |corr| with secret"]) < 0.3
    private = float(metrics["RMSEP, strict edPLS ε = 1"])
    assert private >= float(metrics["RMSEP, non-private PLS"])
    assert float(metrics["RMSEP, private constant ε = 1"]) >= float(metrics["σ_y (test responses)"])
    assert "σ_y (test responses)" in metrics
    markdown = " ".join(m.value for m in at.markdown)
    for heading in ("#### 1.", "#### 2.", "#### 3.", "#### 4."):
        assert heading in markdown
    assert "proven guarantee" in markdown  # the ledger sentence of the strict model
    assert "What makes the difference" in markdown  # the second world's sentence (issue #31)
    assert float(metrics["Consortium: RMSEP, strict edPLS ε = 1"]) <= 2 * float(
        metrics["Consortium: RMSEP, non-private PLS"])
    captions = " ".join(c.value for c in at.caption)
    assert PROVEN in captions and "no guarantee" in captions
    # "go deeper" links to the attack lab and edPLS, on top of the home page's own links
    links = [link.proto.page for link in at.get("page_link")]
    assert len(links) == len(METHOD_PAGES + TOOL_PAGES) + 2
    assert [Path(p).stem for p in links[-2:]] == ["attack_lab", "edpls"]
    assert isinstance(at.session_state["demo_story"].seconds, float)

    # The story survives reruns, and the home page's data picker still works below it.
    at.selectbox(key="home_data_sample").set_value("Solar PV, 44 sites (synthetic)").run()
    assert not at.exception
    assert chart_keys(at) == list(STORY_CHARTS)
    assert at.session_state["pl_dataset"].name == "Solar PV, 44 sites (synthetic)"
    assert any("rows ×" in m.value for m in at.markdown)
