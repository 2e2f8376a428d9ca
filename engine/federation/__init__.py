"""Federation: how parties' messages travel and are recorded (the message log; transports come later)."""
from .messages import Message, MessageLog

__all__ = ["Message", "MessageLog"]
