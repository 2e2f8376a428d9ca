"""engine.federation.e2e: round trip, tamper detection, wrong receiver and wrong associated data fail."""
import pytest

from engine.federation.e2e import DecryptionError, PartyKeys, associated_data, open_sealed, seal


@pytest.fixture(scope="module")
def parties():
    return PartyKeys.generate(), PartyKeys.generate(), PartyKeys.generate()


def test_round_trip_and_ciphertext(parties):
    alice, bob, _ = parties
    payload = b"secret mask bytes" * 10
    aad = associated_data("run-1", "TA", "party 1", "A")
    sealed = seal(alice, bob.public_bytes(), payload, aad)
    assert payload not in sealed and len(sealed) == len(payload) + 12 + 16
    assert open_sealed(bob, alice.public_bytes(), sealed, aad) == payload
    assert seal(alice, bob.public_bytes(), payload, aad)[:12] != sealed[:12]  # fresh nonce per message


def test_tampering_is_detected(parties):
    alice, bob, _ = parties
    aad = associated_data("run-1", "TA", "party 1", "A")
    sealed = bytearray(seal(alice, bob.public_bytes(), b"payload", aad))
    for position in (0, 13, len(sealed) - 1):  # nonce, ciphertext, tag
        altered = bytearray(sealed)
        altered[position] ^= 1
        with pytest.raises(DecryptionError):
            open_sealed(bob, alice.public_bytes(), bytes(altered), aad)


def test_wrong_receiver_or_context_fails(parties):
    alice, bob, carol = parties
    aad = associated_data("run-1", "TA", "party 1", "A")
    sealed = seal(alice, bob.public_bytes(), b"payload", aad)
    with pytest.raises(DecryptionError):
        open_sealed(carol, alice.public_bytes(), sealed, aad)
    for other in (associated_data("run-2", "TA", "party 1", "A"), associated_data("run-1", "TA", "party 2", "A"),
                  associated_data("run-1", "TA", "party 1", "H_1")):
        with pytest.raises(DecryptionError):
            open_sealed(bob, alice.public_bytes(), sealed, other)
    with pytest.raises(DecryptionError):
        open_sealed(bob, alice.public_bytes(), b"short", aad)
