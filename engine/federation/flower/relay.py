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
from dataclasses import dataclass

import numpy as np
from flwr.app import ConfigRecord, Message, RecordDict

from engine.federation.e2e import PartyKeys, associated_data, open_sealed, seal
from engine.federation.flower.runtime import FederationError
from engine.federation.messages import MessageLog

__all__ = ["Envelope", "Relay", "decode_value", "encode_value", "party_reply", "read_request"]



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

    def meta(self) -> str:
        """The envelope's header as JSON: phase, step, sender, receiver, name, shape, what, size, sealed."""
        return json.dumps([self.phase, self.step, self.sender, self.receiver, self.name, list(self.shape),
                           self.what, self.n_values, self.sealed])

    @classmethod
    def from_record(cls, record: ConfigRecord) -> Envelope:
        """The envelope carried by a Flower ``ConfigRecord`` (see ``to_record``)."""
        fields = json.loads(record["meta"])
        return cls(*fields[:5], tuple(fields[5]), *fields[6:], payload=bytes(record["payload"]))

    def to_record(self) -> ConfigRecord:
        """The envelope as a Flower ``ConfigRecord``: its header and its payload bytes."""
        return ConfigRecord({"meta": self.meta(), "payload": self.payload})

    @property
    def wire_bytes(self) -> int:
        """Bytes this envelope puts on the wire: header and payload."""
        return len(self.meta().encode()) + len(self.payload)

    @classmethod
    def make(cls, sender: str, receiver: str, name: str, value, what: str, phase: str, step: str, *,
             keys: PartyKeys | None = None, peer_public: bytes | None = None, run_id: str = "") -> Envelope:
        """The envelope of ``value``; sealed for ``peer_public`` when ``keys`` are given."""
        shape = tuple(int(s) for s in getattr(value, "shape", ()))
        n_values = getattr(value, "n_stored", None)
        n_values = int(np.prod(shape)) if n_values is None else int(n_values)
        payload = encode_value(value)
        sealed = keys is not None
        if sealed:
            payload = seal(keys, peer_public, payload, associated_data(run_id, sender, receiver, name))
        return cls(phase, step, sender, receiver, name, shape, what, n_values, sealed, payload)

    def value(self, keys: PartyKeys | None = None, peer_public: bytes | None = None, run_id: str = ""):
        """The payload's value (opened with the receiver's ``keys`` and the sender's public key if sealed)."""
        data = self.payload
        if self.sealed:
            data = open_sealed(keys, peer_public, data, associated_data(run_id, self.sender, self.receiver, self.name))
        return decode_value(data)


# ---------------------------------------------------------------------------------------------- ClientApp side
def read_request(msg: Message) -> tuple[str, dict, list[Envelope]]:
    """(op, params, delivered envelopes) of a Flower message (a party's ``params`` hold ``{party: [op, params]}``)."""
    content = msg.content
    head = content["op"]
    inbox = [Envelope.from_record(content[k]) for k in sorted((k for k in content if k.startswith("m")),
                                                              key=lambda k: int(k[1:]))]
    return str(head["op"]), json.loads(head["params"]), inbox


def party_reply(msg: Message, envelopes: list[Envelope], info: dict | None = None) -> Message:
    """The ClientApp's reply: the envelopes it sends and a small JSON ``info`` (public facts, e.g. its key)."""
    records = {f"m{i}": e.to_record() for i, e in enumerate(envelopes)}
    records["op"] = ConfigRecord({"op": "reply", "params": json.dumps(info or {})})
    return Message(RecordDict(records), reply_to=msg)


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

    def __init__(self, grid, nodes: dict, central: str, timeout: float, recorder: list | None = None,
                 message_type: str = "query.protocol"):
        self.message_type = message_type
        self.grid, self.nodes, self.central, self.timeout = grid, dict(nodes or {}), central, float(timeout)
        self.log = MessageLog()
        self.wire_bytes: list[int] = []  # per log record
        self.recorder = recorder
        self.pending: dict[str, list[Envelope]] = {}  # receiver role name -> envelopes to deliver
        self.role_party: dict[str, str] = {}  # role name -> party id

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
        broadcast = not self.nodes
        targets = list(self.grid.get_node_ids()) if broadcast else [self.nodes[p] for p in ops]
        messages = []
        for i, node in enumerate(targets):
            records = {}
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
        replies = list(self.grid.send_and_receive(messages, timeout=self.timeout))
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
        out = {}
        for party in ops:  # record in the order of ``ops``, not of arrival
            info, envelopes = got[party]
            for env in envelopes:
                self._record(env, "received")
                if env.receiver != self.central:
                    self.pending.setdefault(env.receiver, []).append(env)
            out[party] = (info, [e for e in envelopes if e.receiver == self.central])
        return out
