"""Fixtures shared by the AppTest page tests."""
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager


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
