"""The Python of the documentation (README.md and the pages under docs/) cannot go stale:
every ```python block compiles; every name it takes from baton (``import baton.x``,
``from baton.x import Y``, ``baton.x.y``) exists; every call of a baton function or
class binds to its signature (a renamed or removed keyword fails); and the Connect
``Watch`` recipe of docs/tutorials/serving.md runs against a real ``baton serve
trials``. The Go side checks the command samples and the curl session
(``go test ./cli -run Docs``)."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pathlib
import urllib.request

import pytest

from test_remote_go import baton_bin, serve  # noqa: F401  (fixtures)

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The pages written by a generator are checked by it.
GENERATED = ROOT / "docs" / "reference" / "cli"


def doc_files() -> list[pathlib.Path]:
    files = [ROOT / "README.md"]
    files += sorted(p for p in (ROOT / "docs").rglob("*.md") if GENERATED not in p.parents)
    return files


def python_blocks(path: pathlib.Path) -> list[tuple[int, str]]:
    """The ```python blocks of a Markdown file: (line of the fence, the code)."""
    blocks, lines = [], path.read_text().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            assert j < len(lines), f"{path}:{i + 1}: the block is not closed"
            blocks.append((i + 1, "\n".join(lines[i + 1:j])))
            i = j
        i += 1
    return blocks


BLOCKS = [
    pytest.param(path, line, code, id=f"{path.relative_to(ROOT)}:{line}")
    for path in doc_files()
    for line, code in python_blocks(path)
]


def test_the_documentation_shows_python():
    assert len(BLOCKS) >= 10


def _source(code: str) -> str:
    # "..." alone on a line stands for code left out; it is an Ellipsis, valid Python.
    return code


class _Names(ast.NodeVisitor):
    """What a block takes from baton: modules imported, names imported from them,
    attribute chains rooted at a module, and the calls of those chains."""

    def __init__(self):
        self.modules: dict[str, str] = {}  # local name -> module
        self.imported: list[tuple[str, str, int]] = []  # (module, name, line)
        self.chains: list[tuple[str, int]] = []  # ("baton.vector.make", line)
        self.calls: list[tuple[str, ast.Call]] = []

    def visit_Import(self, node):
        for a in node.names:
            if a.name.split(".")[0] == "baton":
                if a.asname:
                    self.modules[a.asname] = a.name
                else:
                    self.modules["baton"] = "baton"
                self.imported.append((a.name, "", node.lineno))

    def visit_ImportFrom(self, node):
        if node.module and node.module.split(".")[0] == "baton":
            for a in node.names:
                self.imported.append((node.module, a.name, node.lineno))
                self.modules[a.asname or a.name] = f"{node.module}.{a.name}"

    def _chain(self, node) -> str | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.modules:
            return ".".join([self.modules[node.id], *reversed(parts)])
        return None

    def visit_Attribute(self, node):
        c = self._chain(node)
        if c is not None:
            self.chains.append((c, node.lineno))
            return  # the longest chain only
        self.generic_visit(node)

    def visit_Call(self, node):
        c = self._chain(node.func)
        if c is not None:
            self.calls.append((c, node))
        self.generic_visit(node)


def _resolve(dotted: str):
    """The object a dotted name of baton names, importing modules on the way."""
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    name = parts[0]
    for p in parts[1:]:
        name += "." + p
        if hasattr(obj, p):
            obj = getattr(obj, p)
            continue
        obj = importlib.import_module(name)  # a submodule not imported by its parent
    return obj


@pytest.mark.parametrize("path,line,code", BLOCKS)
def test_block_uses_baton_as_it_is(path, line, code):
    where = f"{path.relative_to(ROOT)}:{line}"
    try:
        tree = ast.parse(_source(code))
    except SyntaxError as e:
        pytest.fail(f"{where}: the block does not compile: {e}")
    names = _Names()
    names.visit(tree)
    for module, name, at in names.imported:
        try:
            mod = importlib.import_module(module)
        except ImportError as e:
            pytest.fail(f"{where}+{at}: import {module}: {e}")
        if name:
            assert hasattr(mod, name) or importlib.util.find_spec(f"{module}.{name}"), \
                f"{where}+{at}: {module} has no {name}"
    for chain, at in names.chains:
        try:
            _resolve(chain)
        except (AttributeError, ImportError) as e:
            pytest.fail(f"{where}+{at}: {chain}: {e}")
    for chain, call in names.calls:
        fn = _resolve(chain)
        if not callable(fn) or inspect.ismodule(fn):
            continue
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            continue
        args = [None] * len(call.args)
        kwargs = {k.arg: None for k in call.keywords if k.arg is not None}
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            continue
        try:
            sig.bind(*args, **kwargs)
        except TypeError as e:
            pytest.fail(f"{where}+{call.lineno}: {chain}{sig}: {e}")


def _watch_recipe():
    """The watch function of docs/tutorials/serving.md's Connect recipe."""
    path = ROOT / "docs" / "tutorials" / "serving.md"
    for _, code in python_blocks(path):
        if "def watch(" in code:
            # The recipe's definitions, without its example loop at the end.
            defs = code[:code.index("\nfor change in watch(")]
            ns: dict = {}
            exec(compile(defs, str(path), "exec"), ns)
            return ns["watch"], code
    pytest.fail(f"{path} has no Connect Watch recipe (def watch)")


def test_the_connect_watch_recipe_runs(serve):  # noqa: F811
    watch, code = _watch_recipe()
    addr = serve("trials", "--addr", "127.0.0.1:0").addr
    base = f"http://{addr}"
    start = json.dumps({"spec": {"id": "m", "env": "maze", "seed": "1", "episodes": "3"}}).encode()
    req = urllib.request.Request(f"{base}/baton.v1.TrialService/Start", data=start,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as resp:
        assert json.loads(resp.read()) == {"ids": ["m"]}
    changes = list(watch(base, ["m"]))
    assert changes, "Watch sent no state change"
    assert {c["trial"] for c in changes} == {"m"}
    assert changes[-1]["state"] == "TRIAL_STATE_ENDED"
    assert len(changes[-1]["result"]["episodes"]) == 3
    # The recipe's example loop reads the same fields.
    assert 'change["trial"], change["state"]' in code
