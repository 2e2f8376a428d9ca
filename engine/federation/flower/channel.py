"""A persistent, mutually authenticated channel between the ServerApp and the parties, inside ONE Flower run.

Why: Flower 1.42 starts a new ``flwr-clientapp`` process for every message (about 2 s CPU of imports per
party) and polls in 3 s steps, so a protocol round over Flower messages costs seconds (performance review
2026-11-27, part 1); a bidirectional gRPC stream between persistent processes costs about a millisecond. So
Flower keeps enrolment, start and finish, and the iterative part of a protocol runs here: the ServerApp opens
a :class:`Hub` (a gRPC server on 127.0.0.1 by default, TLS), sends each party ONE Flower message ("connect") with the
hub's address and credentials, and each party's ClientApp, in the process Flower started for that message,
dials out with :func:`serve_party` and answers one request after another until the hub says it is done; its
Flower reply then closes the Flower round.

Authentication (mutual TLS): the hub makes a fresh certificate authority per run (P-256, from OS entropy),
its own server certificate and one client certificate per SuperNode (common name ``node-<id>``); each key and
certificate travel only in the Flower message addressed to that SuperNode (Flower's enrolment decides who that
is), so no Flower round is needed before it to learn which party runs where. The hub requires a client
certificate of its CA, lets each certificate open one stream, and learns from it which party (its node config's
id) runs on which node; the party checks the hub's certificate against the CA it was given.
End-to-end secrets between parties stay sealed inside the messages (:mod:`engine.federation.e2e`); the channel
only replaces Flower as the carrier.

Where the hub listens: ``127.0.0.1`` on a port the OS picks, unless the coordinator's environment sets
``PRIVALAB_HUB_ADDRESS`` (``host`` or ``host:port``): a coordinator whose parties run on other machines (or in other
network namespaces, ``tests/test_flower_netns.py``) sets it to its address on the parties' network, as it opens its
SuperLink's port; the ServerApp inherits it from the SuperLink that starts it. The address is sent to each party in
its Flower "connect" message; the party checks the hub's certificate, not the address.

Messages are bytes: :func:`pack` / :func:`unpack` (a JSON header and ``.npy`` arrays in one ``.npz``, never
pickled). Progress: a hub given a ``progress`` file rewrites it (JSON: ``connected``, ``rounds`` done, and whatever
the protocol put in :attr:`Hub.status`, e.g. VAR-ADMM's ``iteration``) once every party is connected and after
every round; the driver reads it while it waits for the run's result (:func:`engine.federation.flower.runtime.
submit_run`), so a page shows the rounds as they pass. It holds counts only, never a value of the protocol.
Written by hand: grpcio carries the stream, ``cryptography`` makes the certificates; no kept
library offers a coordinator that drives N persistent party streams in lock-step.
"""
from __future__ import annotations

import datetime
import io
import json
import os
import queue
import threading
from concurrent import futures
from typing import Any

import grpc
import numpy as np
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["ChannelError", "Hub", "hub_address", "pack", "serve_party", "unpack"]

_METHOD = "/privalab.Round/Stream"
_HUB_NAME = "privalab-hub"
_LOOPBACK = "127.0.0.1"
_OPTIONS = [("grpc.max_receive_message_length", 1 << 30), ("grpc.max_send_message_length", 1 << 30)]


class ChannelError(RuntimeError):
    """A party did not connect, or did not answer a round, within the timeout; or it answered an error."""


def pack(header: dict, arrays: dict | None = None) -> bytes:
    """One message: a JSON header and named arrays (``.npz``, no pickles)."""
    buf = io.BytesIO()
    # typed Any: numpy's stub would take a **dict of arrays as possibly naming savez's allow_pickle
    named: dict[str, Any] = {"__header__": np.array(json.dumps(header)),
                             **{k: np.asarray(v) for k, v in (arrays or {}).items()}}
    np.savez(buf, **named)
    return buf.getvalue()


def unpack(data: bytes) -> tuple[dict, dict]:
    """The (header, arrays) of one channel message packed by ``pack`` (no pickle)."""
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files if k != "__header__"}
        return json.loads(str(z["__header__"])), arrays


