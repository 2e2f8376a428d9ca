"""Module-level job functions for tests/test_jobs.py (a worker process imports them by name)."""
from __future__ import annotations

import io
import time

import numpy as np

from engine.data import DataError, load_table


def allocate(mb: int) -> int:
    """Touch ``mb`` MB of float64 and return the element count."""
    a = np.ones(mb * 1024 * 1024 // 8)
    return int(a.size)


def sleep_then(seconds: float, value):
    time.sleep(seconds)
    return value


def fail_with_data_error(name: str):
    raise DataError(f"{name}: no numeric column", file=name, column="x")


def load_upload(data: bytes, name: str):
    buf = io.BytesIO(data)
    buf.name = name
    return load_table(buf, name=name)


def parse_after_a_bomb(data: bytes, name: str, sheet=None):
    """Stands for a parse that needs more memory than the budget: 1 GB, then the real parse."""
    allocate(1024)
    from ui.runtime.jobs import parse_upload

    return parse_upload(data, name, sheet)


def fit_after_a_bomb(*args, **kwargs):
    """Stands for an edPLS fit that needs more memory than the budget: 1 GB first."""
    allocate(1024)
    from engine.methods.edpls import compare_private_plain

    return compare_private_plain(*args, **kwargs)


def grow(step_mb: int, steps: int) -> int:
    """Allocate ``steps`` blocks of ``step_mb`` MB one after the other (a parse that keeps growing)."""
    kept = [np.ones(step_mb * 1024 * 1024 // 8) for _ in range(steps)]
    return len(kept)


def steps_with_progress(n: int, pause: float, progress=None) -> int:
    """A sweep of ``n`` steps of ``pause`` s each that reports ``progress(fraction, text)`` after each."""
    for i in range(n):
        time.sleep(pause)
        if progress is not None:
            progress((i + 1) / n, f"step {i + 1} of {n}")
    return n



def gated_parse(gate: str, data: bytes, name: str, sheet=None):
    """The app's ``parse_upload`` held until the file ``gate``/go exists (at most 120 s); ``gate``/started says it
    began: a read still running when the user clicks a page link (``functools.partial(gated_parse, gate)``)."""
    import pathlib

    folder = pathlib.Path(gate)
    (folder / "started").touch()
    deadline = time.monotonic() + 120
    while not (folder / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    from ui.runtime.jobs import parse_upload

    return parse_upload(data, name, sheet)


def tick_to_file(path: str, n: int, pause: float, progress=None) -> int:
    """``n`` steps of ``pause`` s, each appending a line to ``path`` (a test sees the job still running or not)."""
    for i in range(n):
        time.sleep(pause)
        with open(path, "a") as fh:
            fh.write(f"{i}\n")
        if progress is not None:
            progress((i + 1) / n, f"step {i + 1} of {n}")
    return n


def upload_good_then_past_budget(at, monkeypatch, tag: str, after_good=None) -> list[str]:
    """On Home (``at`` with "Upload a file" chosen): a small good table, which becomes the data set, then the same
    table with one id changed (another content: not in the read cache), read by :func:`parse_after_a_bomb` under a
    300 MB budget. ``after_good()`` runs between the two. Returns the page's error texts."""
    from ui.runtime import jobs

    rows = "".join(f"{tag}{i},{a},{b},{c}\n" for i, (a, b, c) in enumerate(
        [("1.0", "2.0", "3.5"), ("2.0", "1.0", "4.5"), ("3.0", "0.5", "1.5"), ("4.0", "3.0", "2.5")], start=1))
    good = f"id,a,b,c\n{rows}".encode()
    at.file_uploader(key="home_data_upload").set_value(("good.csv", good, "text/csv")).run()
    assert at.session_state["pl_dataset"].name == "good.csv"
    if after_good is not None:
        after_good()
    monkeypatch.setattr(jobs, "parse_upload", parse_after_a_bomb)
    monkeypatch.setattr(jobs, "MEMORY_MB", 300)
    bomb = good.replace(f"{tag}4".encode(), f"{tag}5".encode())
    at.file_uploader(key="home_data_upload").set_value(("bomb.csv", bomb, "text/csv")).run()
    assert not at.exception
    return [e.value for e in at.error]
