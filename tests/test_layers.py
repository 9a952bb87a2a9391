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
    "scan",
    "age",
    "transcripts",
    "config",
    "paths",
    "validity",
    "slug",
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
