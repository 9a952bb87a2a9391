"""Imports only point down: core < services < adapters/cli (architecture decision)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "memdir"
CORE = {
    "errors",
    "atomic",
    "pathsafe",
    "model",
    "frontmatter",
    "store",
    "controlfiles",
    "recovery",
    "repair",
    "index",
    "index_sections",
    "scan",
    "age",
    "transcripts",
    "config",
    "paths",
    "validity",
    "slug",
    "native",
    "sameness",
    "daily_log",
    "script",
    "yaml_block",
}
ADAPTERS = {"adapters", "cli", "ui", "__main__"}


def top_level(module_path: Path) -> str:
    rel = module_path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def memdir_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "memdir":
                found.update(alias.name for alias in node.names)
            elif node.module.startswith("memdir."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("memdir."):
                    found.add(alias.name.split(".")[1])
    return found


MODULES = sorted(p for p in SRC.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_point_down(path: Path) -> None:
    layer = top_level(path)
    imported = memdir_imports(path)
    if layer in CORE:
        assert imported <= CORE, f"core module imports {sorted(imported - CORE)}"
    elif layer not in ADAPTERS and layer != "__init__":
        assert not (imported & ADAPTERS), f"service imports adapters {sorted(imported & ADAPTERS)}"


def test_nobody_imports_adapters() -> None:
    for path in MODULES:
        if top_level(path) in ADAPTERS:
            continue
        assert not (memdir_imports(path) & {"adapters", "cli", "ui"}), path


def test_core_modules_do_not_import_each_other_in_a_circle() -> None:
    """Even type-only imports count: a circle makes import order matter (config <-> paths)."""
    graph = {
        name: memdir_imports(SRC / f"{name}.py") & CORE
        for name in CORE
        if (SRC / f"{name}.py").is_file()
    }

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, set()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    circular = sorted(name for name in graph if reaches(name, name, {name}))
    assert circular == []


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


KNOWN = {module_name(p) for p in MODULES}


def module_imports(path: Path) -> set[str]:
    """memdir modules ``path`` imports anywhere (lazy and type-only imports count too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:  # `from pkg import module` names a module
                if f"{node.module}.{alias.name}" in KNOWN:
                    found.add(f"{node.module}.{alias.name}")
                elif node.module in KNOWN:
                    found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in KNOWN)
    return found - {"memdir"}


def circles(package: str) -> list[str]:
    """Modules of ``package`` that reach themselves through imports among its modules."""
    inside = {module_name(p): p for p in MODULES if module_name(p).startswith(package)}
    graph = {name: module_imports(path) & set(inside) for name, path in inside.items()}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, set()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    return sorted(name for name in graph if reaches(name, name, {name}))


@pytest.mark.parametrize("package", ["memdir.adapters", "memdir.recall"])
def test_no_import_circles(package: str) -> None:
    """The recall daemon is a transport above the hooks: hooks reach it over its socket only."""
    assert circles(package) == []
