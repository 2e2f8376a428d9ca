"""Fixtures shared by the AppTest page tests."""
import sys

import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

#: pytest's own ``__main__``. Streamlit's script runner (every AppTest run) puts the script's module in
#: ``sys.modules["__main__"]`` and leaves it there; a process started later with the *spawn* method (a Dask
#: LocalCluster's Nanny workers) then re-runs that temporary script as its main and dies ("NameError: name
#: '__args' is not defined" after test_chemometrics' AppTest.from_function; "Nanny failed to start").
_PYTEST_MAIN = sys.modules.get("__main__")


@pytest.fixture(autouse=True)
def _pytest_main_restored():
    """Give ``sys.modules["__main__"]`` back to pytest after every test (see ``_PYTEST_MAIN``)."""
    yield
    if _PYTEST_MAIN is not None and sys.modules.get("__main__") is not _PYTEST_MAIN:
        sys.modules["__main__"] = _PYTEST_MAIN


@pytest.fixture()
def deferred(monkeypatch):
    """The zero-argument callables behind deferred download buttons, by file id (AppTest's runtime keeps them
    only while the script runs)."""
    seen = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, *args, **kwargs):
        file_id = original(self, data_callable, *args, **kwargs)
        seen[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return seen
