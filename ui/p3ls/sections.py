"""P3LS simulation: vertically federated PLS with removable masks, shown party by party
(issue #8; spec p3ls.md). Thin page: widgets -> engine.methods.p3ls -> figures.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from engine.data import DataError
from engine.methods.p3ls import (
    NO_RELEASE_REASON,
    NOT_DP_STATEMENT,
    blocks_from_frame,
    columns_by_prefix,
)
from engine.reporting.report import DataInfo, RunReport
from ui.column_choice import proposed_responses
from ui.data_picker import usable_dataset
from ui.exports import export_bar, owner_secret, show_chart
from ui.federation_run import federation_section, p3ls_flower_runs, p3ls_has_flower
from ui.jobs_view import fit_wait
from ui.p3ls.figures import (
    p3ls_coefficients_figure,
    p3ls_contribution_figure,
    p3ls_kpi_error_figure,
    p3ls_sequence_figure,
    p3ls_validation_figure,
)
from ui.p3ls.tasks import p3ls_federation
from ui.runtime.jobs import JobError, run_upload
from ui.setting_errors import setting_error
from ui.tables import human_headers
from ui.tabs import lazy_tabs

SPLIT_MODES = ("By column prefix", "Choose columns per party")
MASK_MODES = ("Dense random orthogonal (default)", "Block-diagonal (FedSVD's generator)")


# --------------------------------------------------------------------------- cached engine call
@st.cache_data(show_spinner="Running the federation (keys, masked training, recovery, inference) ...",
               max_entries=16)
def run_federation(df: pd.DataFrame, party_columns: tuple, responses: tuple, label_holder: int, k_max: int,
                   split_seed: int, secure_aggregation: bool, block_size: int | None, file: str,
                   upload: bool = False) -> dict:
    """Everything the page shows, from one protocol run (``ui.p3ls.tasks.p3ls_federation``; an upload's in a
    worker with the job budgets). ``split_seed`` fixes the row split only: the masks come from fresh OS entropy
    (a mask drawn from a known seed hides nothing), so the run is cached per arguments rather than recomputed."""
    return run_upload(upload, p3ls_federation, df, party_columns, responses, label_holder, k_max, split_seed,
                      secure_aggregation, block_size, file, label=f"The federation on {file}")


# --------------------------------------------------------------------------- page sections
def intro() -> None:
    st.markdown(
        "Companies along a value chain measure **different variables of the same batches**. P3LS "
        "(Nguyen Duy & Nikzad-Langerodi) fits **one PLS model on all their columns without pooling the raw "
        "data**: a trusted authority (TA) hands out random orthogonal masks, every company sends only its "
        "masked block to a server (CSP), the CSP runs PLS on the masked data, and each company removes the "
        "masks from its own part of the model. Below, the whole protocol runs party by party: every message, "
        "what each party ends up holding, the accuracy against a company working alone and against pooling "
        "everything, and each party's contribution."
    )
    st.info(
        f"**No privacy budget applies to this page.** {NOT_DP_STATEMENT} The ε/δ settings of the other "
        "pages do not apply here.",
        icon=":material/info:",
    )


#: Where each setting an engine message can be about is on this page (ui.setting_errors), by its real label.
RESPONSES_LABEL = "Responses (KPIs), held by the label contributor"
SPLIT_LABEL = "Split the columns among parties"
HOLDER_LABEL = "Label contributor (holds the KPIs; also contributes its own columns)"
SETTING_PLACES = (
    (("response", "kpi", "y has"), f"in '{RESPONSES_LABEL}'"),
    (("n_components", "k_max"), "in 'Largest k searched on validation rows' under 'Protocol settings'"),
    (("block_size",), "in the block size of 'Row masks (m × m)' under 'Protocol settings'"),
    (("label_holder",), f"in '{HOLDER_LABEL}'"),
    (("part", "column", "block", "identical"), f"in the party columns under '{SPLIT_LABEL}'"),
)
SETTINGS_FALLBACK = (f"The settings are '{RESPONSES_LABEL}', '{SPLIT_LABEL}', '{HOLDER_LABEL}' and "
                     "'Protocol settings' above.")


def data_section():
    return usable_dataset(
        "process", key="p3ls_data",
        hint="Pick the sample value chain or upload a table with one row per batch and the companies' columns.",
        needs="a federation needs at least two variables and one response")


def responses_section(dataset) -> list:
    """The responses (KPIs), held by the label contributor."""
    numeric = dataset.numeric_columns
    # the proposal of edPLS and DP-PCR (one function): the declared responses of a sample set (they come first),
    # else the first candidate; a file without a response column stops here with the same message
    candidates = proposed_responses(dataset)
    default_responses = [c for c in candidates if c in dataset.response_columns] or candidates[:1]
    response_key = f"p3ls_responses_{dataset.name}"
    return st.multiselect(RESPONSES_LABEL, numeric, default=default_responses,
                          key=response_key)


def parties_by_prefix(candidates: list) -> dict:
    separator = st.text_input("Party prefix ends at", "_", max_chars=3, key="p3ls_separator",
                              help="s1_x03 with '_' belongs to party s1.")
    prefix_groups = columns_by_prefix(candidates, separator)
    party_columns = {f"company {p}": cols for p, cols in prefix_groups.items()}
    if len(party_columns) < 2:
        st.warning(f"Fewer than two column prefixes found before '{separator}'. Choose another separator or "
                   "choose the columns per party.")
    else:
        st.caption(" · ".join(f"**{p}**: {len(c)} columns" for p, c in party_columns.items()))
    return party_columns


def parties_by_choice(candidates: list, dataset) -> dict:
    party_columns: dict[str, list] = {}
    n_parties = int(st.number_input("Number of parties", 2, 10, 3, key="p3ls_n_parties"))
    chunk = max(1, len(candidates) // n_parties)
    cols_ui = st.columns(min(n_parties, 5))
    for i in range(n_parties):
        default = candidates[i * chunk:(i + 1) * chunk] if i < n_parties - 1 else candidates[(n_parties - 1) * chunk:]
        with cols_ui[i % len(cols_ui)]:
            party_columns[f"party {i + 1}"] = st.multiselect(
                f"Party {i + 1}", candidates, default=default, key=f"p3ls_party_{i}_{dataset.name}")
    return party_columns


def parties_section(dataset, responses: list) -> dict:
    """The split of the columns among parties."""
    candidates = [c for c in dataset.numeric_columns if c not in responses]
    prefix_groups = columns_by_prefix(candidates, "_")
    split_mode = st.radio(SPLIT_LABEL, SPLIT_MODES, horizontal=True, key="p3ls_split_mode",
                          index=0 if len(prefix_groups) >= 2 else 1)
    if split_mode == SPLIT_MODES[0]:
        party_columns = parties_by_prefix(candidates)
    else:
        party_columns = parties_by_choice(candidates, dataset)
    if len(party_columns) < 2:
        st.stop()
    return party_columns


def protocol_settings() -> dict:
    with st.expander("Protocol settings", expanded=False):
        left, mid, right = st.columns(3)
        k_max = int(left.number_input("Largest k searched on validation rows", 1, 100, 100, key="p3ls_k_max"))
        split_seed = int(mid.number_input("Split seed (training / validation / test rows)", 0, 2**31 - 1, 0,
                                          key="p3ls_split_seed",
                                          help="Fixes only which rows train, validate and test. The masks always "
                                               "come from fresh randomness: a mask drawn from a known seed hides "
                                               "nothing."))
        secure = right.checkbox("Secure aggregation of the masked blocks", False, key="p3ls_secure",
                                help="The CSP then receives only the sum of the masked blocks (not in the paper).")
        mask_mode = st.radio("Row masks (m × m)", MASK_MODES, horizontal=True, key="p3ls_mask_mode")
        block_size = None
        if mask_mode == MASK_MODES[1]:
            block_size = int(st.number_input("Block size b", 2, 5000, 100, key="p3ls_block_size",
                                             help="Rows are mixed only within blocks of b rows (cheaper, weaker)."))
    return {"k_max": k_max, "split_seed": split_seed, "secure": secure, "block_size": block_size}


def summary_section(result: dict) -> None:
    overall = result["overall"].set_index("model")
    eq = result["equivalence"]
    c1, c2, c3, c4 = st.columns(4)
    if eq.get("same_k"):
        c1.metric("Max |B_P3LS − B_central|", f"{eq['max_abs_coef_difference']:.1e}",
                  help="Equivalence of the federated and the pooled fit: "
                       "largest absolute difference between the federated and the pooled coefficients "
                       "(standardised units, same k). Floating-point noise means: the same model.")
    else:
        c1.metric("Max |B_P3LS − B_central|", "k differs",
                  help="Equivalence of the federated and the pooled fit: "
                       "P3LS and pooled PLS chose different k on near-tied validation scores.")
    c2.metric("k chosen (local / P3LS / central)",
              f"{overall.loc['local', 'k']} / {overall.loc['P3LS', 'k']} / {overall.loc['central', 'k']}")
    c3.metric("Test R² local (LC alone)", f"{overall.loc['local', 'r2_pooled']:.4f}")
    c4.metric("Test R² P3LS (federated)", f"{overall.loc['P3LS', 'r2_pooled']:.4f}",
              delta=f"{overall.loc['P3LS', 'r2_pooled'] - overall.loc['local', 'r2_pooled']:+.4f} vs local")
    sizes = result["sizes"]
    st.caption(f"Rows: {sizes['train']} training, {sizes['validation']} validation (choice of k), {sizes['test']} "
               "test. R² pooled over all KPIs (1 − SS_res/SS_tot). Inference time and the mean per-KPI R² in the "
               "table below. These counts and results are computed on the parties' private rows: they go into the "
               "owner's workbook, not into the shareable report.")
    st.dataframe(human_headers(result["overall"].rename(columns={
        "r2_pooled": "test R² (pooled)", "r2_mean": "test R² (mean per KPI)", "rmse_mean": "RMSE (mean per KPI)",
        "inference_seconds": "inference seconds"})), hide_index=True, width="stretch")


def export_section(dataset, result: dict, party_columns: dict, responses: list, label_contributor: str,
                   protocol: dict) -> None:
    overall, eq, sizes = result["overall"].set_index("model"), result["equivalence"], result["sizes"]
    public = {"parties (columns)": {p: list(c) for p, c in party_columns.items()},
              "responses (KPIs)": list(responses), "label contributor": label_contributor,
              "largest k searched": protocol["k_max"], "secure aggregation": protocol["secure"],
              "row mask block size": protocol["block_size"]}
    report = RunReport(
        page="p3ls", method="P3LS (vertically federated PLS with removable masks)",
        data=DataInfo.from_frame(dataset.df, dataset.name, dataset.origin,
                                 [*responses, *[c for cols in party_columns.values() for c in cols]],
                                 owner_secret=owner_secret()),
        preprocessing="each party standardises its own columns (mean 0, unit variance on the training rows); "
                      "rows split 60 % training / 20 % validation (choice of k) / 20 % test",
        parameters={**public, "split seed": protocol["split_seed"], "masks": "fresh OS entropy",
                    "rows (training / validation / test)":
                        f"{sizes['train']} / {sizes['validation']} / {sizes['test']}"},
        public_parameters=public,
        mode=None, mode_text=f"**No privacy budget applies to this page.** {NOT_DP_STATEMENT}",
        headline={"equivalence max |B_P3LS − B_central|": eq.get("max_abs_coef_difference"),
                  **{f"k chosen, {m}": int(overall.loc[m, "k"]) for m in overall.index},
                  **{f"test R² pooled, {m}": overall.loc[m, "r2_pooled"] for m in overall.index}})
    export_bar(report, no_release_reason=NO_RELEASE_REASON, owner_sheets=result["owner_sheets"])


def messages_tab(result: dict) -> None:
    messages = result["messages"]
    phases = list(dict.fromkeys(messages["phase"]))
    shown = st.multiselect("Phases", phases, default=[p for p in phases if p in ("keys", "training", "recovery")],
                           key="p3ls_phases")
    part = messages[messages["phase"].isin(shown)]
    if len(part):
        show_chart(st, p3ls_sequence_figure(part, result["roles"]), "messages", page="p3ls")
    st.dataframe(human_headers(part), hide_index=True, width="stretch")
    st.caption("Every value that crosses between roles, in order. Masks multiply rows on the left (A, M) and "
               "columns on the right (H_i, G, N); C_i never leaves party i. Values sent per phase and sender:")
    st.dataframe(human_headers(result["volume"]), hide_index=True)


def error_tab(result: dict) -> None:
    metric = st.radio("Error measure", ("rmse", "r2"), format_func=lambda m: {"rmse": "RMSE", "r2": "R²"}[m],
                      horizontal=True, key="p3ls_metric")
    show_chart(st, p3ls_kpi_error_figure(result["per_kpi"], metric), f"error_per_kpi_{metric}", page="p3ls")
    st.dataframe(human_headers(result["per_kpi"].pivot(index="kpi", columns="model", values=metric)), width="stretch")


def coefficients_tab(result: dict, responses: list) -> None:
    kpi = st.selectbox("KPI", list(responses), key="p3ls_coef_kpi")
    show_chart(st, p3ls_coefficients_figure(result["coefficients"], kpi), f"coefficients_{kpi}", page="p3ls")
    st.caption("Each company recovers only its own rows B_i of the coefficient matrix (as in the paper) and can "
               "read how its variables drive the final KPIs. Σ_i X_i B_i is the joint prediction.")


def contribution_tab(result: dict) -> None:
    show_chart(st, p3ls_contribution_figure(result["relevance"]), "contribution", page="p3ls")
    table = result["relevance"]["training rows"].rename(columns={
        "r2_x": "R²_Xi (share of all X)", "r2_x_block": "R²_Xi (own columns)",
        "r2_xy": "R²_XiY training"})
    table["R²_XiY test"] = result["relevance"]["test rows"]["r2_xy"].to_numpy()
    st.dataframe(human_headers(table), hide_index=True, width="stretch")
    st.caption(
        f"R²_Y of the joint model (LC only): {result['r2_y']:.4f}; R²_X: {result['r2_x']:.4f} "
        "(the companies' R²_Xi shares sum to it). R²_XiY is computed as in the paper: the CSP sees only "
        "masked residuals and returns SS(Y − X_i B_i). These are partial predictions of one joint model: "
        "with correlated blocks they can be negative and need not sum to R²_Y, so they are not a fair-division "
        "rule. The CSP learns every party's score."
    )


def holdings_tab(result: dict) -> None:
    st.markdown("**Who holds what after the run** (names as in the message table; the TA holds only keys).")
    holdings = result["holdings"]
    held = holdings.groupby("role", sort=False)["holds"].apply(", ".join).reset_index()
    st.dataframe(human_headers(held), hide_index=True, width="stretch")
    st.markdown("**What a curious party can infer** (difference to the true value: rounding-level means revealed "
                "exactly)")
    st.dataframe(human_headers(result["leakage"]), hide_index=True, width="stretch")
    st.warning(NOT_DP_STATEMENT, icon=":material/lock_open:")


def choice_of_k_tab(result: dict) -> None:
    overall = result["overall"].set_index("model")
    chosen = {m: int(overall.loc[m, "k"]) for m in overall.index}
    show_chart(st, p3ls_validation_figure(result["validation"], chosen), "choice_of_k", page="p3ls")
    st.caption("The label contributor picks k from the validation scores and its own Q (the models are nested); "
               "only the chosen model's B_i are released, so fewer columns of Q leak.")


def flower_section(dataset, party_columns: dict, responses: list, label_holder: int, k: int) -> None:
    """Run over Flower (one process per party): the protocol local and over a local Flower federation."""
    def run(progress) -> dict:
        blocks, Y, names, _ = blocks_from_frame(dataset.df, party_columns, responses, file=dataset.name)
        return p3ls_flower_runs(blocks, Y, k, names, label_holder=label_holder, progress=progress)

    federation_section("p3ls_flower", run, available=p3ls_has_flower(),
                       note=f"Both runs fit {k} components on all rows; the trusted authority's keys and masks "
                            "cross the SuperLink end-to-end encrypted.")


def main() -> None:
    intro()
    dataset = data_section()
    responses = responses_section(dataset)
    party_columns = parties_section(dataset, responses)
    party_names = list(party_columns)
    label_contributor = st.selectbox(HOLDER_LABEL, party_names, index=len(party_names) - 1, key="p3ls_label_holder")
    protocol = protocol_settings()
    try:
        with fit_wait("p3ls_fit", "Running the federation"):
            result = run_federation(dataset.df, tuple((p, tuple(c)) for p, c in party_columns.items()),
                                    tuple(responses), party_names.index(label_contributor), protocol["k_max"],
                                    protocol["split_seed"], protocol["secure"], protocol["block_size"], dataset.name,
                                    dataset.origin == "upload")
    except (DataError, ValueError, JobError) as err:
        setting_error("The federation cannot run on this choice", err, SETTING_PLACES, SETTINGS_FALLBACK)
        st.stop()
    summary_section(result)
    export_section(dataset, result, party_columns, responses, label_contributor, protocol)
    # lazy: only the open tab computes (hidden tabs no longer delay the first chart)
    tabs = lazy_tabs(["Messages", "Error per KPI", "Coefficients per party", "Contribution", "What each party sees",
                      "Choice of k"], key="p3ls_tabs")
    tabs.show("Messages", messages_tab, result)
    tabs.show("Error per KPI", error_tab, result)
    tabs.show("Coefficients per party", coefficients_tab, result, responses)
    tabs.show("Contribution", contribution_tab, result)
    tabs.show("What each party sees", holdings_tab, result)
    tabs.show("Choice of k", choice_of_k_tab, result)
    flower_section(dataset, party_columns, responses, party_names.index(label_contributor),
                   min(2, protocol["k_max"]))
