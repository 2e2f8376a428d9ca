"""The files a federation with TLS and SuperNode authentication needs: a CA, the SuperLink's certificate, node keys.

:func:`make_tls` writes a fresh certificate authority and the SuperLink's server certificate (subjectAltName: the
IP addresses or host names the parties and the coordinator dial) for ``flower-superlink --ssl-ca-certfile
--ssl-certfile --ssl-keyfile`` and the parties' ``--root-certificates``; :func:`make_supernode_key` writes one
SuperNode's authentication key pair (ECDSA P-384, OpenSSH format: ``flower-supernode
--auth-supernode-private-key`` reads the private half, ``flwr supernode register`` the public one), what
``ssh-keygen -t ecdsa -b 384`` makes. :class:`~engine.federation.flower.runtime.LocalFederation` uses both when
started with ``tls=True`` / ``supernode_auth=True``; a deployment makes them the same way (docs/federation.md).

Every key comes from OS entropy (``cryptography``); private keys are written readable by their owner only.
Written by hand: Flower ships no certificate tooling (its docs call openssl from a shell script); only which
fields the certificates carry is decided here.
"""
from __future__ import annotations

import datetime
import ipaddress
import os
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["make_supernode_key", "make_tls"]

VALID_DAYS = 30  # a local or test federation's certificates; a deployment renews its own


def _write_private(path: Path, data: bytes) -> None:
    """Write a private key readable by its owner only (created with mode 0600, never world-readable on the way).

    An existing file at ``path`` (a reused work folder) is removed first and a symlink is never followed: ``os.open``
    applies its mode only to a file it creates, so a key written into an older, looser file kept that file's mode."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    os.fchmod(fd, 0o600)  # whatever the umask
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def _san(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def make_tls(directory, hosts) -> dict[str, Path]:
    """A CA and a server certificate for ``hosts`` (IP addresses or DNS names) in ``directory``.

    Returns ``{"ca": ca.crt, "cert": server.pem, "key": server.key}`` (PEM files; the CA's own key is not kept:
    nothing else is ever signed with it)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP384R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "privalab federation CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA384()))
    key = ec.generate_private_key(ec.SECP384R1())
    hosts = [str(h) for h in hosts]
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName([_san(h) for h in hosts]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA384()))
    out = {"ca": directory / "ca.crt", "cert": directory / "server.pem", "key": directory / "server.key"}
    out["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    out["cert"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    _write_private(out["key"], key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                 serialization.NoEncryption()))
    return out


def make_supernode_key(path) -> Path:
    """A SuperNode's authentication key pair: the private key at ``path``, the public one at ``path.pub``
    (returned)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP384R1())
    _write_private(path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                           serialization.NoEncryption()))
    public = path.with_name(path.name + ".pub")
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                                     serialization.PublicFormat.OpenSSH) + b"\n")
    return public
