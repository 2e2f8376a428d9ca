"""The edPLS page's shareable files and the owner's workbook (moved from pages/edpls.py, the bodies unchanged)."""


from engine.methods.edpls import (
    no_release_reason,
    owner_sheets,
    public_parameters,
    shareable_ledger,
    to_json,
)
from engine.methods.edpls.recommended_evaluation import (
    recommended_no_release_reason,
    recommended_owner_sheets,
    recommended_public_parameters,
)
from engine.methods.edpls.recommended_release import to_json as recommended_to_json
from engine.reporting.report import DataInfo, RunReport
from ui.edpls.fits import SPLIT_SEED, Choice
from ui.exports import export_bar, owner_secret
from ui.figures.report import private_coefficients
from ui.model_card import model_card

STRICT_LEAKY_CHAIN = (
    "**Strict mode, but not a proven guarantee:** the preprocessing '{chain}' was fitted on the private rows "
    "({note}), so the clipped release is no longer (ε, δ)-DP as a whole; the ledger records it as not proven."
)


def export_section(choice: Choice, res: dict, budget, *, label: str, chain: str, info: dict, params: dict,
                   bounds_note: str | None, later_sheets: dict) -> None:
    """The shareable release and the owner's workbook; ``later_sheets`` is filled by the sections below
    (the workbook is built on click, after this run)."""
    ds, problem, private = choice.ds, choice.problem, res["private"]
    tr, te, strict = problem.train, problem.test, budget.mode == "strict"
    split_text = {"random": "random 30 %", "last": "last 30 % of rows"}[choice.split_how]
    report = RunReport(
        page="edpls", method=label,
        data=DataInfo.from_frame(ds.df, ds.name, ds.origin, [choice.response, *problem.channels],
                                 owner_secret=owner_secret()),
        preprocessing=f"{chain} (fitted on the training rows only)",
        parameters={**params, "test rows": split_text, "split seed": SPLIT_SEED,
                    "noise": ("reproducible (teaching): known noise seed " + str(budget.noise_seed))
                    if budget.noise_seed is not None else "fresh (operating-system entropy)",
                    "n_train": len(tr), "n_test": len(te), **({"bounds": bounds_note} if bounds_note else {})},
        public_parameters=public_parameters(private, preprocessing=chain, response=choice.response,
                                            test_split=split_text),
        mode=budget.mode, ledger=shareable_ledger(private), ledger_delta=budget.delta,
        figures=private_coefficients(problem.channels, private.coef_, label=label,
                                     shareable=not no_release_reason(private)),
        mode_text=(STRICT_LEAKY_CHAIN.format(chain=chain, note=info.get("strict_note", ""))
                   if strict and info.get("learns_from_data") else None),
        headline={"RMSEP, private": res["rmsep_private"], "RMSEP, non-private": res["rmsep_plain"],
                  "σ_y (test)": res["sigma_y_test"],
                  **({"rows clipped": f"{private.n_clipped_} of {len(tr)}"} if strict
                     else {"cond(P'W)": private.condition_number_})})
    why_not = no_release_reason(private)
    card = model_card("edpls", problem.channels, choice.response, chain)
    export_bar(report, release_json=None if why_not else (lambda: to_json(private, card=card, indent=1)),
               no_release_reason=why_not,
               owner_sheets=lambda: owner_sheets(res, feature_names=problem.channels, test_rows=te,
                                                 sweeps=later_sheets))


def recommended_exports(choice: Choice, res: dict, budget, *, label: str, chain: str, setup, later_sheets: dict):
    """The recommended fit's shareable files and the owner's workbook (``later_sheets``: filled below)."""
    ds, problem, private = choice.ds, choice.problem, res["private"]
    tr, te = problem.train, problem.test
    split_text = {"random": "random 30 %", "last": "last 30 % of rows"}[choice.split_how]
    declared = dict(response=choice.response, test_split=split_text, public_spectra=setup.public_name or "none")
    report = RunReport(
        page="edpls", method=label,
        data=DataInfo.from_frame(ds.df, ds.name, ds.origin, [choice.response, *problem.channels],
                                 owner_secret=owner_secret()),
        preprocessing=f"{chain} (row-wise, chosen on the page: it learns nothing from the rows)",
        parameters={"epsilon": budget.epsilon, "delta": budget.delta,
                    "y_range": setup.y_range if setup.y_range is not None else "none declared: estimated privately",
                    "public spectra": setup.public_name or "none", "test rows": split_text, "split seed": SPLIT_SEED,
                    "noise": ("reproducible (teaching): known noise seed " + str(budget.noise_seed))
                    if budget.noise_seed is not None else "fresh (operating-system entropy)",
                    "preprocessing chain": chain,
                    "reference (non-private)": f"PLS1, {choice.n_components} LVs, chain {chain}",
                    "n_train": len(tr), "n_test": len(te), **({"y range": setup.range_note} if setup.range_note
                                                              else {})},
        public_parameters=recommended_public_parameters(private, **declared),
        mode="strict", ledger=shareable_ledger(private.privacy_ledger_), ledger_delta=budget.delta,
        figures=private_coefficients(problem.channels, getattr(private, "coef_", None), label=label,
                                     shareable=not recommended_no_release_reason(private)),
        headline={"RMSEP, private": res["rmsep_private"], "RMSEP, non-private": res["rmsep_plain"],
                  "RMSEP, private constant predictor": res["rmsep_constant"], "σ_y (test)": res["sigma_y_test"]})
    why_not = recommended_no_release_reason(private)
    card = model_card("edpls", problem.channels, choice.response, chain)
    export_bar(report, release_json=None if why_not else (lambda: recommended_to_json(private, card=card, indent=1)),
               no_release_reason=why_not,
               owner_sheets=lambda: recommended_owner_sheets(res, feature_names=problem.channels, test_rows=te,
                                                             sweeps=later_sheets))

