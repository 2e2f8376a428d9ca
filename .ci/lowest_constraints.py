"""Print a pip constraints file pinning every direct requirement to its lower bound.

Reads ``pyproject.toml`` (the one list of versions): ``[project] dependencies`` and the optional-dependency
groups named on the command line. ``name>=X`` (with or without an upper bound) becomes ``name==X``; a
requirement without a lower bound is left free. pip cannot choose the lowest versions of transitive
dependencies, so only the direct ones are pinned.
Usage: ``python .ci/lowest_constraints.py pyproject.toml app dask federation > lowest.txt``.
"""
from __future__ import annotations

import re
import sys
import tomllib

_LINE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(.*)$")


def lowest(lines: list[str]) -> list[str]:
    """``name==lower`` for every requirement with a ``>=`` bound, in order."""
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


def requirements(pyproject: str, groups: list[str]) -> list[str]:
    """The base dependencies of ``pyproject`` and those of the named optional groups."""
    with open(pyproject, "rb") as fh:
        project = tomllib.load(fh)["project"]
    reqs = list(project.get("dependencies", []))
    for g in groups:
        reqs += project["optional-dependencies"][g]
    return reqs


if __name__ == "__main__":
    print("\n".join(lowest(requirements(sys.argv[1], sys.argv[2:]))))
