"""The layering of python/baton, read from its source (an AST walk, nothing imported):
no import cycle among its modules at import time, no module reaching another's
underscore names except the fast lane's private package ``baton._lane``, and
``baton._lane`` importing nothing of the adapters built on it.

Imports inside a function run when it is called, after every module has loaded: they
do not take part in the cycle check (``SingleVector.to_gymnasium`` reaches
``baton.gym`` so), but they do in the check of underscore names. Imports under
``if TYPE_CHECKING:`` never run and are left out of the cycle check too.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "baton"
LANE = "baton._lane"


@dataclass(frozen=True)
class Import:
    importer: str
    target: str  # a module of baton
    name: str | None  # the name taken from target (from ... import name), or None
    eager: bool  # runs when the importer is imported
    line: int


def _modules() -> dict[str, Path]:
    mods = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = ("baton", *path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()


def _is_package(mod: str) -> bool:
    return MODULES[mod].name == "__init__.py"


def _within(mod: str, pkg: str) -> bool:
    return mod == pkg or mod.startswith(pkg + ".")


def _owner(mod: str) -> str:
    """The baton module that holds dotted name mod (itself, or its longest prefix)."""
    while mod not in MODULES:
        mod = mod.rpartition(".")[0]
    return mod


class _Walker(ast.NodeVisitor):
    def __init__(self, mod: str):
        self.mod = mod
        self.package = mod if _is_package(mod) else mod.rpartition(".")[0]
        self.depth = 0  # functions we are inside
        self.type_checking = 0
        self.imports: list[Import] = []
        self.aliases: dict[str, str] = {}  # a local name bound to a baton module
        self.attrs: list[tuple[str, str, int]] = []  # (module, attribute, line)

    def _add(self, target: str, name: str | None, line: int) -> None:
        eager = self.depth == 0 and self.type_checking == 0
        self.imports.append(Import(self.mod, target, name, eager, line))

    def visit_FunctionDef(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_If(self, node):
        test = node.test
        guarded = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
        self.type_checking += guarded
        for n in node.body:
            self.visit(n)
        self.type_checking -= guarded
        for n in node.orelse:
            self.visit(n)

    def visit_Import(self, node):
        for a in node.names:
            if not _within(a.name, "baton"):
                continue
            target = _owner(a.name)
            self._add(target, None, node.lineno)
            if a.asname:
                self.aliases[a.asname] = target

    def visit_ImportFrom(self, node):
        if node.level:
            base = self.package.split(".")
            base = base[: len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        if not _within(source, "baton"):
            return
        for a in node.names:
            sub = f"{source}.{a.name}"
            if sub in MODULES:  # from package import module
                self._add(sub, None, node.lineno)
                self.aliases[a.asname or a.name] = sub
            else:
                self._add(_owner(source), a.name, node.lineno)

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id in self.aliases:
            self.attrs.append((self.aliases[node.value.id], node.attr, node.lineno))
        self.generic_visit(node)


def _walk() -> tuple[list[Import], list[tuple[str, str, str, int]]]:
    imports, attrs = [], []
    for mod, path in MODULES.items():
        w = _Walker(mod)
        w.visit(ast.parse(path.read_text(), str(path)))
        imports += w.imports
        attrs += [(mod, *a) for a in w.attrs]
    return imports, attrs


IMPORTS, ATTRS = _walk()


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_path_ok(importer: str, target: str) -> bool:
    """A private module (a component _x of its dotted name) is the business of its
    package: only modules within that package import it."""
    parts = target.split(".")
    for i, p in enumerate(parts):
        if _private(p) and not _within(importer, ".".join(parts[:i])):
            return False
    return True


def _private_name_ok(importer: str, target: str, name: str) -> bool:
    """A private name of a module is its own; of a package, its modules'; of the fast
    lane's private package, every baton module's."""
    if not _private(name) or _within(target, LANE):
        return True
    return importer == target or (_is_package(target) and _within(importer, target))


def _graph() -> dict[str, set[str]]:
    """What each module imports when it is imported: the target, and every package
    above the target that is not above the importer (Python runs those first)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for imp in IMPORTS:
        if not imp.eager:
            continue
        parts = imp.target.split(".")
        for i in range(1, len(parts) + 1):
            t = ".".join(parts[:i])
            if t in MODULES and t != imp.importer and not _within(imp.importer, t):
                graph[imp.importer].add(t)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
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
            if len(comp) > 1 or v in graph[v]:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_walk_sees_the_package():
    # The walk resolves relative and in-function imports: a check of the checker.
    assert {"baton.vector", "baton.gym", "baton._lane.core", "baton._lane.abi"} <= set(MODULES)
    eager = {(i.importer, i.target) for i in IMPORTS if i.eager}
    lazy = {(i.importer, i.target) for i in IMPORTS if not i.eager}
    assert ("baton.vector", "baton._lane.core") in eager
    assert ("baton.gym", "baton.vector") in eager
    assert ("baton.vector", "baton.gym") in lazy  # SingleVector.to_gymnasium


