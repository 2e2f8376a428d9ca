"""Federation: how parties' messages travel and are recorded (the message log; the Flower transport in .flower)."""
from __future__ import annotations

import importlib

__all__ = ["Message", "MessageLog"]


def __getattr__(name: str):
    """``Message`` and ``MessageLog`` imported on first use (the log needs pandas; a Flower party process does not)."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(".messages", __name__), name)
    globals()[name] = value
    return value
