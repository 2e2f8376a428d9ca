"""P3LS over Flower: the same roles and messages as :class:`engine.methods.p3ls.protocol.P3LS`, one process each.

Where each role runs:

- the server (CSP) in the ServerApp, which also relays every party-to-party message;
- each data holder as a ClientApp on its own SuperNode (party id ``"1"``, ``"2"``, ...), reading only its
  own data file in its own directory (its node config's ``data-dir``) and keeping its state there;
- the trusted authority (TA) as a ClientApp on its own SuperNode (party id ``"ta"``): it never sees data,
  and the relay never sees its keys, which it seals for each holder (:mod:`engine.federation.e2e`); the
  holders' pairwise mask seeds (``secure_aggregation``) are sealed the same way.

Against an active coordinator (it relays, so it may substitute keys, forge, replay or reorder envelopes):
each party signs its fresh key-exchange key with its pinned identity (:mod:`engine.federation.identity`) and
checks every peer's key against its own pins (node config ``pinned-peers``) before sealing for it or opening
with it; a party accepts unsealed only the CSP's own masked results (``_CSP_NAMES``), and every sealed
envelope must carry the pair's next counter (authenticated with it). Anything else is refused
(:class:`ProtocolRefused`, :class:`~engine.federation.identity.KeyRefused`) before any delivered value is used.

The roles are the very :class:`~engine.methods.p3ls.roles.DataHolder` and
:class:`~engine.methods.p3ls.roles.TrustedAuthority` objects of the local transport, built with the same
spawned seeds, so predictions equal the local transport's (the pairwise seeds come from fresh OS entropy in
every case: their masks cancel in the sum, so they change nothing but rounding). Fit: ONE Flower round
("connect") and the protocol's 4 rounds (hello and public keys; TA keys and seeds; masked data; recovery) over
the run's channel (:mod:`engine.federation.flower.channel`: one persistent TLS stream per party, about a
millisecond a round against seconds for a Flower round, whose every message starts a new ClientApp process).
Predict: one Flower round and 3 channel rounds.
Not over Flower (``NotImplementedError``): ``validation``, ``transform``, ``relevance``, ``audit``.
"""
from __future__ import annotations

import json
import os
import pickle
import re
import secrets
import shutil
import tempfile
import time
import traceback
import uuid
import weakref
from pathlib import Path
from typing import Any

import numpy as np
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from flwr.app import Context, Message
from flwr.serverapp import Grid

from engine.federation.e2e import PartyKeys
from engine.federation.flower.channel import serve_party
from engine.federation.flower.driver import federation, run_job
from engine.federation.flower.relay import Envelope, Relay, pack_envelopes, party_reply, read_request, unpack_envelopes
from engine.federation.flower.runtime import progress_file
from engine.federation.identity import KeyRefused, load_identity, load_pins, sign_key, verify_key
from engine.methods.p3ls.roles import DataHolder, Server, TrustedAuthority
from engine.privacy.noise import fresh_generator

__all__ = ["MESSAGE_TYPE", "fit_over_flower", "party_main", "predict_over_flower", "server_main"]

CSP, TA = "CSP", "TA"
#: the only messages a party accepts unsealed: the CSP's own (masked) results; everything else must be sealed
_CSP_NAMES = re.compile(r"T'|Q'|U'|T_new'|Ŷ'|\[[WPB]_\d+\]")


class ProtocolRefused(ValueError):
    """A delivered envelope broke the protocol's rules (unsealed secret, wrong peer, replayed or reordered)."""
MESSAGE_TYPE = "query.p3ls"  # the ClientApp's handler: engine/federation/flower_app/privalab_apps.py
CHANNEL_TIMEOUT = 600.0  # seconds a party's channel may stay open (one fit or predict)


