"""Roles over Flower: the ServerApp plays the central role and relays named messages between the parties.

Every protocol message travels as an *envelope*: its log fields (phase, step, sender, receiver, name, shape,
what it is, values sent), whether it is sealed, and its payload bytes (a ``.npy`` / ``.npz`` image of the
value, or, when sealed, the :mod:`engine.federation.e2e` ciphertext of that image). A Flower message to a
party's ClientApp carries one operation (``op``), its parameters and the envelopes delivered to that party;
its reply carries the envelopes the party sends. Envelopes for the central role are read by the ServerApp;
the others are relayed unchanged in the next round (sealed ones are ciphertext the relay cannot read).

The ServerApp side (:class:`Relay`) rebuilds an :class:`engine.federation.messages.MessageLog` from the
envelopes it actually received and sent and counts their bytes on the wire (the serialized envelope: log
fields plus payload); a party that gives no reply within the round's timeout, or whose ClientApp raised,
is a :class:`engine.federation.flower.runtime.FederationError` naming it.

Written by hand: Flower's Message API carries records between the ServerApp and ClientApps, but has no
notion of party-to-party messages, of a protocol transcript, or of end-to-end sealing.
"""
from __future__ import annotations

import io
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from flwr.app import ArrayRecord, ConfigRecord, Message, MetricRecord, RecordDict

from engine.federation.e2e import PartyKeys, associated_data, open_sealed, seal
from engine.federation.flower.channel import ChannelError, Hub, pack, unpack
from engine.federation.flower.runtime import FederationError

__all__ = ["Envelope", "Relay", "decode_value", "encode_value", "exchange", "pack_envelopes", "party_reply",
           "read_request", "unpack_envelopes"]



def encode_value(value) -> bytes:
    """The bytes of a protocol value: ``.npy`` of an array or scalar, ``.npz`` of an OrthogonalMask's blocks."""
    buf = io.BytesIO()
    blocks = getattr(value, "blocks", None)
    if blocks is not None:
        buf.write(b"OM")
        np.savez(buf, *blocks)
    else:
        np.save(buf, np.asarray(value), allow_pickle=False)
    return buf.getvalue()


def decode_value(data: bytes):
    """Inverse of :func:`encode_value` (arrays are never unpickled)."""
    if data[:2] == b"OM":
        from engine.methods.p3ls.masks import OrthogonalMask  # the one structured value the protocols send

        with np.load(io.BytesIO(data[2:]), allow_pickle=False) as z:
            return OrthogonalMask([z[f"arr_{i}"] for i in range(len(z.files))])
    value = np.load(io.BytesIO(data), allow_pickle=False)
    return value[()] if value.ndim == 0 else value


@dataclass
class Envelope:
    """One protocol message on the wire: its log fields, ``sealed`` and its payload bytes."""

    phase: str
    step: str
    sender: str
    receiver: str
    name: str
    shape: tuple
    what: str
    n_values: int
    sealed: bool
    payload: bytes
    seq: int = 0  # sealed: the sender's counter of messages to this receiver (in the associated data)

    def meta(self) -> str:
        """The envelope's header as JSON: phase, step, sender, receiver, name, shape, what, size, sealed."""
        return json.dumps([self.phase, self.step, self.sender, self.receiver, self.name, list(self.shape),
                           self.what, self.n_values, self.sealed] + ([self.seq] if self.sealed else []))

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Envelope:
        """The envelope carried by a Flower ``ConfigRecord`` (see ``to_record``) or a dict of the same two keys."""
        fields = json.loads(record["meta"])
        phase, step, sender, receiver, name, shape, what, n_values, sealed = fields[:9]
        return cls(phase, step, sender, receiver, name, tuple(shape), what, n_values, sealed,
                   payload=bytes(record["payload"]), seq=int(fields[9]) if len(fields) > 9 else 0)

    def to_record(self) -> ConfigRecord:
        """The envelope as a Flower ``ConfigRecord``: its header and its payload bytes."""
        return ConfigRecord({"meta": self.meta(), "payload": self.payload})

    @property
    def wire_bytes(self) -> int:
        """Bytes this envelope puts on the wire: header and payload."""
        return len(self.meta().encode()) + len(self.payload)

    @classmethod
    def make(cls, sender: str, receiver: str, name: str, value, what: str, phase: str, step: str, *,
             keys: PartyKeys | None = None, peer_public: bytes | None = None, run_id: str = "",
             seq: int = 0) -> Envelope:
        """The envelope of ``value``; sealed for ``peer_public`` when ``keys`` are given (``seq``: the sender's
        counter of sealed messages to this receiver, authenticated with it)."""
        shape = tuple(int(s) for s in getattr(value, "shape", ()))
        n_values = getattr(value, "n_stored", None)
        n_values = int(np.prod(shape)) if n_values is None else int(n_values)
        payload = encode_value(value)
        sealed = keys is not None
        if keys is not None:
            assert peer_public is not None, "sealing needs the receiver's public key"
            payload = seal(keys, peer_public, payload, associated_data(run_id, sender, receiver, name, seq))
        return cls(phase, step, sender, receiver, name, shape, what, n_values, sealed, payload, seq if sealed else 0)

    def value(self, keys: PartyKeys | None = None, peer_public: bytes | None = None, run_id: str = ""):
        """The payload's value (opened with the receiver's ``keys`` and the sender's public key if sealed)."""
        data = self.payload
        if self.sealed:
            aad = associated_data(run_id, self.sender, self.receiver, self.name, self.seq)
            assert keys is not None and peer_public is not None, "a sealed payload opens with keys"
            data = open_sealed(keys, peer_public, data, aad)
        return decode_value(data)


