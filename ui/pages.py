"""The page registry: every page, its file and its one-line purpose.

Method pages come from the method registry (``engine.methods.registry.METHODS``: one spec per method, so
navigation and the home page list exactly the registered methods); tool pages are listed here.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.methods import registry


@dataclass(frozen=True)
class PageInfo:
    file: str
    title: str
    icon: str
    summary: str


def method_pages() -> tuple:
    """The method pages, one per registered method, in the registry's order (read when called)."""
    return tuple(PageInfo(spec.page, spec.title, spec.icon, spec.summary) for spec in registry.METHODS)


METHOD_PAGES = method_pages()

TOOL_PAGES = (
    PageInfo("pages/attack_lab.py", "Attack lab (PLS)", ":material/bug_report:",
             "What shared PLS components reveal about another party's data."),
    PageInfo("pages/calculator.py", "Noise & budget calculator", ":material/calculate:",
             "Gaussian/Laplace noise for a budget, and the total of many releases."),
    PageInfo("pages/privacy_audit.py", "Privacy audit", ":material/verified_user:",
             "Run a release many times on neighbouring data and bound its ε from below."),
    PageInfo("pages/apply_model.py", "Apply a model", ":material/online_prediction:",
             "Predict new spectra with a shared model's release JSON (channels matched by name)."),
)