# ============================================================================================ party side
class _Party:
    """One party's state between Flower messages, kept in its own directory (never sent)."""

    def __init__(self, data_dir: Path, model: str):
        self.path = data_dir / f"p3ls-{Path(model).name}.pkl"
        self.model = str(model)
        self.role: DataHolder | TrustedAuthority | None = None  # set by hello
        self.private = b""
        self.seeds_out: dict[str, list[int]] = {}
        self.seeds_in: dict[str, list[int]] = {}
        self.sent_seq: dict[str, int] = {}  # peer role -> next counter of a sealed message to it
        self.recv_seq: dict[str, int] = {}  # peer role -> counter the next sealed message from it must carry
        self.peers: dict[str, bytes] = {}  # peer role -> its verified key-exchange key

    @property
    def played(self) -> DataHolder | TrustedAuthority:
        """The role this party plays in the model (refused before its hello)."""
        if self.role is None:
            raise ProtocolRefused(f"refused: party state {self.path.name} holds no role (no hello yet)")
        return self.role

    @property
    def holder(self) -> DataHolder:
        """The data-holder role this party plays (refused when it plays the trusted authority)."""
        role = self.played
        if not isinstance(role, DataHolder):
            raise ProtocolRefused(f"refused: a data holder's step was asked of {role.name}")
        return role

    @property
    def authority(self) -> TrustedAuthority:
        """The trusted-authority role this party plays (refused when it plays a data holder)."""
        role = self.played
        if not isinstance(role, TrustedAuthority):
            raise ProtocolRefused(f"refused: a trusted authority's step was asked of {role.name}")
        return role

    @property
    def keys(self) -> PartyKeys:
        return PartyKeys(X25519PrivateKey.from_private_bytes(self.private))

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_bytes(pickle.dumps(self.__dict__))
        os.replace(tmp, self.path)

    @classmethod
    def load(cls, data_dir: Path, model: str) -> _Party:
        party = cls(data_dir, model)
        party.__dict__.update(pickle.loads(party.path.read_bytes()))
        return party

    def sealed_for(self, receiver: str, name: str, value, what: str, phase: str, step: str, run_id: str) -> Envelope:
        """An envelope sealed for a verified peer, numbered in this pair's sequence."""
        if receiver not in self.peers:
            raise KeyRefused(f"refused: no verified key-exchange key of {receiver} to seal {name!r} for")
        seq = self.sent_seq.get(receiver, 0)
        self.sent_seq[receiver] = seq + 1
        return Envelope.make(self.played.name, receiver, name, value, what, phase, step, keys=self.keys,
                             peer_public=self.peers[receiver], run_id=run_id, seq=seq)


def _expected_party(role: str, holders: list) -> str:
    """The party id a role must be: the TA is party "ta", holder i is party "i" (never the coordinator's say)."""
    if role == TA:
        return "ta"
    index = [str(i) for name, i in holders if name == role]
    if len(index) != 1:
        raise KeyRefused(f"refused: {role!r} is not exactly one of this model's roles")
    return index[0]


def _verify_peers(party: _Party, params: dict, node_config: dict) -> None:
    """Check every peer key the coordinator forwards against the identities pinned in this party's node config;
    keep the verified keys, and refuse any later change of a key within the model."""
    peers, identities = params.get("peers", {}), params.get("identities", {})
    if not peers:
        return
    pins = load_pins(Path(str(node_config["pinned-peers"])))
    for role, public in peers.items():
        if role == party.played.name:
            continue
        vouch = identities.get(role) or {}
        claimed = _expected_party(role, params.get("holders", []))
        if str(vouch.get("party")) != claimed:
            raise KeyRefused(f"refused: the key-exchange key of {role} comes without the signature of party {claimed}")
        key = bytes.fromhex(public)
        verify_key(pins, party.model, role, claimed, key, str(vouch.get("sig", "")))
        if party.peers.setdefault(role, key) != key:
            raise KeyRefused(f"refused: the key-exchange key of {role} changed within the model")


def _deliver(party: _Party, inbox: list[Envelope], run_id: str) -> None:
    """Check, open and file every delivered envelope, refusing before any value is used: anything but the CSP's
    own messages must arrive sealed by a verified peer for this party, in the pair's order, each once."""
    me, nxt = party.played.name, dict(party.recv_seq)
    for env in inbox:
        if not env.sealed:
            if env.sender != CSP or not _CSP_NAMES.fullmatch(env.name):
                raise ProtocolRefused(f"refused: {env.name!r} from {env.sender} arrived unsealed; only the CSP's own "
                                      "masked results may (key material and seeds must be sealed end to end)")
            continue
        if env.receiver != me or env.sender not in party.peers:
            raise ProtocolRefused(f"refused: sealed {env.name!r} from {env.sender} to {env.receiver}: not from a "
                                  f"verified peer to {me}")
        expected = nxt.get(env.sender, 0)
        if env.seq != expected:
            raise ProtocolRefused(f"refused: sealed {env.name!r} from {env.sender} is message {env.seq} of the pair, "
                                  f"expected {expected}: replayed or reordered")
        nxt[env.sender] = expected + 1
    # every envelope passed: open them all (a forged one fails here, still before any is used), then file them
    values = [env.value(party.keys, party.peers[env.sender], run_id) if env.sealed else env.value() for env in inbox]
    party.recv_seq = nxt
    for env, value in zip(inbox, values, strict=False):
        if env.name.startswith("s_"):  # a pairwise seed: one per secure sum, in order
            party.seeds_in.setdefault(env.sender, []).append(int(value))
        else:
            party.played._receive(env.name, value)