# ---------------------------------------------------------------------------------------------- ClientApp side
def read_request(msg: Message) -> tuple[str, dict, list[Envelope]]:
    """(op, params, delivered envelopes) of a Flower message (a party's ``params`` hold ``{party: [op, params]}``)."""
    content = msg.content
    head = content["op"]
    inbox = [Envelope.from_record(content[k]) for k in sorted((k for k in content if k.startswith("m")),
                                                              key=lambda k: int(k[1:]))]
    return str(head["op"]), json.loads(str(head["params"])), inbox


def party_reply(msg: Message, envelopes: list[Envelope], info: dict | None = None) -> Message:
    """The ClientApp's reply: the envelopes it sends and a small JSON ``info`` (public facts, e.g. its key)."""
    records: dict[str, ArrayRecord | MetricRecord | ConfigRecord] = {
        f"m{i}": e.to_record() for i, e in enumerate(envelopes)}
    records["op"] = ConfigRecord({"op": "reply", "params": json.dumps(info or {})})
    return Message(RecordDict(records), reply_to=msg)


def exchange(grid, messages: list, timeout: float, poll: float = 0.1) -> list:
    """Push ``messages`` and pull their replies every ``poll`` seconds until all came or ``timeout`` passed
    (``Grid.send_and_receive`` sleeps 3 s between pulls, rounding every round up to a multiple of 3 s)."""
    ids = set(grid.push_messages(messages))
    deadline, replies = time.monotonic() + timeout, []
    while ids and time.monotonic() < deadline:
        got = list(grid.pull_messages(ids))
        replies += got
        ids.difference_update(r.metadata.reply_to_message_id for r in got)
        if ids:
            time.sleep(poll)
    return replies


def pack_envelopes(header: dict, envelopes: list[Envelope]) -> bytes:
    """One channel message: ``header`` and the envelopes (their log fields and payload bytes)."""
    header = {**header, "metas": [e.meta() for e in envelopes]}
    return pack(header, {f"p{i}": np.frombuffer(e.payload, np.uint8) for i, e in enumerate(envelopes)})


def unpack_envelopes(data: bytes) -> tuple[dict, list[Envelope]]:
    """The header and the envelopes of one party's message (the inverse of ``pack_envelopes``)."""
    header, arrays = unpack(data)
    envs = [Envelope.from_record({"meta": meta, "payload": arrays[f"p{i}"].tobytes()})
            for i, meta in enumerate(header.pop("metas", []))]
    return header, envs


