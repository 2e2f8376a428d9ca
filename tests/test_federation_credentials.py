"""engine.federation.flower.credentials: the CA and SuperLink certificate, and the SuperNode keys.

Oracles: Python's own ``ssl`` client (the certificate verifies for the addresses it names against the CA, and
not for another), and flwr's own loaders of the SuperNode keys (what ``flower-supernode`` and ``flwr supernode
register`` read).
"""
from __future__ import annotations

import socket
import ssl
import stat
import threading

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_ssh_private_key, load_ssh_public_key

from engine.federation.flower.credentials import make_supernode_key, make_tls

# flwr's own key loader is the oracle (and the federation extra holds cryptography): the Flower family's marker
pytestmark = pytest.mark.federation


def _serve_once(files) -> tuple[int, threading.Thread]:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(files["cert"]), str(files["key"]))
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(20)

    def run():
        with listener:
            for _ in range(2):  # one handshake that verifies, one that the client aborts
                try:
                    conn, _ = listener.accept()
                    with ctx.wrap_socket(conn, server_side=True):
                        pass
                except (OSError, ssl.SSLError):
                    pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return listener.getsockname()[1], thread


def test_server_certificate_verifies_for_its_addresses_only(tmp_path):
    files = make_tls(tmp_path / "tls", ["127.0.0.1", "coordinator.example"])
    assert stat.S_IMODE(files["key"].stat().st_mode) == 0o600
    port, thread = _serve_once(files)
    client = ssl.create_default_context(cafile=str(files["ca"]))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, \
            client.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        assert tls.version() in ("TLSv1.2", "TLSv1.3")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, \
            pytest.raises(ssl.SSLCertVerificationError, match="mismatch|doesn't match"):
        client.wrap_socket(raw, server_hostname="10.9.9.9")
    thread.join(timeout=20)


def test_supernode_key_is_what_flower_reads(tmp_path):
    from flwr.cli.supernode.register import try_load_public_key

    public = make_supernode_key(tmp_path / "party1" / "key")
    private = load_ssh_private_key((tmp_path / "party1" / "key").read_bytes(), password=None)
    assert isinstance(private, ec.EllipticCurvePrivateKey) and private.curve.name == "secp384r1"
    assert stat.S_IMODE((tmp_path / "party1" / "key").stat().st_mode) == 0o600
    assert load_ssh_public_key(public.read_bytes()).public_numbers() == private.public_key().public_numbers()
    assert try_load_public_key(public)  # flwr supernode register's own loader accepts it


def test_a_key_written_over_a_looser_file_or_a_symlink_is_a_fresh_0600_file(tmp_path):
    """os.open's mode applies only to a file it creates: a key written into an existing 0644 file kept 0644, and a
    symlink at the path was followed. Now the path is replaced by a new 0600 file."""
    key = tmp_path / "supernode-auth-key"
    old = "the former content, not base64: no key can contain it"  # (the word "old" alone appeared in a key)
    key.write_text(old)
    key.chmod(0o644)
    make_supernode_key(key)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and old not in key.read_text()
    assert key.read_text().startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
    target = tmp_path / "elsewhere"
    target.write_text("untouched")
    link = tmp_path / "linked-key"
    link.symlink_to(target)
    make_supernode_key(link)
    assert not link.is_symlink() and stat.S_IMODE(link.stat().st_mode) == 0o600
    assert target.read_text() == "untouched"


def test_a_federation_off_the_loopback_needs_tls():
    from engine.federation.flower.runtime import LocalFederation

    with pytest.raises(ValueError, match="needs tls=True"):
        LocalFederation(["0"], host="10.77.0.9")
