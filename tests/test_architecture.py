"""The shape of the package: no import cycles between modules, no private names imported across modules,
no source module over 600 lines. (`lint-imports` checks the declared layers; these hold within them.)

Imports inside functions count: a lazy import still ties two modules together.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ppdm"
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    out = {}
    for f in SRC.rglob("*.py"):
        rel = f.relative_to(SRC.parent).with_suffix("")
        out[".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)] = f
    return out


def _imports(name: str, f: Path) -> list[tuple[str, list[str], int]]:
    """(module, imported names, line) of every import in a file; relative imports resolved."""
    pkg = name if f.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(f.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.append((mod, [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((a.name, [], node.lineno) for a in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for name, f in mods.items():
        deps: set[str] = set()
        for mod, names, _ in _imports(name, f):
            subs = [f"{mod}.{n}" for n in names if f"{mod}.{n}" in mods]
            deps.update(subs)
            if len(subs) < len(names) or not names:
                deps.add(mod)
        graph[name] = {d for d in deps if d in mods and d != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of two or more modules (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles() -> None:
    assert _cycles(_graph()) == []


def test_no_private_names_across_modules() -> None:
    mods = _modules()
    bad = []
    for name, f in mods.items():
        for mod, names, line in _imports(name, f):
            if not mod.startswith("ppdm") or mod == name:
                continue
            for n in names:
                # a private module (ppdm.attacks._filtering) is a module, not a private name
                if n.startswith("_") and not n.startswith("__") and f"{mod}.{n}" not in mods:
                    bad.append(f"{f.relative_to(SRC.parent)}:{line}: from {mod} import {n}")
    assert bad == []


def test_no_module_over_600_lines() -> None:
    sizes = {str(f.relative_to(SRC.parent)): len(f.read_text().splitlines()) for f in SRC.rglob("*.py")}
    assert {k: v for k, v in sizes.items() if v > MAX_LINES} == {}


def test_every_registered_mechanism_is_importable_from_the_package() -> None:
    import ppdm.mechanisms as mechanisms
    from ppdm import registry

    classes = {n: type(registry.build(n, {}, random_state=0)).__name__ for n in registry.names()}
    assert {n: c for n, c in classes.items() if c not in mechanisms.__all__} == {}
