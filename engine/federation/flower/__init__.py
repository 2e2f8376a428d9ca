"""The Flower transport of the federated protocols: a local federation, the roles-over-Flower relay, the driver.

- :mod:`.runtime`: :class:`LocalFederation` (SuperLink + one SuperNode per party on 127.0.0.1) and ``flwr run``.
- :mod:`.relay`: envelopes (named protocol messages, sealed or not) and the ServerApp's :class:`Relay`.
- :mod:`.driver`: which federation a call uses and one job submitted and awaited.
- :mod:`.session`: :func:`~.session.shared_federation`, a local federation kept between fits (stopped when idle).
- :mod:`.channel`: the run's persistent mutual-TLS gRPC streams, over which a protocol's rounds run once ONE
  Flower round has connected every party (Flower starts a process per message; a channel round costs ms).

Nothing here imports a protocol; P3LS's apps are :mod:`engine.methods.p3ls.flower_roles`, named by the Flower
app directory ``engine/federation/flower_app``.
"""
from .runtime import FederationError, LocalFederation

__all__ = ["FederationError", "LocalFederation"]
