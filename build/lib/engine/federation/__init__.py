"""Federation: how parties' messages travel and are recorded (the message log; the Flower transport in .flower)."""
from .messages import Message, MessageLog

__all__ = ["Message", "MessageLog"]
