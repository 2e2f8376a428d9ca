"""Socket guard for a child process (``tests/test_app_server.py``): put this directory first on PYTHONPATH.

Every outbound connection attempt (``socket.connect`` / ``connect_ex`` / ``sendto`` to an address that is not
loopback) and every name lookup of a host that is not loopback (``socket.getaddrinfo``, ``gethostbyname``) is
written as one line to the file named by ``PRIVALAB_SOCKET_GUARD_LOG`` and refused with ``OSError``: nothing
leaves the machine, and the test reads what was tried. Written by hand: a few lines of monkeypatching of the
standard library's ``socket``; no kept library records a process's connection attempts.
"""
from __future__ import annotations

import ipaddress
import os
import socket

_LOG = os.environ.get("PRIVALAB_SOCKET_GUARD_LOG")
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", ""}


def _is_loopback(host) -> bool:
    if host is None:
        return True
    host = host.decode() if isinstance(host, bytes) else str(host)
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _refuse(what: str, target) -> None:
    with open(_LOG, "a", encoding="utf-8") as f:
        f.write(f"{what} {target!r}\n")
    raise OSError(f"socket guard: outbound {what} to {target!r} refused")


def _check_address(what: str, sock, address) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
        _refuse(what, address)


if _LOG:
    _connect, _connect_ex, _sendto = socket.socket.connect, socket.socket.connect_ex, socket.socket.sendto
    _getaddrinfo, _gethostbyname = socket.getaddrinfo, socket.gethostbyname

    def connect(self, address):
        _check_address("connect", self, address)
        return _connect(self, address)

    def connect_ex(self, address):
        _check_address("connect", self, address)
        return _connect_ex(self, address)

    def sendto(self, data, *args):
        _check_address("sendto", self, args[-1])
        return _sendto(self, data, *args)

    def getaddrinfo(host, *args, **kwargs):
        if not _is_loopback(host):
            _refuse("lookup", host)
        return _getaddrinfo(host, *args, **kwargs)

    def gethostbyname(host):
        if not _is_loopback(host):
            _refuse("lookup", host)
        return _gethostbyname(host)

    socket.socket.connect, socket.socket.connect_ex, socket.socket.sendto = connect, connect_ex, sendto
    socket.getaddrinfo, socket.gethostbyname = getaddrinfo, gethostbyname
