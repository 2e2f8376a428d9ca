"""The Flower runtime starts from any shell, with telemetry and the update check off in every Flower process it starts
(flwr 1.42's SuperLink, SuperNode, SuperExec and CLI each POST to api.flower.ai unless told not to: nothing phones
home).

Oracles: the environment each process really got (``/proc/<pid>/environ``, Linux), and a P3LS fit over Flower
equal to the local transport's, run from a shell whose ``PATH`` lacks the interpreter's ``bin`` directory (a user
who runs ``.venv/bin/streamlit run app.py`` without activating the venv: Flower starts ``flower-superexec`` and
``flwr-clientapp`` by name).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from engine.federation.flower.runtime import flower_env
from engine.methods.p3ls.protocol import P3LS
from tests.flower_helpers import p3ls_data, running_federation

BIN = str(Path(sys.executable).parent)


def test_children_get_the_interpreters_bin_first_and_no_telemetry():
    env = flower_env({"PATH": f"/usr/bin:{BIN}:/bin", "FLWR_TELEMETRY_ENABLED": "1", "FLWR_DISABLE_UPDATE_CHECK": "0"})
    assert env["PATH"].split(":") == [BIN, "/usr/bin", "/bin"]
    assert env["FLWR_TELEMETRY_ENABLED"] == "0"
    assert env["FLWR_DISABLE_UPDATE_CHECK"] == "1"
    assert flower_env({})["PATH"] == BIN


def _environ(pid: int) -> dict:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            todo += [int(c) for c in Path(f"/proc/{p}/task/{p}/children").read_text().split()]
        except OSError:
            pass
    return out


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc (Linux)")
def test_a_fit_runs_from_a_shell_without_the_venv_on_path(monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("FLWR_TELEMETRY_ENABLED", raising=False)
    blocks, Y, new = p3ls_data(widths=(2, 3))
    local = P3LS(2, random_state=3).fit(blocks, Y)
    with running_federation(["ta", "1", "2"]) as fed:
        procs = [q for proc in fed.processes.values() for q in _descendants(proc.pid)]
        names = {Path(_cmd(q)).name for q in procs}
        assert {"flower-superlink", "flower-supernode"} <= {n.split()[0] for n in names if n}
        for q in procs:
            assert _environ(q).get("FLWR_TELEMETRY_ENABLED") == "0", _cmd(q)
            assert _environ(q).get("FLWR_DISABLE_UPDATE_CHECK") == "1", _cmd(q)
        fl = P3LS(2, random_state=3, transport="flower", superlink=fed.address).fit(blocks, Y)
        np.testing.assert_allclose(fl.predict(new), local.predict(new), atol=1e-9, rtol=0)


def _cmd(pid: int) -> str:
    try:
        parts = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return ""
    # "python .../flower-supernode ..." or ".../flower-supernode ...": the first part naming a Flower program
    return next((p.decode() for p in parts if b"flower" in p or b"flwr" in p), parts[0].decode())
