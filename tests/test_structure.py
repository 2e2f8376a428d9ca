"""The layout's rules (issue 29), read off the ``import`` statements of engine/, ui/, pages/ and app.py with ``ast``.

- engine/ is the library: it never imports ui, pages or streamlit (at module level or inside a function);
- no import circle among the project's modules, counting module-level AND function-level imports (a deferred
  import inside a function still ties the two modules together); imports under ``if TYPE_CHECKING:`` are left out
  (they never run);
- no import that runs up a floor: a module never imports from its own package's ``__init__`` (or an ancestor's)
  when that ``__init__`` imports the module back;
- no alias shim (``sys.modules[__name__] = ...``) anywhere in the repository.

Oracle: the statements themselves (the standard library's parser), not an import at run time, so a circle that
Python happens to tolerate today (a function-level import, a late ``from``) is still found. The tests are checked
against planted faults (``test_the_walk_finds_planted_faults``), so they can fail.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "ui", "pages")


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def project_files(root: Path = ROOT) -> dict[str, Path]:
    """Module name -> file, for engine/, ui/, pages/ and app.py."""
    files = {"app": root / "app.py"} if (root / "app.py").exists() else {}
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            if "flower_app" not in path.parts:  # the Flower app folder is run by flwr, not imported
                files[_module_name(path, root)] = path
    return files


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def imports_of(name: str, path: Path, modules: set[str]) -> list[tuple[str, int, bool]]:
    """(imported module, line, at module level) for every import statement of one file.

    ``from A import b`` counts as an import of ``A.b`` when that is a module of the project, else of ``A``;
    relative imports are resolved against the file's package.
    """
    tree = ast.parse(path.read_text(), filename=str(path))
    skip = _type_checking_lines(tree)
    is_pkg = path.name == "__init__.py"
    top = {id(n) for n in tree.body} | {id(s) for n in tree.body if isinstance(n, (ast.If, ast.Try))
                                        for s in ast.walk(n)}
    out = []
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        module_level = id(node) in top
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno, module_level) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                sub = f"{mod}.{a.name}"
                out.append((sub if sub in modules else mod, node.lineno, module_level))
    return out


def import_graph(root: Path = ROOT, *, function_level: bool = True) -> dict[str, dict[str, int]]:
    """Module -> {imported project module: line} (module-level imports, and function-level ones if asked)."""
    files = project_files(root)
    modules = set(files)
    graph = {}
    for name, path in files.items():
        edges = {}
        for target, line, module_level in imports_of(name, path, modules):
            if target in modules and target != name and (module_level or function_level):
                edges.setdefault(target, line)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _reaches(graph, start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        v = todo.pop()
        if v == goal:
            return True
        if v not in seen:
            seen.add(v)
            todo.extend(graph.get(v, ()))
    return False


def floor_climbs(graph: dict[str, dict[str, int]]) -> list[str]:
    """Imports of an ancestor package's ``__init__`` by a module that the ``__init__`` imports back."""
    out = []
    for mod, edges in graph.items():
        for target, line in edges.items():
            if mod.startswith(target + ".") and _reaches(graph, target, mod):
                out.append(f"{mod}:{line} imports its package {target}, which imports it back")
    return out


def engine_imports_of_the_app(root: Path = ROOT) -> list[str]:
    files = project_files(root)
    bad = []
    for name, path in files.items():
        if name.split(".")[0] != "engine":
            continue
        for target, line, _ in imports_of(name, path, set(files)):
            if target.split(".")[0] in ("ui", "pages", "streamlit"):
                bad.append(f"{path.relative_to(root)}:{line} imports {target}")
    return bad


def alias_shims(root: Path = ROOT) -> list[str]:
    bad = []
    for path in sorted(root.rglob("*.py")):
        if any(p.startswith(".") or p in ("node_modules", "__pycache__") for p in path.relative_to(root).parts):
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Subscript) and ast.unparse(t) == "sys.modules[__name__]" for t in node.targets):
                bad.append(f"{path.relative_to(root)}:{node.lineno}")
    return bad


def test_engine_never_imports_ui_pages_or_streamlit():
    assert engine_imports_of_the_app() == []


def test_no_import_circle_module_or_function_level():
    assert cycles(import_graph()) == []


def test_no_import_runs_up_a_floor():
    assert floor_climbs(import_graph()) == []


def test_no_alias_shim_anywhere():
    assert alias_shims() == []


def test_pages_stay_short_entry_points_and_the_app_side_holds_the_runner():
    files = project_files()
    assert "ui.runtime.jobs" in files and not any(m.startswith("engine.") and m.endswith("jobs") for m in files)
    # the modules the app side took over, and the engine root modules that went into packages
    for old in ("demo", "jobs", "page_jobs", "var_admm_jobs", "release", "report", "cli", "batch", "export"):
        assert not (ROOT / "engine" / f"{old}.py").exists(), old


PAGE_MAX_LINES = 40


def long_pages(root: Path = ROOT, max_lines: int = PAGE_MAX_LINES) -> list[str]:
    """pages/*.py longer than an entry point (title, documentation link, a call into its ui/<page>/ folder)."""
    return [f"pages/{path.name}: {n} lines" for path in sorted((root / "pages").glob("*.py"))
            if (n := len(path.read_text().splitlines())) > max_lines]


def test_every_page_is_a_short_entry_point():
    assert long_pages() == []


@pytest.fixture
def planted(tmp_path):
    """A tiny tree with one of each fault."""
    def write(rel, text):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    write("app.py", "")
    write("engine/__init__.py", "")
    write("engine/a.py", "import streamlit as st\n\ndef f():\n    from engine import b\n")
    write("engine/b.py", "from engine.a import f\n")
    write("engine/p/__init__.py", "from engine.p.m import X\n")
    write("engine/p/m.py", "from engine.p import Y\nX = 1\n")
    write("engine/s.py", "import sys\nsys.modules[__name__] = sys\n")
    write("ui/__init__.py", "")
    write("ui/v.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ui import w\n")
    write("ui/w.py", "from ui import v\n")
    write("pages/x.py", "from ui.v import *\n" + "main()\n" * 40)
    return tmp_path


def test_the_walk_finds_planted_faults(planted):
    assert engine_imports_of_the_app(planted) == ["engine/a.py:1 imports streamlit"]
    graph = import_graph(planted)
    assert cycles(graph) == [["engine.a", "engine.b"], ["engine.p", "engine.p.m"]]
    assert cycles(import_graph(planted, function_level=False)) == [["engine.p", "engine.p.m"]]
    assert floor_climbs(graph) == ["engine.p.m:1 imports its package engine.p, which imports it back"]
    assert alias_shims(planted) == ["engine/s.py:2"]
    assert graph["ui.v"] == {}  # TYPE_CHECKING imports never run
    assert long_pages(planted) == ["pages/x.py: 41 lines"]
