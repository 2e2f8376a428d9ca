"""The page registry: every page, its file and its one-line purpose.

Method pages come from the method registry (``engine.methods.registry.METHODS``: one spec per method, so
navigation and the home page list exactly the registered methods); tool pages are listed here.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.methods.registry import METHODS


@dataclass(frozen=True)
class PageInfo:
    file: str
    title: str
    icon: str
    summary: str


METHOD_PAGES = tuple(PageInfo(spec.page, spec.title, spec.icon, spec.summary) for spec in METHODS)

TOOL_PAGES = (
    PageInfo("pages/attack_lab.py", "Attack lab (PLS)", ":material/bug_report:",
             "What shared PLS components reveal about another party's data."),
    PageInfo("pages/calculator.py", "Noise & budget calculator", ":material/calculate:",
             "Gaussian/Laplace noise for a budget, and the total of many releases."),
    PageInfo("pages/privacy_audit.py", "Privacy audit", ":material/verified_user:",
             "Run a release many times on neighbouring data and bound its ε from below."),
)
