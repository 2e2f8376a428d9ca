"""P3LS over Flower against an ACTIVE coordinator: the shipped party code refuses every attack before using a secret.

The coordinator (the ServerApp: the CSP and the relay of every party-to-party message) is played by hand here:
it builds the very Flower messages a party's ClientApp gets (``party_main``, in this process, no SuperLink) and
reads the replies, and, being active, alters them. Attacks (security review 2026-11-27, finding N1):

- unsealed key material: fake trusted-authority keys (``A``, ``H_1``) delivered in clear;
- key substitution: the coordinator forwards its own X25519 key as the TA's (to the holder) or as a holder's
  (to the TA), so that what is sealed "for" the peer opens for the coordinator;
- replay and reordering of the TA's genuine sealed envelopes.

Oracle: what a party does with a delivered value is spied on (the holder's ``masked_block``, the TA's
``training_keys``); an attack is refused when ``party_main`` raises before that call. Each party's identity key
and pins are written here with ``cryptography`` in the documented format (PEM PKCS8 Ed25519; JSON party id ->
raw public hex), as each party's operator does.
"""
from __future__ import annotations

import json
import time

import numpy as np
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flwr.app import ConfigRecord, Context, Message, Metadata, RecordDict

from engine.federation.e2e import PartyKeys, associated_data
from engine.federation.flower.relay import Envelope, read_request
from engine.methods.p3ls import flower_roles
from engine.methods.p3ls.masks import OrthogonalMask
from engine.methods.p3ls.roles import DataHolder, TrustedAuthority

#: A message's time to live, flwr's DEFAULT_TTL (12 h; in flwr.app since 1.22, in flwr.common.message before).
MESSAGE_TTL = 43_200.0

MODEL, RUN, TA = "model-under-attack", 77, "TA"
NAMES = ["party 1 (LC)", "party 2"]
HOLDERS = [[NAMES[0], 1], [NAMES[1], 2]]