def _read_block(data_dir: Path, name: str) -> dict:
    with np.load(data_dir / Path(name).name, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _seed(value):
    return fresh_generator() if value is None else int(value)


def _masked(party: _Party, value: np.ndarray, sum_index: int) -> np.ndarray:
    """The value plus this holder's pairwise masks of secure sum ``sum_index`` (they cancel in the sum)."""
    out = {p: s[sum_index] for p, s in party.seeds_out.items()}
    inn = {p: s[sum_index] for p, s in party.seeds_in.items()}
    return value + party.holder.pairwise_masks(value.shape, out, inn)


def _to_csp(party: _Party, parts: list, phase: str, step: str, secure: bool, sum_index: int = 0) -> list:
    h = party.holder
    envs = []
    for name, value, what in parts:
        if secure:
            value = _masked(party, value, sum_index)
            name, what = f"{name} + pairwise masks", f"{what}, hidden by pairwise masks (only the sum is readable)"
        envs.append(Envelope.make(h.name, CSP, name, value, what, phase, step))
    return envs


def _op_hello(party: _Party, params: dict, data_dir: Path, node_config: dict) -> dict:
    """A fresh key-exchange key, signed by this party's identity for its role in this model."""
    keys = PartyKeys.generate()
    party.private = keys.private.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                               serialization.NoEncryption())
    pid = str(node_config["party"])
    if params["role"] == "ta":
        if pid != "ta":
            raise KeyRefused(f"refused: party {pid} was asked to play the trusted authority (party ta)")
        party.role = TrustedAuthority(_seed(params["seed"]), params["row_mask_block_size"])
        info = {}
    else:
        if pid != str(params["index"]):
            raise KeyRefused(f"refused: party {pid} was asked to play holder {params['index']}")
        data = _read_block(data_dir, params["file"])
        holder = DataHolder(params["name"], params["index"], data["X"], data.get("Y"),
                            random_state=_seed(params["seed"]))
        party.role = holder
        info = {"rows": int(data["X"].shape[0]), "columns": holder.n_columns,
                "responses": int(data["Y"].shape[1]) if "Y" in data else 0}
    identity = load_identity(Path(str(node_config["identity-key"])))
    sig = sign_key(identity, party.model, party.played.name, pid, keys.public_bytes())
    return {"public": keys.public_bytes().hex(), "sig": sig, **info}


def _op_seeds(party: _Party, params: dict, run_id: str, phase: str) -> list:
    """Pairwise seeds to every holder after this one (one per secure sum), sealed for it."""
    h, envs = party.holder, []
    party.seeds_out, party.seeds_in = {}, {}
    for peer_name, peer_index in params["holders"]:
        if peer_index <= h.index:
            continue
        for _ in range(params["sums"]):
            seed = secrets.randbits(63)  # fresh: the masks cancel in the sum, so no seed is needed for equality
            party.seeds_out.setdefault(peer_name, []).append(seed)
            envs.append(party.sealed_for(peer_name, f"s_{h.index}{peer_index}", np.int64(seed),
                                         "pairwise seed for additive masks that cancel in the sum", phase,
                                         "secure aggregation", run_id))
    return envs


def _op_train_keys(party: _Party, params: dict, run_id: str) -> list:
    ta = party.authority
    holders, lc = params["holders"], params["lc"]
    missing = [name for name, _ in holders if name not in party.peers]
    if missing:  # checked before any key is drawn
        raise KeyRefused(f"refused: no verified key-exchange key of {', '.join(missing)}")
    A, H_blocks, G = ta.training_keys(params["rows"], params["sizes"], params["responses"])
    N = ta.recovery_key(params["responses"])
    n = sum(params["sizes"])

    def sealed(receiver, name, value, what, phase, step):
        return party.sealed_for(receiver, name, value, what, phase, step, run_id)

    envs = []
    for (name, index), size in zip(holders, params["sizes"], strict=False):
        envs.append(sealed(name, "A", A, "row mask (random orthogonal)", "keys", "Alg. 2 step 1"))
        envs.append(sealed(name, f"H_{index}", H_blocks[index - 1],
                           f"its rows of the column mask H ({size} x {n})", "keys", "Alg. 2 step 1"))
    envs.append(sealed(lc, "G", G, "Y-column mask (random orthogonal)", "keys", "Alg. 2 step 1"))
    envs += [sealed(name, "N", N, "random invertible l x l key for B_i", "recovery", "Alg. 3 step 1")
             for name, _ in holders]
    return envs


