"""Print a pip constraints file pinning every direct requirement of requirements.txt to its lower bound.

``name>=X`` (with or without an upper bound) becomes ``name==X``; a requirement without a lower bound is left
free. pip cannot choose the lowest versions of transitive dependencies, so only the direct ones are pinned.
Usage: ``python .ci/lowest_constraints.py requirements.txt > lowest.txt``.
"""
from __future__ import annotations

import re
import sys

_LINE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(.*)$")


def lowest(lines: list[str]) -> list[str]:
    """``name==lower`` for every requirement line with a ``>=`` bound, in file order."""
    out = []
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        m = _LINE.match(line)
        if m is None:
            continue
        name, spec = m.group(1), m.group(3)
        low = re.search(r">=\s*([^,;\s]+)", spec)
        if low:
            out.append(f"{name}=={low.group(1)}")
    return out


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as fh:
        print("\n".join(lowest(fh.read().splitlines())))
