"""Party identities a coordinator cannot forge: a long-term Ed25519 key per party, pinned by every peer.

Threat model: the coordinator (the ServerApp, which is P3LS's CSP and the relay of every party-to-party
message) may be *active*: it may substitute public keys, forge, drop, replay or reorder envelopes. The
per-run X25519 key-exchange keys of :mod:`engine.federation.e2e` travel through it, so each party signs its
fresh X25519 key with its long-term Ed25519 identity key, and every peer checks that signature against the
identity it pinned out of band (``pinned-peers.json``: party id -> Ed25519 public key, written by each
party's operator after comparing :func:`fingerprint` s over a channel the coordinator does not control, e.g.
read aloud on a call). A key that is not signed by the pinned identity of the party it claims is refused
(:class:`KeyRefused`) before anything is sealed for it or opened with it.

Files of one party (its node config names them: ``identity-key`` and ``pinned-peers``; both stay in the
party's own directory, the private key readable by its owner only)::

    python -m engine.federation.identity <data-dir>     # make (or read) its key, print its fingerprint

Every primitive is the ``cryptography`` package's; written here is only what is signed (see
:func:`key_statement`) and where the files live, which no kept library decides.

Examples
--------
>>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
>>> me = Ed25519PrivateKey.generate()
>>> pins = {"ta": public_hex(me)}
>>> sig = sign_key(me, "model-1", "TA", "ta", b"k" * 32)
>>> verify_key(pins, "model-1", "TA", "ta", b"k" * 32, sig)
>>> try:
...     verify_key(pins, "model-1", "TA", "ta", b"x" * 32, sig)  # another key than the one signed
... except KeyRefused as refused:
...     print(str(refused)[:46])
refused: the key-exchange key of TA (party ta)
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from engine.federation.e2e import associated_data

__all__ = ["IDENTITY_FILE", "PINS_FILE", "KeyRefused", "create_identity", "fingerprint", "key_statement",
           "load_identity", "load_pins", "public_hex", "sign_key", "verify_key", "write_pins"]

IDENTITY_FILE, PINS_FILE = "identity.key", "pinned-peers.json"
_DOMAIN = b"privalab key-exchange key v1"


class KeyRefused(ValueError):
    """A peer's key-exchange key is not vouched for by the identity this party pinned for it."""


def public_hex(identity: Ed25519PrivateKey) -> str:
    """The identity's 32-byte raw public key, hex."""
    return identity.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def fingerprint(public: str) -> str:
    """What two operators compare out of band: SHA-256 of the raw public key, 16 groups of 4 hex digits."""
    digest = hashlib.sha256(bytes.fromhex(public)).hexdigest()
    return " ".join(digest[i:i + 4] for i in range(0, 64, 4))


def create_identity(path: Path) -> str:
    """Read the identity at ``path``, or make one from OS entropy (mode 0600); returns its public key (hex)."""
    path = Path(path)
    if path.exists():
        return public_hex(load_identity(path))
    identity = Ed25519PrivateKey.generate()
    pem = identity.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    return public_hex(identity)


def load_identity(path: Path) -> Ed25519PrivateKey:
    """The party's Ed25519 identity key from its PEM file (ValueError for any other key)."""
    key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{path} holds no Ed25519 identity key")
    return key


def write_pins(path: Path, pins: dict) -> None:
    """Pin the peers' identities: ``{party id: Ed25519 public key hex}``."""
    Path(path).write_text(json.dumps({str(k): str(v) for k, v in pins.items()}, indent=1))


def load_pins(path: Path) -> dict:
    """The pinned identities of the other parties: party name -> public key fingerprint (hex)."""
    return {str(k): str(v) for k, v in json.loads(Path(path).read_text()).items()}


def key_statement(model: str, role: str, party: str, exchange_public: bytes) -> bytes:
    """What a party signs: it, as party ``party`` playing ``role`` in ``model``, holds ``exchange_public``."""
    return _DOMAIN + associated_data(model, role, party, bytes(exchange_public).hex())


def sign_key(identity: Ed25519PrivateKey, model: str, role: str, party: str, exchange_public: bytes) -> str:
    """The hex signature of this run's key-exchange key by the party's identity (``key_statement``)."""
    return identity.sign(key_statement(model, role, party, exchange_public)).hex()


def verify_key(pins: dict, model: str, role: str, party: str, exchange_public: bytes, signature: str) -> None:
    """``KeyRefused`` unless ``signature`` is the pinned identity of ``party`` vouching for the key."""
    if str(party) not in pins:
        raise KeyRefused(f"refused: {role} claims to be party {party}, whose identity is not pinned here")
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(pins[str(party)])).verify(
            bytes.fromhex(str(signature)), key_statement(model, role, party, exchange_public))
    except (InvalidSignature, ValueError):
        raise KeyRefused(f"refused: the key-exchange key of {role} (party {party}) is not signed by its pinned "
                         "identity (substituted on the way?)") from None


if __name__ == "__main__":  # pragma: no cover (operator's tool)
    target = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    pub = create_identity(target / IDENTITY_FILE)
    print(f"identity: {target / IDENTITY_FILE}\npublic key: {pub}\nfingerprint: {fingerprint(pub)}")