def _op_train(party: _Party, params: dict) -> list:
    h = party.holder
    i = h.index
    envs = _to_csp(party, [(f"X_{i}'", h.masked_block(), f"A X_{i} H_{i}: masked block, full width n")],
                   "training", "Alg. 2 steps 2, 4", params["secure"])
    if h.is_label_contributor:
        envs.append(Envelope.make(h.name, CSP, "Y'", h.masked_labels(), "A Y G: masked responses", "training",
                                  "Alg. 2 step 3"))
    envs.append(Envelope.make(h.name, CSP, f"[H_{i}]", h.masked_column_key(), f"C_{i} H_{i}", "recovery",
                              "Alg. 3 step 2"))
    if h.is_label_contributor:
        envs.append(Envelope.make(h.name, CSP, "[G^T]", h.masked_label_key(), "G^T N", "recovery", "Alg. 3 step 3"))
    return envs


def _op_recover(party: _Party) -> dict:
    h = party.holder
    h.unmask_scores()
    h.unmask_block_components()
    if h.is_label_contributor:
        h.unmask_label_components()
    h.unmask_coefficients()
    return {}


def _op_infer(party: _Party, params: dict, data_dir: Path) -> list:
    h = party.holder
    i = h.index
    X_new = _read_block(data_dir, params["file"])["X"]
    masked_y, masked_x = h.inference_messages(X_new, True)
    envs = _to_csp(party, [(f"X_{i},new'", masked_x, f"M_new X_{i},new H_{i}")], "inference",
                   "Alg. 5 steps 2-3", params["secure"], 0)
    envs += _to_csp(party, [(f"M Ŷ_{i}", masked_y, f"M_new X_{i},new B_{i}: masked partial prediction")],
                    "inference", "Alg. 5 steps 2-3", params["secure"], 1)
    return envs


def _op_finish(party: _Party, params: dict, data_dir: Path) -> dict:
    h = party.holder
    h.unmask_new_scores()
    if h.is_label_contributor:  # the prediction stays with the label contributor, in its own directory
        np.save(data_dir / Path(params["out"]).name, h.unmask_prediction(), allow_pickle=False)
    return {}


def party_main(msg: Message, context: Context) -> Message:
    """Dispatch one operation of this party (its id is its node config's ``party``); "connect" answers every
    operation that comes over the run's channel, then replies to this one Flower message."""
    node_config = context.node_config
    _, per_party, inbox = read_request(msg)
    op, params = per_party.get(str(node_config["party"])) or per_party["*"]
    if op == "connect":
        def handle(data: bytes) -> bytes:
            header, envelopes = unpack_envelopes(data)
            info, envs = _step(node_config, context.run_id, header["op"], header["params"], envelopes)
            return pack_envelopes({"info": info}, envs)

        served = serve_party(params["channel"], str(node_config["party"]), handle, timeout=CHANNEL_TIMEOUT)
        return party_reply(msg, [], {"party": str(node_config["party"]), "served": served})
    info, envs = _step(node_config, context.run_id, op, params, inbox)
    return party_reply(msg, envs, info)