def _pem_key(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _certificate(subject: str, key, issuer_name, issuer_key, *, ca: bool = False, san: str | None = None):
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
               .issuer_name(issuer_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if san:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(san)]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def hub_address(value: str | None = None) -> tuple[str, int]:
    """(host, port) the hub listens on: ``value`` (default ``$PRIVALAB_HUB_ADDRESS``, else 127.0.0.1) as ``host`` or
    ``host:port`` (port 0: the OS picks one). ``ValueError`` naming the setting when it cannot be read."""
    from engine.federation.flower.runtime import HUB_ADDRESS_ENV  # here: the channel stands without the runtime

    text = (os.environ.get(HUB_ADDRESS_ENV, "") if value is None else str(value)).strip()
    if not text:
        return _LOOPBACK, 0
    host, _, port = text.partition(":")  # IPv4 or a name: an IPv6 literal would need brackets (not read here)
    if not host or (port and not (port.isdigit() and int(port) < 65536)):
        raise ValueError(f"{HUB_ADDRESS_ENV}={text!r}: expected host or host:port (an IPv4 address or a name)")
    return host, int(port or 0)


class Hub:
    """The ServerApp's end: a TLS gRPC server (on :func:`hub_address`) that drives every party's stream round by
    round.

    Parameters
    ----------
    parties : list of str, the party ids expected to connect.
    timeout : float, seconds to wait for every party to connect, and for each round's replies.
    address : str or None, ``host`` or ``host:port`` to listen on (default: :func:`hub_address`).

    Use ``credentials(party)`` in the party's Flower "connect" message, ``wait_connected()``, then
    ``round({party: bytes})`` as often as needed, and ``close()`` (also a context manager).
    """

    def __init__(self, parties, timeout: float = 120.0, progress=None, address: str | None = None):
        self.parties = [str(p) for p in parties]
        self.timeout = float(timeout)
        self.progress = progress  # a file path (see the module docstring) or None
        self.rounds = 0
        self.status: dict[str, Any] = {}  # the protocol's own counts, written with the rounds
        self._ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "privalab run CA")])
        self._ca = _certificate("privalab run CA", self._ca_key, ca_name, self._ca_key, ca=True)
        server_key = ec.generate_private_key(ec.SECP256R1())
        server_cert = _certificate(_HUB_NAME, server_key, ca_name, self._ca_key, san=_HUB_NAME)
        self._ca_name = ca_name
        self.ca_pem = self._ca.public_bytes(serialization.Encoding.PEM)
        self._out: dict[str, queue.Queue] = {}
        self._in: dict[str, queue.Queue] = {}
        self._connected = threading.Condition()
        self._issued: set[str] = set()
        self.holder: dict[str, str] = {}  # party id -> the certificate's common name it connected with
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=len(self.parties) + 4), options=_OPTIONS)
        self._server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("privalab.Round", {
            "Stream": grpc.stream_stream_rpc_method_handler(self._stream)})])
        creds = grpc.ssl_server_credentials([(_pem_key(server_key), server_cert.public_bytes(
            serialization.Encoding.PEM))], root_certificates=self.ca_pem, require_client_auth=True)
        host, port = hub_address(address)
        self.port = self._server.add_secure_port(f"{host}:{port}", creds)
        if not self.port:  # grpc returns 0 when it cannot bind
            raise ChannelError(f"the run's channel cannot listen on {host}:{port} (PRIVALAB_HUB_ADDRESS)")
        self.address = f"{host}:{self.port}"
        self._server.start()
        self.bytes_down = 0
        self.bytes_up = 0

    def credentials(self, name: str) -> dict:
        """What the holder of ``name`` (e.g. "node-<id>") needs to dial in: send it only in the Flower message to
        that node."""
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _certificate(str(name), key, self._ca_name, self._ca_key)
        self._issued.add(str(name))
        return {"address": self.address, "ca": self.ca_pem.decode(), "key": _pem_key(key).decode(),
                "cert": cert.public_bytes(serialization.Encoding.PEM).decode()}

    def _stream(self, request_iterator, context):
        names = [v.decode() if isinstance(v, bytes) else str(v)
                 for v in context.auth_context().get("x509_common_name", [])]
        try:
            first = next(request_iterator)
        except StopIteration:
            return
        party = str(unpack(first)[0].get("party"))
        with self._connected:
            allowed = (party in self.parties and party not in self.holder and len(names) == 1
                       and names[0] in self._issued and names[0] not in self.holder.values())
            if allowed:
                self.holder[party] = names[0]
        if not allowed:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, f"certificate {names} may not speak for {party!r}")
        inbound, outbound = queue.Queue(), queue.Queue()

        def read():
            try:
                for request in request_iterator:
                    inbound.put(request)
            except grpc.RpcError:
                pass
            inbound.put(None)

        threading.Thread(target=read, daemon=True).start()
        with self._connected:
            self._in[party], self._out[party] = inbound, outbound
            self._connected.notify_all()
        while (message := outbound.get()) is not None:
            yield message

    def wait_connected(self, alive=None) -> None:
        """Until every party's stream is open (``ChannelError`` naming the missing ones after ``timeout``)."""
        import time

        deadline = time.monotonic() + self.timeout
        with self._connected:
            while len(self._out) < len(self.parties):
                if alive is not None:
                    alive()
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = [p for p in self.parties if p not in self._out]
                    raise ChannelError(f"party {', '.join(missing)} did not connect within {self.timeout:.0f} s")
                self._connected.wait(timeout=min(left, 0.5))
        self._report()

    def _report(self) -> None:
        """Rewrite the progress file (atomically: the driver may read it at any time); counts only."""
        if self.progress is None:
            return
        from engine.federation.flower.runtime import write_progress  # here: the channel stands without the runtime

        write_progress(self.progress, {"connected": True, "rounds": self.rounds, **self.status})

    def round(self, messages: dict) -> dict:
        """Send each party its message, wait for every reply; returns party -> reply bytes."""
        for party, data in messages.items():
            self.bytes_down += len(data)
            self._out[party].put(data)
        replies = {}
        for party in messages:
            try:
                reply = self._in[party].get(timeout=self.timeout)
            except queue.Empty:
                raise ChannelError(f"party {party} did not answer within {self.timeout:.0f} s") from None
            if reply is None:
                raise ChannelError(f"party {party} closed its channel")
            self.bytes_up += len(reply)
            header = unpack(reply)[0]
            if header.get("error"):
                raise ChannelError(f"party {party} failed: {header['error']}")
            replies[party] = reply
        self.rounds += 1
        self._report()
        return replies

    def close(self) -> None:
        """Close every party's stream and stop the server (waits at most 5 s)."""
        for outbound in self._out.values():
            outbound.put(None)
        self._server.stop(grace=1.0).wait(timeout=5.0)

    def __enter__(self) -> Hub:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def serve_party(credentials: dict, party: str, handle, timeout: float = 600.0) -> int:
    """The party's end: dial the hub as party ``party`` (its own id), answer every request with
    ``handle(bytes) -> bytes`` until the hub closes the stream; returns the number of requests answered. An
    exception in ``handle`` is sent back as the reply's ``error`` (the hub raises it, naming the party) and ends
    the loop."""
    creds = grpc.ssl_channel_credentials(root_certificates=credentials["ca"].encode(),
                                         private_key=credentials["key"].encode(),
                                         certificate_chain=credentials["cert"].encode())
    options = [("grpc.ssl_target_name_override", _HUB_NAME), *_OPTIONS]
    outbox: queue.Queue = queue.Queue()
    outbox.put(pack({"party": str(party)}))
    answered, failure = 0, None
    with grpc.secure_channel(credentials["address"], creds, options=options) as channel:
        stream = channel.stream_stream(_METHOD)(iter(outbox.get, None), timeout=timeout)
        try:
            for request in stream:
                if failure is not None:
                    continue  # the error was sent; wait for the hub to end the stream
                try:
                    outbox.put(handle(request))
                    answered += 1
                except Exception as exc:  # noqa: BLE001 (named back to the hub, raised here once it closes)
                    failure = exc
                    outbox.put(pack({"error": f"{type(exc).__name__}: {exc}"}))
        except grpc.RpcError:
            if failure is None:
                raise
        finally:
            outbox.put(None)
    if failure is not None:
        raise failure
    return answered
