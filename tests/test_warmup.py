"""The server's background warm-up (ui/runtime/warmup.py, issue 33 item 3): what it imports, that it never raises,
and that it does not start under AppTest. Its effect on the first tab is measured by bench/bench_ui.py
(``first_tab_after_start_s``), not here."""
from __future__ import annotations

import re
import sys
import threading
from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui.pages import METHOD_PAGES, TOOL_PAGES
from ui.runtime import warmup

ROOT = Path(__file__).resolve().parents[1]


def test_page_modules_are_what_the_page_files_import():
    # oracle: the page files' `from ui.x import` / `from engine.x import` lines, read by a regular expression
    expected = set()
    for page in (*METHOD_PAGES, *TOOL_PAGES):
        expected |= set(re.findall(r"^from ((?:ui|engine)\.[\w.]+) import", (ROOT / page.file).read_text(), re.M))
    found = warmup.page_modules()
    assert set(found) == expected
    assert len(found) == len(set(found))
    # every method page's sections module is there (a new page is warmed without editing the warm-up)
    for page in METHOD_PAGES:
        assert f"ui.{Path(page.file).stem}.sections" in found


def test_warm_reports_a_failing_step_and_carries_on():
    steps = warmup.warm(["no_such_module_for_privalab_warmup", "json"], forkserver=False)
    assert steps["no_such_module_for_privalab_warmup"].startswith("error: ModuleNotFoundError")
    assert isinstance(steps["json"], float)
    assert isinstance(steps["first_figure_and_table"], float)
    assert isinstance(steps["first_pls_path"], float)  # edPLS's row passes have chosen their kernel
    from engine.methods.edpls import core

    assert core._products_by_blas.cache_info().currsize == 1
    assert "no_such_module_for_privalab_warmup" not in sys.modules


def test_no_warmup_under_apptest():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception
    assert not warmup._served()
    assert not warmup._STARTED.is_set()
    assert warmup.WARMUP_THREAD not in {t.name for t in threading.enumerate()}
    assert warmup.start_warmup() is False
