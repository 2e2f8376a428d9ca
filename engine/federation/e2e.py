"""End-to-end encryption between two parties whose messages travel through a relay (the Flower SuperLink).

A message one party sends another that the relay must not read (P3LS's trusted-authority keys and masks,
pairwise mask seeds) is sealed with a key only the two parties can derive: X25519 key agreement between
their key pairs (the public halves are exchanged through the relay), HKDF-SHA256 of the shared secret into
a 256-bit AES-GCM key per pair, and AES-GCM with a fresh random 96-bit nonce per message. The associated
data (run id, sender, receiver, message name; see :func:`associated_data`) is authenticated but not
encrypted: a sealed message replayed under another name, to another receiver or in another run fails to open,
and with a per-pair message counter (``seq``) in it a message replayed or reordered within a run fails too.
The public halves reach the parties through the relay, so they are signed by each party's pinned identity
(:mod:`engine.federation.identity`): an active relay can neither substitute a key nor forge a sealed message.

Every primitive is the ``cryptography`` package's; written here is only the composition (which key
derivation, which nonce layout, what goes into the associated data), which no kept library offers as one
call. Key pairs come from the OS's entropy (``X25519PrivateKey.generate``) and are never seeded.

Examples
--------
>>> alice, bob = PartyKeys.generate(), PartyKeys.generate()
>>> aad = associated_data("run 1", "TA", "party 1", "A")
>>> sealed = seal(alice, bob.public_bytes(), b"mask", aad)
>>> open_sealed(bob, alice.public_bytes(), sealed, aad)
b'mask'
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

__all__ = ["DecryptionError", "PartyKeys", "associated_data", "open_sealed", "seal"]

NONCE_BYTES = 12  # AES-GCM's 96-bit nonce, random per message, sent in front of the ciphertext
_HKDF_INFO = b"privalab e2e v1: x25519 + hkdf-sha256 + aes-256-gcm"


class DecryptionError(ValueError):
    """A sealed message did not open: wrong key pair, other associated data, or it was altered on the way."""


@dataclass(frozen=True)
class PartyKeys:
    """One party's X25519 key pair (the private half never leaves the party's process)."""

    private: X25519PrivateKey

    @classmethod
    def generate(cls) -> PartyKeys:
        """A fresh key pair from the OS's entropy."""
        return cls(X25519PrivateKey.generate())

    def public_bytes(self) -> bytes:
        """The 32-byte raw public key, to publish through the relay."""
        return self.private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def associated_data(run_id: str, sender: str, receiver: str, name: str, seq: int | None = None) -> bytes:
    """The associated data of one message: its run, sender, receiver, name (and the pair's message counter
    ``seq``), unambiguously joined."""
    parts = [str(p).encode("utf-8") for p in (run_id, sender, receiver, name, *(() if seq is None else (seq,)))]
    return b"".join(len(p).to_bytes(4, "big") + p for p in parts)


def _pair_key(keys: PartyKeys, peer_public: bytes) -> bytes:
    """The pair's AES-256 key: HKDF-SHA256 of the X25519 shared secret, salted with both public keys (sorted,
    so both sides derive the same key)."""
    shared = keys.private.exchange(X25519PublicKey.from_public_bytes(bytes(peer_public)))
    salt = b"".join(sorted([keys.public_bytes(), bytes(peer_public)]))
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=_HKDF_INFO).derive(shared)


def seal(keys: PartyKeys, peer_public: bytes, payload: bytes, aad: bytes) -> bytes:
    """nonce (12 bytes) + AES-GCM ciphertext and tag of ``payload`` for the holder of ``peer_public``."""
    nonce = os.urandom(NONCE_BYTES)
    return nonce + AESGCM(_pair_key(keys, peer_public)).encrypt(nonce, bytes(payload), bytes(aad))


def open_sealed(keys: PartyKeys, peer_public: bytes, sealed: bytes, aad: bytes) -> bytes:
    """The payload of a message sealed by the holder of ``peer_public`` for ``keys``; ``DecryptionError`` if it
    was altered, sealed for someone else, or ``aad`` differs."""
    sealed = bytes(sealed)
    if len(sealed) < NONCE_BYTES + 16:
        raise DecryptionError("sealed message too short to hold a nonce and a tag")
    try:
        return AESGCM(_pair_key(keys, peer_public)).decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], bytes(aad))
    except InvalidTag:
        raise DecryptionError("sealed message does not open: altered, wrong receiver or other associated data") \
            from None