# ---------------------------------------------------------------------------------------------- ServerApp side
class Relay:
    """The ServerApp's view of a run: party id -> node id, rounds of operations, the log and the wire bytes.

    Parameters
    ----------
    grid : flwr.serverapp.Grid
    nodes : dict party id -> node id, or None (learnt from the first round's replies)
    central : str, the central role's name in the log (messages to it are read by the ServerApp)
    timeout : float, seconds a round waits for every reply
    recorder : list or None, gets (direction, Envelope) for everything the ServerApp receives and sends
    message_type : str, the Flower message type ("query.<protocol>": the ClientApp's handler)
    """

    def __init__(self, grid, nodes: dict | None, central: str, timeout: float, recorder: list | None = None,
                 message_type: str = "query.protocol"):
        self.message_type = message_type
        self.grid, self.nodes, self.central, self.timeout = grid, dict(nodes or {}), central, float(timeout)
        from engine.federation.messages import MessageLog  # here: pandas, which a party's process never needs

        self.log = MessageLog()
        self.wire_bytes: list[int] = []  # per log record
        self.recorder = recorder
        self.pending: dict[str, list[Envelope]] = {}  # receiver role name -> envelopes to deliver
        self.role_party: dict[str, str] = {}  # role name -> party id
        self.hub: Hub | None = None  # the in-run channel once ``connect`` opened it
        self.flower_rounds = 0
        self.channel_rounds: list[float] = []  # seconds of each round over the channel
        self.channel_bytes = 0  # bytes the channel carried (both ways, its messages as sent)

    def connect(self, params: dict, parties: list, progress=None) -> None:
        """Move the run onto a :class:`~engine.federation.flower.channel.Hub`: ONE Flower message to each node
        ("connect", with ``params`` and that node's own credentials), which its ClientApp answers only when the
        channel closes (:meth:`close`); every later :meth:`round` goes over the channel to ``parties``.
        ``progress``: the hub's progress file (:class:`~engine.federation.flower.channel.Hub`)."""
        self.hub = Hub([str(p) for p in parties], timeout=self.timeout, progress=progress)
        messages = []
        for node in self.grid.get_node_ids():
            op = {"*": ["connect", {**params, "channel": self.hub.credentials(f"node-{node}")}]}
            records: dict[str, ArrayRecord | MetricRecord | ConfigRecord] = {
                "op": ConfigRecord({"op": "ops", "params": json.dumps(op)})}
            messages.append(Message(RecordDict(records), dst_node_id=node, message_type=self.message_type))
        self._connect_ids = set(self.grid.push_messages(messages))
        self.flower_rounds += 1
        self.hub.wait_connected()

    def close(self) -> None:
        """Close the channel and collect the parties' Flower replies to "connect" (errors named)."""
        if self.hub is None:
            return
        hub, self.hub = self.hub, None
        hub.close()
        self.channel_bytes += hub.bytes_down + hub.bytes_up
        party_of = {cn: p for p, cn in hub.holder.items()}
        deadline = time.monotonic() + self.timeout
        while self._connect_ids and time.monotonic() < deadline:
            for reply in self.grid.pull_messages(self._connect_ids):
                self._connect_ids.discard(reply.metadata.reply_to_message_id)
                if reply.has_error():
                    who = party_of.get(f"node-{reply.metadata.src_node_id}", f"on node {reply.metadata.src_node_id}")
                    raise FederationError(f"party {who} failed: {reply.error.reason}")
            time.sleep(0.05)

    def _record(self, env: Envelope, direction: str) -> None:
        self.log.add(env.sender, env.receiver, env.name, env.shape, env.what, phase=env.phase, step=env.step,
                     n_values=env.n_values)
        self.wire_bytes.append(env.wire_bytes)
        if self.recorder is not None:
            self.recorder.append((direction, env))

    def send(self, env: Envelope) -> None:
        """A message of the central role to a party (delivered with its next operation)."""
        self._record(env, "sent")
        self.pending.setdefault(env.receiver, []).append(env)

    def round(self, ops: dict) -> dict:
        """Send each party id its ``(op, params, role name)``, with the envelopes pending for that role.

        Before the node of each party is known (``nodes`` empty: the first round of a run) the operations
        go to every node and each node picks its own by its ``party`` node config. Returns party id ->
        (info, envelopes it sent to the central role); envelopes to other parties are queued for them.
        """
        if self.hub is not None:
            return self._channel_round(ops)
        broadcast = not self.nodes
        targets = list(self.grid.get_node_ids()) if broadcast else [self.nodes[p] for p in ops]
        messages = []
        for i, node in enumerate(targets):
            records: dict[str, ArrayRecord | MetricRecord | ConfigRecord] = {}
            if broadcast:
                per_party = {p: [op, params] for p, (op, params, _) in ops.items()}
            else:
                party = list(ops)[i]
                op, params, role = ops[party]
                per_party = {party: [op, params]}
                records = {f"m{j}": e.to_record() for j, e in enumerate(self.pending.pop(role, []))}
            records["op"] = ConfigRecord({"op": "ops", "params": json.dumps(per_party)})
            messages.append(Message(RecordDict(records), dst_node_id=node, message_type=self.message_type))
        for party, (_, _, role) in ops.items():
            self.role_party[role] = party
        t0 = time.monotonic()
        replies = exchange(self.grid, messages, self.timeout)
        self.flower_rounds += 1
        got = {}
        for reply in replies:
            node = reply.metadata.src_node_id
            if reply.has_error():
                who = next((p for p, n in self.nodes.items() if n == node), f"on node {node}")
                raise FederationError(f"party {who} failed: {reply.error.reason}")
            _, info, envelopes = read_request(reply)
            party = str(info.get("party"))
            self.nodes.setdefault(party, node)
            got[party] = (info, envelopes)
        missing = [p for p in ops if p not in got]
        if missing:
            raise FederationError(f"party {', '.join(missing)} did not answer '{ops[missing[0]][0]}' within "
                                  f"{time.monotonic() - t0:.0f} s (its SuperNode may have stopped)")
        return self._file(ops, got)

    def _channel_round(self, ops: dict) -> dict:
        t0 = time.perf_counter()
        messages = {}
        for party, (op, params, role) in ops.items():
            self.role_party[role] = party
            messages[party] = pack_envelopes({"op": op, "params": params}, self.pending.pop(role, []))
        assert self.hub is not None  # round() comes here only over an open channel
        try:
            replies = self.hub.round(messages)
        except ChannelError as err:
            raise FederationError(str(err)) from err
        got = {p: unpack_envelopes(data) for p, data in replies.items()}
        self.channel_rounds.append(time.perf_counter() - t0)
        return self._file(ops, {p: (header.get("info", {}), envs) for p, (header, envs) in got.items()})

    def _file(self, ops: dict, got: dict) -> dict:
        """Record what each party sent (in the order of ``ops``) and queue what is for other parties."""
        out = {}
        for party in ops:  # record in the order of ``ops``, not of arrival
            info, envelopes = got[party]
            for env in envelopes:
                self._record(env, "received")
                if env.receiver != self.central:
                    self.pending.setdefault(env.receiver, []).append(env)
            out[party] = (info, [e for e in envelopes if e.receiver == self.central])
        return out
