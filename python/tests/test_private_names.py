"""No module of the package uses another module's private names.

A name that starts with an underscore belongs to its module: another module may not import it
(``from ._impl import _helper``) or reach it through the module (``_impl._helper``). Helpers that
modules share have public names in the module that owns them (the C ABI's plumbing in ``_abi``, the
op library in ``_registry``). Private modules themselves (``from . import _native``) are fine, and so
are dunder names (``__wrapped__``). The package's sources are read with ``ast``; nothing is imported.
"""

from __future__ import annotations

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "tropical_gemm"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_names() -> dict[str, pathlib.Path]:
    """Every module of the package by its dotted name ("tropical_gemm._impl", "tropical_gemm.distributed")."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _dotted(node: ast.AST) -> list[str] | None:
    """["a", "b", "c"] for the expression a.b.c; None for anything else."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    names.append(node.id)
    return names[::-1]


def violations_in(name: str, path: pathlib.Path, modules) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = []
    bound: dict[str, str] = {}  # a local name -> the module of the package it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source not in modules:
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in modules:
                    bound[alias.asname or alias.name] = full
                elif _private(alias.name) and source != name:
                    found.append(f"{name}:{node.lineno}: from {source} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        bound[top] = top
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain = _dotted(node)
        if not chain or chain[0] not in bound:
            continue
        module = bound[chain[0]]
        for depth, attr in enumerate(chain[1:], 2):
            if f"{module}.{attr}" in modules:
                module = f"{module}.{attr}"
                continue
            if _private(attr) and module != name:
                found.append(f"{name}:{node.lineno}: {'.'.join(chain[:depth])}")
            break
    return sorted(set(found))  # a.b._c.d is seen as a.b._c too


def test_no_module_uses_another_modules_private_names():
    modules = _module_names()
    assert "tropical_gemm._abi" in modules and "tropical_gemm.distributed._grid" in modules
    found = sorted({v for name, path in modules.items() for v in violations_in(name, path, modules)})
    assert not found, "private names used across modules (give them public names in their owner):\n" + "\n".join(found)


def test_the_scan_sees_what_it_must(tmp_path):
    # The checker itself: each form of the rule's breach is caught, and the allowed forms are not.
    package = tmp_path / "tropical_gemm"
    (package / "sub").mkdir(parents=True)
    for file in ("__init__.py", "_owner.py", "sub/__init__.py"):
        (package / file).write_text("")
    (package / "_owner.py").write_text("_hidden = 1\nshown = 2\n_mine = _hidden\n")
    (package / "user.py").write_text(
        "from . import _owner\nfrom ._owner import shown, _hidden\nimport tropical_gemm._owner as o\n"
        "x = _owner._hidden + _owner.shown + o._hidden + _owner.__name__.__len__()\n")
    (package / "sub" / "deep.py").write_text("from .._owner import _hidden\nfrom .. import _owner\n")
    modules = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(tmp_path).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    found = {name: violations_in(name, path, modules) for name, path in modules.items()}
    assert found["tropical_gemm._owner"] == []
    assert found["tropical_gemm.user"] == ["tropical_gemm.user:2: from tropical_gemm._owner import _hidden",
                                           "tropical_gemm.user:4: _owner._hidden", "tropical_gemm.user:4: o._hidden"]
    assert found["tropical_gemm.sub.deep"] == ["tropical_gemm.sub.deep:1: from tropical_gemm._owner import _hidden"]