class Coordinator:
    """Drives the parties' ClientApp code as the ServerApp would, and may alter anything it forwards."""

    def __init__(self, tmp_path):
        rng = np.random.default_rng(4)
        self.X = [rng.standard_normal((12, 3)), rng.standard_normal((12, 2))]
        self.Y = rng.standard_normal((12, 2))
        self.config, identities = {}, {}
        for node, pid in enumerate(["ta", "1", "2"], start=1):
            d = tmp_path / f"party-{pid}"
            d.mkdir()
            key = Ed25519PrivateKey.generate()
            (d / "identity.key").write_bytes(key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
            identities[pid] = key.public_key().public_bytes(serialization.Encoding.Raw,
                                                            serialization.PublicFormat.Raw).hex()
            self.config[pid] = {"party": pid, "data-dir": str(d), "identity-key": str(d / "identity.key"),
                                "pinned-peers": str(d / "pinned-peers.json"), "node": node}
            if pid != "ta":
                i = int(pid) - 1
                np.savez(d / "train.npz", X=self.X[i], **({"Y": self.Y} if i == 0 else {}))
        for pid, cfg in self.config.items():  # pinned out of band: every other party's identity
            (tmp_path / f"party-{pid}" / "pinned-peers.json").write_text(
                json.dumps({q: pub for q, pub in identities.items() if q != pid}))

    def call(self, pid: str, op: str, params: dict, inbox=()):
        """One Flower message to party ``pid``; returns (info, envelopes it sent)."""
        cfg = self.config[pid]
        records = {f"m{j}": e.to_record() for j, e in enumerate(inbox)}
        records["op"] = ConfigRecord({"op": "ops", "params": json.dumps({pid: [op, {"model": MODEL, **params}]})})
        meta = Metadata(run_id=RUN, message_id=f"msg-{time.monotonic_ns()}", src_node_id=0,
                        dst_node_id=cfg["node"], reply_to_message_id="", group_id="", created_at=time.time(),
                        ttl=MESSAGE_TTL, message_type=flower_roles.MESSAGE_TYPE)
        context = Context(run_id=RUN, node_id=cfg["node"], state=RecordDict(), run_config={},
                          node_config={k: v for k, v in cfg.items() if k != "node"})
        reply = flower_roles.party_main(Message(content=RecordDict(records), metadata=meta), context)
        _, info, envelopes = read_request(reply)
        return info, envelopes

    def hello(self):
        """Round 1 as the ServerApp runs it: every party's fresh key-exchange key (and its signature)."""
        ta, _ = self.call("ta", "hello", {"role": "ta", "seed": 1, "row_mask_block_size": None})
        h = [self.call(str(i + 1), "hello", {"role": "holder", "index": i + 1, "name": NAMES[i], "seed": 2 + i,
                                             "file": "train.npz"})[0] for i in range(2)]
        infos = {TA: (ta, "ta"), NAMES[0]: (h[0], "1"), NAMES[1]: (h[1], "2")}
        self.peers = {role: info["public"] for role, (info, _) in infos.items()}
        self.identities = {role: {"party": pid, "sig": info.get("sig")} for role, (info, pid) in infos.items()}
        self.shape = {"rows": h[0]["rows"], "sizes": [h[0]["columns"], h[1]["columns"]],
                      "responses": h[0]["responses"]}

    def common(self, peers=None):
        return {"peers": dict(peers or self.peers), "identities": self.identities, "holders": HOLDERS,
                "lc": NAMES[0]}

    def ta_keys(self):
        """Round 2, honest: the TA's sealed keys; returns those for holder 1 in the order sent."""
        _, envs = self.call("ta", "train_keys", {**self.common(), **self.shape})
        return [e for e in envs if e.receiver == NAMES[0]]

    def train(self, pid: str, inbox, peers=None):
        return self.call(pid, "train", {**self.common(peers), "secure": False}, inbox)


@pytest.fixture()
def coordinator(tmp_path):
    c = Coordinator(tmp_path)
    c.hello()
    return c


@pytest.fixture()
def used(monkeypatch):
    """Calls of the parties' secret-using steps: the holder masking its block, the TA drawing its keys."""
    calls = []
    for cls, name in ((DataHolder, "masked_block"), (TrustedAuthority, "training_keys")):
        original = getattr(cls, name)

        def spy(self, *a, _original=original, _name=name, **k):
            calls.append(_name)
            return _original(self, *a, **k)

        monkeypatch.setattr(cls, name, spy)
    return calls


def _orthogonal(m, seed=0):
    return np.linalg.qr(np.random.default_rng(seed).standard_normal((m, m)))[0]


def _fake_keys():
    """Keys the coordinator made itself (it knows them, so it could unmask what the holder sends next)."""
    return [("A", OrthogonalMask([_orthogonal(12)])), ("H_1", _orthogonal(5, 1)[:3]), ("G", _orthogonal(2, 2)),
            ("N", _orthogonal(2, 3))]


def test_honest_handshake_trains(coordinator, used):
    envs = coordinator.ta_keys()
    assert [e.name for e in envs] == ["A", "H_1", "G", "N"] and all(e.sealed for e in envs)
    _, sent = coordinator.train("1", envs)
    assert "masked_block" in used and any(e.name == "X_1'" for e in sent)


def test_unsealed_key_material_is_refused_naming_field_and_sender(coordinator, used):
    fake = [Envelope.make(TA, NAMES[0], name, value, "key", "keys", "Alg. 2 step 1") for name, value in _fake_keys()]
    with pytest.raises(ValueError, match=r"refused: 'A' from TA arrived unsealed"):
        coordinator.train("1", fake)
    assert used == []
    forged_as_csp = [Envelope.make("CSP", NAMES[0], name, value, "key", "keys", "Alg. 2 step 1")
                     for name, value in _fake_keys()]
    with pytest.raises(ValueError, match=r"refused: 'A' from CSP arrived unsealed"):
        coordinator.train("1", forged_as_csp)
    assert used == []


def _coordinator_signature(coordinator, role, party, public):
    """The coordinator signs the substituted key, in the parties' statement format, with an identity of its own
    (no party pinned it)."""
    statement = b"privalab key-exchange key v1" + associated_data(MODEL, role, party, bytes(public).hex())
    return {"party": party, "sig": Ed25519PrivateKey.generate().sign(statement).hex()}


@pytest.mark.parametrize("resign", [False, True])
def test_ta_refuses_a_holder_key_substituted_by_the_coordinator(coordinator, used, resign):
    evil = PartyKeys.generate()
    peers = {**coordinator.peers, NAMES[0]: evil.public_bytes().hex()}
    if resign:
        coordinator.identities[NAMES[0]] = _coordinator_signature(coordinator, NAMES[0], "1", evil.public_bytes())
    with pytest.raises(ValueError, match=r"refused: .*party 1"):
        coordinator.call("ta", "train_keys", {**coordinator.common(peers), **coordinator.shape})
    assert used == []  # no key was drawn, none sealed for the coordinator


@pytest.mark.parametrize("resign", [False, True])
def test_holder_refuses_a_ta_key_substituted_by_the_coordinator(coordinator, used, resign):
    evil = PartyKeys.generate()
    peers = {**coordinator.peers, TA: evil.public_bytes().hex()}
    if resign:
        coordinator.identities[TA] = _coordinator_signature(coordinator, TA, "ta", evil.public_bytes())
    holder_public = bytes.fromhex(coordinator.peers[NAMES[0]])
    run_id = f"{MODEL}/{RUN}"
    fake = [Envelope.make(TA, NAMES[0], name, value, "key", "keys", "Alg. 2 step 1", keys=evil,
                          peer_public=holder_public, run_id=run_id, **({"seq": k} if _has_seq() else {}))
            for k, (name, value) in enumerate(_fake_keys())]
    with pytest.raises(ValueError, match=r"refused: the key-exchange key of TA"):
        coordinator.train("1", fake, peers)
    assert used == []


def _has_seq() -> bool:
    return "seq" in Envelope.make.__code__.co_varnames


@pytest.mark.parametrize("attack", ["replayed", "reordered", "replayed later"])
def test_replayed_or_reordered_sealed_messages_are_refused(coordinator, used, attack):
    envs = coordinator.ta_keys()
    used.clear()  # the TA drew its keys honestly; what follows is the holder's side
    a, h1 = envs[0], envs[1]
    if attack == "replayed later":
        coordinator.train("1", envs)  # the honest delivery
        used.clear()
        with pytest.raises(ValueError, match=r"refused: sealed 'A' from TA .*replayed or reordered"):
            coordinator.train("1", [a])
        assert used == []
        return
    inbox = [a, a, *envs[1:]] if attack == "replayed" else [h1, a, *envs[2:]]
    with pytest.raises(ValueError, match=r"refused: sealed '(A|H_1)' from TA .*replayed or reordered"):
        coordinator.train("1", inbox)
    assert used == []
