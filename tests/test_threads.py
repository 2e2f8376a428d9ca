"""engine.threads: the server's one-thread BLAS policy (run in a subprocess: it is process-wide)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import numpy, scipy.linalg
from threadpoolctl import threadpool_info, threadpool_limits
from engine.threads import one_blas_thread, serve_with_one_blas_thread
threadpool_limits(limits=2)  # as on a 2-core machine, whatever this one has
before = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
serve_with_one_blas_thread()
serve_with_one_blas_thread()  # idempotent
with one_blas_thread():
    pass
after = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
print(before, after)
"""


def test_the_server_policy_leaves_one_blas_thread_for_good():
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    before, after = _parse(out.stdout)
    assert before and all(n == 2 for n in before)
    assert after and all(n == 1 for n in after)  # one_blas_thread's exit restores the server's limit, not 2


def _parse(text: str):
    import ast

    left, right = text.strip().split("] [")
    return ast.literal_eval(left + "]"), ast.literal_eval("[" + right)
