"""Package exports imported on first use (PEP 562), read off the package's own ``if TYPE_CHECKING:`` imports.

A package whose ``__init__`` re-exports every public name imports every module to start: a Flower party process
that needs one module (the ADMM's owner step, P3LS's roles) paid for scikit-learn, scipy.stats, pandas and the
data readers too (about 2.5 s CPU per process, several processes per fit). Such a package writes its imports under
``if TYPE_CHECKING:`` (type checkers and the docs' static readers see them as before), keeps its literal
``__all__``, and ends with ``__getattr__, __dir__ = lazy_exports(__name__, __file__)``; a name is imported when
first used and kept in the package's namespace. One source of truth: the import statements.

Written by hand: the standard library has the hook (module ``__getattr__``) but no reader of the names it serves.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
import types
from pathlib import Path

__all__ = ["lazy_exports"]


def _type_checking_imports(path: str, package: str) -> dict[str, tuple[str, str]]:
    """name -> (absolute module, attribute) of every ``from X import a as b`` under ``if TYPE_CHECKING:``."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)
    out = {}
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    module = importlib.util.resolve_name("." * stmt.level + (stmt.module or ""), package)
                    out.update({(a.asname or a.name): (module, a.name) for a in stmt.names})
    return out


def lazy_exports(package: str, path: str):
    """``(__getattr__, __dir__)`` for the package ``package`` whose ``__init__`` is ``path``."""
    homes = _type_checking_imports(path, package)

    def __getattr__(name: str):
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home[0]), home[1])
        setattr(sys.modules[package], name, value)  # a submodule of the same name, set by its import, loses
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *homes})

    class _Package(types.ModuleType):
        def __setattr__(self, name: str, value) -> None:
            # importing a submodule binds it on its package; where an exported name is also a submodule's name
            # (P3LS's ``compare`` function in module ``compare``) the export keeps it, as an eager ``from .compare
            # import compare`` in the package did
            if name in homes and isinstance(value, types.ModuleType) and value.__name__ == f"{package}.{name}":
                return
            super().__setattr__(name, value)

    sys.modules[package].__class__ = _Package
    return __getattr__, __dir__
