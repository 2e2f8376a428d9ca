"""The home page's guided demo (issue #10): one click runs ``ui.home.story.guided_story`` and shows
its four steps (plain PLS leaks, edPLS protects, at this cost in RMSEP on a small set; step 3 is the recommended
strict estimator beside the private constant predictor; step 4, issue #31, the second world: a consortium-size
pooled set where the private model is useful, and what makes the difference). Widgets only, no math.

Before the click the section shows one small teaser chart (``ui.home.story.leak_example``, ~20 ms,
cached), so that plotly.js loads in a new browser tab while the user reads.

Noise (issue #15): every click draws fresh privacy noise (the story is not cached across clicks or
sessions), unless the sidebar's "Reproducible noise (teaching)" switch is on (``pl_reproducible``):
then the noise seed is fixed and every strict number says "not proven: the noise seed is known".
"""
from __future__ import annotations

import streamlit as st

from ui.attack_lab.figures import attack_reconstruction_figure
from ui.budget import TEACHING_NOISE_SEED
from ui.home.figures import demo_cost_figure, demo_leak_figure
from ui.home.story import GuidedStory, guided_story, leak_example
from ui.ledger_view import show_ledger

STATE_KEY = "demo_story"
INTRO = (
    "Four steps on sample data, a few seconds: **(1)** two companies share one plain PLS model and "
    "one of them reads the other's secret out of it; **(2)** whether edPLS in strict mode (differential "
    "privacy) stops that attack, and what the protected model still predicts; **(3)** what the protection "
    "costs in prediction error on a small set of NIR spectra; **(4)** the same on a consortium-size pooled set "
    "with published spectra, and what makes the difference. Every number is a median over several runs and "
    "says which guarantee it has, from the privacy ledger of the fits behind it."
)


@st.cache_data(show_spinner=False, max_entries=4)
def _teaser(seed: int = 0) -> dict:
    return leak_example(seed)


@st.cache_data(show_spinner=False, max_entries=16)
def _story_fixed_noise(epsilon: float, delta: float, seed: int, noise_seed: int) -> GuidedStory:
    return guided_story(epsilon, delta, seed, noise_seed=noise_seed)


def _story(epsilon: float, delta: float, seed: int, noise_seed: int | None) -> GuidedStory:
    """Fresh noise (None): a new story on every click, never cached. A fixed noise seed: cached."""
    if noise_seed is None:
        return guided_story(epsilon, delta, seed)
    return _story_fixed_noise(epsilon, delta, seed, int(noise_seed))


def _numbers(step) -> None:
    cols = st.columns(len(step.numbers))
    for col, n in zip(cols, step.numbers):
        col.metric(n.label, n.display)
        col.caption(n.guarantee)


def _cost_figure(f: dict):
    """Step 3's figure, with the private constant predictor's median RMSEP as a dashed line (the baseline a
    private model must beat) when the curve has it."""
    fig = demo_cost_figure(f["curve"], sigma_y=f["sigma_y"], epsilon=f["epsilon"], unit=f["unit"],
                           response=f["response"])
    curve = f["curve"]
    if "constant" in curve.columns:
        c = curve.sort_values("epsilon")
        fig.add_scatter(x=c["epsilon"], y=c["constant"], mode="lines+markers", name="private constant predictor",
                        line={"dash": "dash", "color": "#7f7f7f"})
    return fig


