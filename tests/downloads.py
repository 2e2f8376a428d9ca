"""What a download button would deliver, for AppTest (which cannot click one).

:func:`recorded_downloads` records every download Streamlit registers while a page runs: a deferred
file id -> the zero-argument callable the server runs on a click, and a static file URL -> its bytes
or text. :func:`file_of` then returns the bytes behind one button, by its user key.
"""
from __future__ import annotations

import contextlib

from streamlit.runtime.media_file_manager import MediaFileManager


@contextlib.contextmanager
def recorded_downloads():
    """Record the downloads Streamlit registers inside the block (yields the id/URL -> data dict)."""
    seen: dict = {}
    original_deferred, original_add = MediaFileManager.add_deferred, MediaFileManager.add

    def add_deferred(self, data_callable, *args, **kwargs):
        file_id = original_deferred(self, data_callable, *args, **kwargs)
        seen[file_id] = data_callable
        return file_id

    def add(self, path_or_data, *args, **kwargs):
        url = original_add(self, path_or_data, *args, **kwargs)
        if isinstance(path_or_data, (bytes, str)):
            seen[url] = path_or_data
        return url

    MediaFileManager.add_deferred, MediaFileManager.add = add_deferred, add
    try:
        yield seen
    finally:
        MediaFileManager.add_deferred, MediaFileManager.add = original_deferred, original_add


def buttons(at) -> dict:
    """Download buttons by their user key (the part of the element id after the last '-')."""
    return {b.proto.id.rsplit("-", 1)[-1]: b for b in at.get("download_button")}


def file_of(at, seen: dict, key: str, *, deferred: bool = False) -> bytes:
    """The bytes the download button ``key`` delivers (deferred callable or static data).

    deferred: assert that the file is built only when clicked (a deferred download).
    """
    proto = buttons(at)[key].proto
    if deferred:
        assert proto.deferred_file_id, f"{key}: built only when clicked"
    data = seen[proto.deferred_file_id]() if proto.deferred_file_id else seen[proto.url]
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)
