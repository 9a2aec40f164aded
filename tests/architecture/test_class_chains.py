"""Compose, don't chain: no class under functions/agentkb has a chain of project base classes deeper than 2.

A big store is a small front holding its parts as attributes (docs: STYLE.md, issue 24), not a tower of base classes
split to meet the line limit. Read from the source (AST), so nothing is imported: a base is followed through the
module's own classes and its `from agentkb... import` / `import agentkb...` names; anything else (Protocol,
pydantic's BaseModel, Exception, ...) is not a project class and ends the chain.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "functions"
MAX_DEPTH = 2  # errors.py reaches it: WriteInProgress -> Conflict -> DomainError (Exception is not a project class)
ClassKey = tuple[str, str]  # (module, class name)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, ast.Module]:
    return {_module_name(p): ast.parse(p.read_text(), str(p)) for p in sorted((ROOT / "agentkb").rglob("*.py"))}


@cache
def _names(module: str) -> dict[str, tuple[str, str | None]]:
    """What a module's top-level names stand for: (module, class name) for a class or a `from` import, (module,
    None) for an imported module."""
    out: dict[str, tuple[str, str | None]] = {}
    for node in _modules()[module].body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = (module, node.name)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                target = f"{node.module}.{alias.name}"
                out[alias.asname or alias.name] = (target, None) if target in _modules() else (node.module, alias.name)
        elif isinstance(node, ast.Import):
            out.update({alias.asname: (alias.name, None) for alias in node.names if alias.asname})
    return out


def _resolve(module: str, name: str, seen: frozenset[ClassKey] = frozenset()) -> ClassKey | None:
    """The project class a name of `module` stands for (following re-exports), None when it is not one."""
    if module not in _modules() or (module, name) in seen:
        return None
    target = _names(module).get(name)
    if target is None or target[1] is None:
        return None
    if target == (module, name):
        return target
    return _resolve(target[0], target[1], seen | {(module, name)})


def _base_keys(module: str, node: ast.ClassDef) -> list[ClassKey]:
    keys: list[ClassKey] = []
    for base in node.bases:
        expr = base.value if isinstance(base, ast.Subscript) else base  # Protocol[T], Generic[T]
        found: ClassKey | None = None
        if isinstance(expr, ast.Name):
            found = _resolve(module, expr.id)
        elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            owner = _names(module).get(expr.value.id)
            if owner is not None and owner[1] is None:
                found = _resolve(owner[0], expr.attr)
        if found is not None:
            keys.append(found)
    return keys


@cache
def _classes() -> dict[ClassKey, list[ClassKey]]:
    return {(module, node.name): _base_keys(module, node)
            for module, tree in _modules().items() for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}


def chain(key: ClassKey, seen: frozenset[ClassKey] = frozenset()) -> list[ClassKey]:
    """The longest chain of project base classes above a class, nearest first."""
    longest: list[ClassKey] = []
    for base in _classes().get(key, []):
        if base not in seen:
            above = [base, *chain(base, seen | {key})]
            longest = max(longest, above, key=len)
    return longest


def test_no_class_chains_more_than_two_project_bases() -> None:
    too_deep = {f"{m}.{c}": " -> ".join(b for _, b in chain((m, c))) for m, c in _classes()
                if len(chain((m, c))) > MAX_DEPTH}
    assert not too_deep, f"compose instead of chaining (at most {MAX_DEPTH} project bases): {too_deep}"


def test_the_walk_sees_project_bases() -> None:
    # Given errors.py's hierarchy, the walk must find its chains: a walk that saw no base would pass vacuously
    depths = {c: len(chain((m, c))) for m, c in _classes() if m == "agentkb.errors"}
    assert max(depths.values()) == MAX_DEPTH
