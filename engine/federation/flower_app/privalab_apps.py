"""The app's components: P3LS's ServerApp (central role and relay) and ClientApp (one party)."""
from engine.methods.p3ls.flower_roles import client_app as client
from engine.methods.p3ls.flower_roles import server_app as server

__all__ = ["client", "server"]
