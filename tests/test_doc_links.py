"""Every page of the app links to its documentation page, and that page exists in docs/ (ui/doc_link.py)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from ui.doc_link import DEFAULT_DOCS_URL, DOCS_URL_ENV, doc_path, doc_url
from ui.pages import METHOD_PAGES, TOOL_PAGES

ROOT = Path(__file__).resolve().parents[1]
PAGE_FILES = [p.file for p in (*METHOD_PAGES, *TOOL_PAGES)]


def _doc_link_keys(path: Path) -> list[str]:
    """The string arguments of every ``doc_link(...)`` call in a script."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.args[0].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "doc_link"
            and node.args and isinstance(node.args[0], ast.Constant)]


@pytest.mark.parametrize("page_file", PAGE_FILES)
def test_each_registered_page_links_to_an_existing_doc_page(page_file):
    key = Path(page_file).stem
    assert _doc_link_keys(ROOT / page_file) == [key], f"{page_file} must call doc_link({key!r}) once"
    assert (ROOT / "docs" / doc_path(key)).is_file(), f"docs/{doc_path(key)} is missing for {page_file}"


def test_home_links_to_the_index():
    assert _doc_link_keys(ROOT / "app.py") == ["home"]
    assert (ROOT / "docs" / doc_path("home")).is_file()


def test_every_page_file_is_registered():
    """A page file outside the registry would have no navigation entry and escape the test above."""
    assert {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py")} == set(PAGE_FILES)


def test_doc_url_default_and_configured(monkeypatch):
    monkeypatch.delenv(DOCS_URL_ENV, raising=False)
    assert doc_url("edpls") == DEFAULT_DOCS_URL + "methods/edpls/"
    assert doc_url("home") == DEFAULT_DOCS_URL
    monkeypatch.setenv(DOCS_URL_ENV, "https://docs.example.org/privalab")
    assert doc_url("privacy_audit") == "https://docs.example.org/privalab/tools/privacy-audit/"


def test_readme_is_a_small_front_door_whose_links_exist():
    """README stays under 8 KB, starts both commands from a fresh venv, and every relative link resolves."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode("utf-8")) < 8 * 1024
    assert "python3 -m venv .venv && .venv/bin/pip install -r requirements.txt && .venv/bin/streamlit run app.py" \
        in readme
    assert "python3 -m venv .venv && .venv/bin/pip install -r requirements-dev.txt && .venv/bin/python -m pytest" \
        in readme
    targets = re.findall(r"\]\(([^)#\s]+)", readme)
    local = [t for t in targets if "://" not in t]
    assert local, "README links to the docs"
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, missing
    image = ROOT / "docs" / "assets" / "edpls_page.png"
    assert image.stat().st_size < 300 * 1024


def test_a_rendered_page_shows_its_link(monkeypatch):
    """The caption reaches the page (the calculator: the lightest page), under the configured base."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(DOCS_URL_ENV, "https://docs.example.org/privalab/")
    at = AppTest.from_file(str(ROOT / "pages" / "calculator.py"), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    captions = [c.value for c in at.caption if c.value.startswith("Documentation:")]
    assert captions == ["Documentation: [https://docs.example.org/privalab/tools/calculator/]"
                        "(https://docs.example.org/privalab/tools/calculator/) · `docs/tools/calculator.md`"]