def _step(node_config: dict, flower_run: int, op: str, params: dict, inbox: list) -> tuple[dict, list]:
    """One operation of this party: (info, envelopes it sends)."""
    pid = str(node_config["party"])
    data_dir = Path(str(node_config["data-dir"]))
    run_id = f"{params['model']}/{flower_run}"
    party = _Party(data_dir, params["model"]) if op == "hello" else _Party.load(data_dir, params["model"])
    if op == "hello" and inbox:
        raise ProtocolRefused(f"refused: {len(inbox)} message(s) delivered with hello, before any key is known")
    if op != "hello":
        _verify_peers(party, params, node_config)
        _deliver(party, inbox, run_id)
    info, envs = {}, []
    if op == "hello":
        info = _op_hello(party, params, data_dir, node_config)
    elif op == "seeds":
        envs = _op_seeds(party, params, run_id, params["phase"])
    elif op == "train_keys":
        envs = _op_train_keys(party, params, run_id)
    elif op == "infer_key":
        missing = [name for name, _ in params["holders"] if name not in party.peers]
        if missing:
            raise KeyRefused(f"refused: no verified key-exchange key of {', '.join(missing)}")
        M = party.authority.inference_key(params["rows"])  # one mask for every holder
        envs = [party.sealed_for(name, "M_new", M, "query mask (random orthogonal)", "inference", "Alg. 5 step 1",
                                 run_id) for name, _ in params["holders"]]
    elif op == "train":
        envs = _op_train(party, params)
    elif op == "recover":
        info = _op_recover(party)
    elif op == "infer":
        envs = _op_infer(party, params, data_dir)
    elif op == "finish":
        info = _op_finish(party, params, data_dir)
    elif op != "noop":
        raise ValueError(f"unknown operation {op!r}")
    party.save()
    return {**info, "party": pid}, envs


# ============================================================================================ ServerApp side
def _holders(job: dict) -> list:
    return [[name, i + 1] for i, name in enumerate(job["names"])]


def _fit(relay: Relay, job: dict, state_dir: Path) -> None:
    g, model = len(job["names"]), job["model"]
    holders, lc = _holders(job), job["names"][job["lc"]]
    common = {"model": model}
    relay.connect({"model": model}, ["ta"] + [str(i + 1) for i in range(g)],  # the whole fit over the channel
                  progress=progress_file(job["result"]))
    ops = {"ta": ("hello", {**common, "role": "ta", "seed": job["seeds"][0],
                            "row_mask_block_size": job["row_mask_block_size"]}, TA)}
    for i in range(g):
        ops[str(i + 1)] = ("hello", {**common, "role": "holder", "index": i + 1, "name": job["names"][i],
                                     "seed": job["seeds"][i + 1], "file": job["file"]}, job["names"][i])
    hello = relay.round(ops)
    # the parties' signed key-exchange keys, forwarded as they came: each peer checks them against its own pins
    by_role = {TA: "ta", **{job["names"][i]: str(i + 1) for i in range(g)}}
    peers = {role: hello[pid][0]["public"] for role, pid in by_role.items()}
    identities = {role: {"party": pid, "sig": hello[pid][0]["sig"]} for role, pid in by_role.items()}
    sizes = [hello[str(i + 1)][0]["columns"] for i in range(g)]
    shape = {"rows": hello["1"][0]["rows"], "sizes": sizes, "responses": hello[str(job["lc"] + 1)][0]["responses"]}
    common = {**common, "peers": peers, "identities": identities, "holders": holders, "lc": lc}
    ops = {"ta": ("train_keys", {**common, **shape}, TA)}
    if job["secure"] and g > 1:
        ops.update({str(i + 1): ("seeds", {**common, "sums": 1, "phase": "training"}, job["names"][i])
                    for i in range(g)})
    relay.round(ops)
    sent = relay.round({str(i + 1): ("train", {**common, "secure": job["secure"] and g > 1}, job["names"][i])
                        for i in range(g)})
    csp = Server()
    x_names = []
    for i in range(g):
        for env in sent[str(i + 1)][1]:
            csp._receive(env.name, env.value())
            if env.name.startswith("X_"):
                x_names.append(env.name)
    csp.aggregate(x_names, "X'")
    csp.fit_masked(int(job["n_components"]))
    for name, index in holders:
        relay.send(Envelope.make(CSP, name, "T'", csp._get("T'"), "A T: masked shared scores", "recovery",
                                 "Alg. 3 step 4"))
        W_m, P_m = csp.masked_block_components(index)
        relay.send(Envelope.make(CSP, name, f"[W_{index}]", W_m, f"C_{index} W_{index}", "recovery", "Alg. 3 step 4"))
        relay.send(Envelope.make(CSP, name, f"[P_{index}]", P_m, f"C_{index} P_{index}", "recovery", "Alg. 3 step 4"))
    relay.send(Envelope.make(CSP, lc, "Q'", csp._get("Q'"), "G^T Q: masked Y-loadings", "recovery", "Alg. 3 step 4"))
    relay.send(Envelope.make(CSP, lc, "U'", csp._get("U'"), "A U: masked Y-scores", "recovery", "Alg. 3 step 4"))
    for name, index in holders:
        relay.send(Envelope.make(CSP, name, f"[B_{index}]", csp.masked_coefficients(index),
                                 f"C_{index} B_{index} N", "recovery", "Alg. 3 step 4"))
    relay.round({str(i + 1): ("recover", common, job["names"][i]) for i in range(g)})
    (state_dir / "server.pkl").write_bytes(pickle.dumps({"csp": csp, "peers": peers, "identities": identities}))


