"""Federation: how parties' messages travel and are recorded (the message log; the Flower transport in .flower)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from engine.lazy import lazy_exports

if TYPE_CHECKING:  # imported on first use (engine/lazy.py): the log needs pandas, a Flower party's process does not
    from .messages import Message, MessageLog

__all__ = ["Message", "MessageLog"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