def test_no_import_cycle():
    cycles = _cycles(_graph())
    assert not cycles, "modules that import each other when imported: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# Private names that baton.remote shares among its modules and with baton.spaces,
# from before this check: (importer, module, name). No new entry belongs here; an
# entry goes when its name becomes public or moves to a private module of its own.
KNOWN = {
    ("baton.remote.channel", "baton.remote.keys", "_check_key"),
    ("baton.remote.env", "baton.spaces", "_gymnasium_spaces"),
    ("baton.remote.specs", "baton.spaces", "_gymnasium_spaces"),
    ("baton.remote.specs", "baton.spaces", "_as_plain"),
}


def _private_uses() -> list[tuple[str, str, str, str]]:
    """(importer, module, name or "", where) of every private module or name a
    module reaches against the rules, by import or by attribute of a module."""
    bad = []
    for imp in IMPORTS:
        where = f"{MODULES[imp.importer].relative_to(ROOT.parent)}:{imp.line}"
        if not _private_path_ok(imp.importer, imp.target):
            bad.append((imp.importer, imp.target, "", where))
        if imp.name and not _private_name_ok(imp.importer, imp.target, imp.name):
            bad.append((imp.importer, imp.target, imp.name, where))
    for importer, target, attr, line in ATTRS:
        where = f"{MODULES[importer].relative_to(ROOT.parent)}:{line}"
        sub = f"{target}.{attr}"
        if sub in MODULES:
            if not _private_path_ok(importer, sub):
                bad.append((importer, sub, "", where))
        elif not _private_name_ok(importer, target, attr):
            bad.append((importer, target, attr, where))
    return bad


def test_no_private_names_across_modules():
    bad = [f"{where}: {i} reaches {t}'s private {n}" if n else f"{where}: {i} reaches private module {t}"
           for i, t, n, where in _private_uses() if (i, t, n) not in KNOWN]
    assert not bad, "\n".join(bad)


def test_known_private_uses_are_current():
    assert KNOWN <= {(i, t, n) for i, t, n, _ in _private_uses()}, "drop the entries of KNOWN that no longer occur"


def test_private_check_finds_the_old_reach():
    # What the fast lane's adapters once did, as the rules see it.
    assert not _private_name_ok("baton._view", "baton.vector", "_call")
    assert not _private_name_ok("baton.pettingzoo", "baton.gym", "_obs_space")
    assert not _private_path_ok("baton.bench", "baton.vector._native")
    assert _private_name_ok("baton.vector._async", "baton.vector", "_ERRLEN")
    assert _private_name_ok("baton.gym", "baton._lane.adapters", "_obs_space")
    assert _private_path_ok("baton.gym", "baton._view")


def test_lane_imports_nothing_above_it():
    # baton._lane is the bottom layer: it may use baton.spaces (which imports nothing
    # of baton) and itself, not the adapters built on it, even in a function.
    allowed = (LANE, "baton.spaces")
    bad = [f"{i.importer}:{i.line} imports {i.target}" for i in IMPORTS
           if _within(i.importer, LANE) and not any(_within(i.target, a) for a in allowed)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("first", ["baton._lane.core", "baton._lane.native", "baton.vector", "baton.gym",
                                   "baton.pettingzoo"])
def test_imports_in_any_order(first):
    # Each layer imports on its own in a fresh interpreter, and the old private paths
    # of the loader and the ABI are the same modules.
    code = (f"import {first}; import baton.vector, baton.gym, baton.vector._native as n, baton.vector._abi as a; "
            "import baton._lane.native as ln, baton._lane.abi as la; assert n is ln and a is la; "
            "assert baton.vector.ConfigError.__module__ == 'baton.vector'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