def _predict(relay: Relay, job: dict, state_dir: Path) -> None:
    g = len(job["names"])
    holders, lc = _holders(job), job["names"][job["lc"]]
    saved = pickle.loads((state_dir / "server.pkl").read_bytes())
    common = {"model": job["model"], "peers": saved["peers"], "identities": saved["identities"], "holders": holders}
    csp = saved["csp"]
    secure = job["secure"] and g > 1
    relay.connect({"model": job["model"]}, ["ta"] + [str(i + 1) for i in range(g)],
                  progress=progress_file(job["result"]))
    ops = {"ta": ("infer_key", {**common, "rows": job["rows"]}, TA)}
    ops.update({str(i + 1): ("seeds" if secure else "noop", {**common, "sums": 2, "phase": "inference"},
                             job["names"][i]) for i in range(g)})
    relay.round(ops)
    sent = relay.round({str(i + 1): ("infer", {**common, "file": job["file"], "secure": secure}, job["names"][i])
                        for i in range(g)})
    x_names: list[str] = []
    y_names: list[str] = []
    for i in range(g):
        for env in sent[str(i + 1)][1]:
            csp._receive(env.name, env.value())
            (x_names if env.name.startswith("X_") else y_names).append(env.name)
    csp.aggregate(x_names, "X_new'")
    T_masked = csp.new_scores()
    for name, _ in holders:
        relay.send(Envelope.make(CSP, name, "T_new'", T_masked, "M_new T_new: masked new scores", "inference",
                                 "Alg. 5 step 3"))
    relay.send(Envelope.make(CSP, lc, "Ŷ'", csp.aggregate(y_names, "Ŷ'"), "M_new Ŷ: masked prediction",
                             "inference", "Alg. 5 step 3"))
    relay.round({str(i + 1): ("finish", {**common, "out": job["out"]}, job["names"][i]) for i in range(g)})


def server_main(grid: Grid, context: Context) -> None:
    """Run one P3LS task (``fit`` or ``predict``) described by the job file of the run config's ``job-path``."""
    job_path = Path(str(context.run_config["job-path"]))
    job = json.loads(job_path.read_text())
    state_dir = job_path.parent
    recorder: list[tuple[str, Envelope]] | None = [] if job.get("record") else None
    relay = Relay(grid, None, CSP, job["round_timeout"], recorder, message_type=MESSAGE_TYPE)
    result: dict[str, Any] = {"error": None}
    try:
        try:
            (_fit if job["task"] == "fit" else _predict)(relay, job, state_dir)
        finally:
            relay.close()
    except Exception as exc:  # noqa: BLE001 (every failure goes back to the driver, named)
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc()
    result["log"] = [[*r[:5], list(r[5]), r[6], r[7]] for r in relay.log.records]
    result["wire_bytes"] = relay.wire_bytes
    result["flower_rounds"], result["channel_rounds"] = relay.flower_rounds, relay.channel_rounds
    result["channel_bytes"] = relay.channel_bytes
    if recorder is not None:
        (state_dir / f"record-{job['task']}.pkl").write_bytes(pickle.dumps(
            [(d, e.meta(), e.payload) for d, e in recorder]))
    out = Path(job["result"])
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(result))
    os.replace(tmp, out)


# ============================================================================================ driver side
ROUND_TIMEOUT = 120.0  # seconds the ServerApp waits for one round's replies


def _flower_dir(est) -> str:
    """The estimator's directory for its parties' directories (superlink=None), removed with the estimator."""
    if getattr(est, "_flower_dir", None) is None:
        est._flower_dir = tempfile.mkdtemp(prefix="privalab-p3ls-flower-")
        weakref.finalize(est, shutil.rmtree, est._flower_dir, True)
    return est._flower_dir


