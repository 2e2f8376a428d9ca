"""`.ci/run`'s exit trap, run as the script runs it (bash, ``set -euo pipefail``).

The trap once read ``[ -n "$OLDEST_PID" ] && kill "$OLDEST_PID"``: when the background install had already
finished, ``kill`` failed as the last command of an ``&&`` list, ``set -e`` ended the trap with status 1, and a CI
run whose every step passed was reported failed (exit 1 after 1,124 s)."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

CI_RUN = Path(__file__).resolve().parents[1] / ".ci" / "run"


def _trap_line() -> str:
    lines = [line for line in CI_RUN.read_text().splitlines() if re.match(r"\s*trap\s+'", line)]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is needed to run .ci/run")
@pytest.mark.parametrize("install", ["finished", "running", "never started"])
def test_exit_trap_keeps_a_passing_run_passing_and_cleans_up(tmp_path, install):
    work = tmp_path / "ci-tmp"
    work.mkdir()
    start = {
        "finished": 'sleep 0 & OLDEST_PID=$!; wait "$OLDEST_PID"',
        # The install is still running when the trap fires, and has started. With a bare `sleep 30 &`, a SIGTERM
        # that reached bash's child between its fork and its exec was sometimes lost, and the sleep held the output
        # pipe for 30 s: the test timed out after every-step-passed (a full local run; 1 in 300 runs of the script
        # with both cores busy). `sh` touches the marker once it runs, then becomes the sleep: 0 in 600.
        "running": 'sh -c \'touch "$0/started"; exec sleep 30\' "$TMP" & OLDEST_PID=$!; '
                   'until [ -e "$TMP/started" ]; do sleep 0.01; done',
        "never started": "",
    }[install]
    script = "\n".join([
        "set -euo pipefail",
        f'TMP="{work}"',
        'OLDEST_PID=""',
        _trap_line(),
        start,
        "echo every-step-passed",
    ])
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    assert "every-step-passed" in done.stdout
    assert not work.exists()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is needed to run .ci/run")
def test_exit_trap_keeps_a_failing_run_failing(tmp_path):
    script = "\n".join(["set -euo pipefail", f'TMP="{tmp_path / "x"}"', 'OLDEST_PID=""', _trap_line(), "false"])
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=20)
    assert done.returncode == 1