def _show(story: GuidedStory) -> None:
    noise = ("fresh privacy noise (new on every run)" if story.fresh_noise else
             "reproducible noise (teaching): the noise seed is known, so no strict number here is proven")
    st.caption(f"Budget of the story: ε = {story.epsilon:g}, δ = {story.delta:g} (strict mode); simulated data "
               f"seed {story.data_seed}; {noise}; computed in {story.seconds:.1f} s.")
    leak, protect, cost = story.step("leak"), story.step("protect"), story.step("cost")

    st.markdown(f"#### 1. {leak.title}")
    st.markdown(leak.headline)
    _numbers(leak)
    f = leak.figure
    st.plotly_chart(demo_leak_figure(f["axis"], f["secret"]["P"], f["leaked"]["P"], secret_centre=f["secret_centre"],
                                     correlation=f["correlation"],
                                     title="Step 1: the secret band and what the attacker recovers"),
                    width="stretch", key="demo_leak_chart")
    for note in leak.notes:
        st.caption(note)

    st.markdown(f"#### 2. {protect.title}")
    st.markdown(protect.headline)
    _numbers(protect)
    f = protect.figure
    st.plotly_chart(attack_reconstruction_figure(f["axis"], f["secret"], f["plain"], f["private"],
                                                 private_label=f["private_label"],
                                                 secret_label="party 2's secret band (simulated truth)",
                                                 secret_centre=f["secret_centre"]),
                    width="stretch", key="demo_protect_chart")
    for note in protect.notes:
        st.caption(note)
    st.markdown("**Guarantee of the edPLS model in the picture:**")
    show_ledger(f["ledger"], delta=story.delta)

    st.markdown(f"#### 3. {cost.title}")
    st.markdown(cost.headline)
    _numbers(cost)
    f = cost.figure
    st.plotly_chart(_cost_figure(f), width="stretch", key="demo_cost_chart")
    for note in cost.notes:
        st.caption(note)

    scale = story.step("consortium")
    st.markdown(f"#### 4. {scale.title}")
    st.markdown(scale.headline)
    _numbers(scale)
    difference, *rest = scale.notes
    st.markdown(difference)
    for note in rest:
        st.caption(note)

    st.markdown("**Go deeper**")
    c1, c2 = st.columns(2)
    c1.page_link("pages/attack_lab.py", label="Attack lab: run the attack yourself, on the simulation or your data",
                 icon=":material/bug_report:")
    c2.page_link("pages/edpls.py", label="edPLS: fit on your spectra, RMSEP-vs-ε curves, samples needed",
                 icon=":material/stacked_line_chart:")


def guided_demo() -> None:
    """The "Guided demo" section of the home page."""
    st.subheader("Guided demo")
    st.markdown(INTRO)
    epsilon = float(st.session_state.get("pl_epsilon", 1.0))
    delta = float(st.session_state.get("pl_delta", 1e-5))
    noise_seed = TEACHING_NOISE_SEED if st.session_state.get("pl_reproducible") else None
    st.caption(f"The story runs at the privacy budget set on the method pages (now ε = {epsilon:g}, "
               f"δ = {delta:g}), in strict mode, with "
               + ("fresh privacy noise on every run." if noise_seed is None else
                  "reproducible noise (the teaching switch is on: nothing is proven)."))
    clicked = st.button("Run the guided demo", type="primary", key="demo_run", icon=":material/play_arrow:")
    if clicked:
        with st.status("Running the guided demo…", expanded=True) as status:
            st.write("Simulating two companies, attacking plain PLS and edPLS, and fitting strict edPLS on the "
                     "NIR sample spectra at several ε and on the consortium's pooled set…")
            try:
                story = _story(epsilon, delta, 0, noise_seed)
            except ValueError as err:
                status.update(label="The guided demo could not run", state="error")
                st.error(f"The guided demo could not run: {err}")
                return
            status.update(label=f"Guided demo done ({story.seconds:.1f} s)", state="complete", expanded=False)
        st.session_state[STATE_KEY] = story
    story = st.session_state.get(STATE_KEY)
    if story is None:
        t = _teaser(0)
        st.plotly_chart(
            demo_leak_figure(t["axis"], t["secret"], t["leaked"], secret_centre=t["secret_centre"],
                             correlation=t["correlation"], height=280),
            width="stretch", key="demo_teaser_chart",
        )
        st.caption(f"Teaser, one simulated data set: {t['guarantee']} The demo shows how edPLS closes this leak "
                   "and what that costs.")
        return
    _show(story)