def _load_log(est, result: dict) -> None:
    for phase, step, sender, receiver, name, shape, what, n_values in result["log"]:
        est.log_.add(sender, receiver, name, tuple(shape), what, phase=phase, step=step, n_values=n_values)
    est.wire_bytes_per_message_ = list(getattr(est, "wire_bytes_per_message_", [])) + list(result["wire_bytes"])
    est.wire_bytes_ = int(sum(est.wire_bytes_per_message_))
    est.flower_rounds_ = int(result.get("flower_rounds", 0))
    est.channel_round_seconds_ = list(result.get("channel_rounds", []))
    est.channel_bytes_ = int(result.get("channel_bytes", 0))


def fit_over_flower(est, blocks: list, Y2: np.ndarray, names: list[str], seeds: list) -> None:
    """P3LS.fit over Flower: parties' files written to their own directories, one ``fit`` run, views assembled.

    The convenience views (``x_weights_``, ``coef_``, ...) are assembled by the driver from the state each
    party keeps in its own directory: the driver started every party on this machine (``superlink=None`` or a
    federation started in this process), so it may read them; no message of the protocol carries them.
    """
    g, lc = len(blocks), est._lc_index
    model = uuid.uuid4().hex
    parties = ["ta"] + [str(i + 1) for i in range(g)]
    role_names = [n + (" (LC)" if i == lc else "") for i, n in enumerate(names)]
    t0 = time.perf_counter()
    with federation(parties, est.superlink, None if est.superlink else _flower_dir(est)) as fed:
        file = f"p3ls-{model}-train.npz"
        for i, b in enumerate(blocks):
            arrays = {"X": b, **({"Y": Y2} if i == lc else {})}
            np.savez(fed.data_dirs[str(i + 1)] / file, **arrays)
        job = {"protocol": "p3ls", "task": "fit", "model": model, "names": role_names, "lc": lc, "seeds": seeds,
               "file": file,
               "row_mask_block_size": est.row_mask_block_size, "secure": bool(est.secure_aggregation),
               "n_components": int(est.n_components), "round_timeout": ROUND_TIMEOUT,
               "record": bool(getattr(est, "_flower_record", False))}
        try:
            result = run_job(fed, job, timeout=5 * ROUND_TIMEOUT)
        finally:
            for i in range(g):
                (fed.data_dirs[str(i + 1)] / file).unlink(missing_ok=True)
        from engine.federation.messages import MessageLog  # the driver's side only (pandas)

        est.log_ = MessageLog()
        est.wire_bytes_per_message_ = []
        _load_log(est, result)
        state = fed.workdir / "server" / model
        est.holders_ = [_Party.load(fed.data_dirs[str(i + 1)], model).role for i in range(g)]
        est.authority_ = _Party.load(fed.data_dirs["ta"], model).role
        est.server_ = pickle.loads((state / "server.pkl").read_bytes())["csp"]
    est.transport_seconds_ = time.perf_counter() - t0
    est.flower_state_dir_ = str(state)
    est._flower_model = model


def predict_over_flower(est, blocks: list) -> np.ndarray:
    """P3LS.predict over Flower (one ``predict`` run); returns what the label contributor saved, (m_new, l)."""
    g, lc, model = len(blocks), est._lc_index, est._flower_model
    parties = ["ta"] + [str(i + 1) for i in range(g)]
    token = uuid.uuid4().hex[:8]
    file, out = f"p3ls-{model}-new-{token}.npz", f"p3ls-{model}-prediction-{token}.npy"
    t0 = time.perf_counter()
    with federation(parties, est.superlink, None if est.superlink else _flower_dir(est)) as fed:
        for i, b in enumerate(blocks):
            np.savez(fed.data_dirs[str(i + 1)] / file, X=b)
        job = {"protocol": "p3ls", "task": "predict", "model": model, "names": [h.name for h in est.holders_], "lc": lc,
               "rows": int(blocks[0].shape[0]), "file": file, "out": out, "secure": bool(est.secure_aggregation),
               "round_timeout": ROUND_TIMEOUT, "record": bool(getattr(est, "_flower_record", False))}
        try:
            result = run_job(fed, job, timeout=4 * ROUND_TIMEOUT)
            _load_log(est, result)
            prediction = np.load(fed.data_dirs[str(lc + 1)] / out, allow_pickle=False)
        finally:
            for i in range(g):
                (fed.data_dirs[str(i + 1)] / file).unlink(missing_ok=True)
            (fed.data_dirs[str(lc + 1)] / out).unlink(missing_ok=True)
    est.predict_transport_seconds_ = time.perf_counter() - t0
    return prediction
