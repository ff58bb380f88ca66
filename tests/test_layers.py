"""How the layers meet: imports run one way and never in a circle, and only the kernel modules see the state layout.

Imports run one way: tiengow_env < tiengow.agents < tiengow.training < the CLI, UI, web and benchmarks.
Every module of ``tiengow_env/``, ``agents/`` and ``training/`` is parsed, and every import in it
(at the top, inside a function, ``importlib.import_module("...")`` with a constant name) is
mapped to its layer; an import of a higher layer fails, naming the file and the line. Two
subprocess checks cover what parsing cannot: ``import tiengow_env`` loads no torch, and a
shipped bot plays without loading the trainers.

No cycles: the same parse over every module of the installed packages (the top layer too)
gives the import graph, module to module (imports under ``if TYPE_CHECKING:`` are not run, so
they are left out); a strongly connected set of two or more modules fails, named as a cycle.

The state layout: ``layout.S_*`` offsets appear only in the kernel modules that
``tiengow_env/state.py`` names; every other module reads a state through ``StateView`` (or,
compiled, ``_state_kernels``).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# On-disk folder -> import name (pyproject's [tool.setuptools.package-dir]).
PACKAGES = {"tiengow_env": "tiengow_env", "agents": "tiengow.agents", "training": "tiengow.training"}
# Import-name prefixes, lowest layer first; anything else of the project is the top layer.
LAYERS = ["tiengow_env", "tiengow.agents", "tiengow.training"]
TOP = ("tiengow", "tiengow.cli", "tiengow.ui", "tiengow.web", "tiengow.benchmarks")
# Modules known to import upward, each with the reason (strict xfail: the marker goes once fixed).
PENDING: dict[str, str] = {}


def layer_of(module: str) -> int | None:
    """0, 1, 2 for the three lower layers, 3 for the top layer, None for other packages."""
    for rank, prefix in enumerate(LAYERS):
        if module == prefix or module.startswith(prefix + "."):
            return rank
    if module == "tiengow" or module.startswith("tiengow."):
        return len(LAYERS)
    return None


def module_name(path: Path) -> str:
    relative = path.relative_to(ROOT)
    parts = [PACKAGES[relative.parts[0]], *relative.with_suffix("").parts[1:]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every import in the file, relative ones resolved."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # base.name: `from tiengow import training` imports tiengow.training
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))
            )
        ):
            target = node.args[0].value
            if target.startswith("."):
                target = package + target
            found.append((node.lineno, target))
    return found


FILES = sorted(p for folder in PACKAGES for p in (ROOT / folder).rglob("*.py"))


def test_every_module_of_the_three_layers_is_checked():
    assert len(FILES) >= 35
    assert {module_name(p) for p in FILES} >= {
        "tiengow_env.game",
        "tiengow.agents.cfr",
        "tiengow.training.ppo",
        "tiengow.agents",
        "tiengow.training.cfr_tabular",
    }


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(
            p,
            id=str(p.relative_to(ROOT)),
            marks=[pytest.mark.xfail(strict=True, reason=PENDING[str(p.relative_to(ROOT))])]
            if str(p.relative_to(ROOT)) in PENDING
            else [],
        )
        for p in FILES
    ],
)
def test_no_upward_import(path):
    own = layer_of(module_name(path))
    upward = [
        f"{path.relative_to(ROOT)}:{line}: {module_name(path)} imports {target}"
        for line, target in imports(path)
        if (layer_of(target) or 0) > own
    ]
    assert not upward, "imports of a higher layer:\n" + "\n".join(upward)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from tiengow.training.cfr import load_policy", ["tiengow.training.cfr.load_policy"]),
        ("def f():\n    from tiengow.training import ppo", ["tiengow.training.ppo"]),
        ("import tiengow.cli", ["tiengow.cli"]),
        ("from ..training import cfr", ["tiengow.training.cfr"]),
        ("from . import base", ["tiengow.agents.base"]),
        ("import importlib\nimportlib.import_module('tiengow.benchmarks.bench')", ["tiengow.benchmarks.bench"]),
    ],
)
def test_the_check_sees_every_form_of_import(tmp_path, monkeypatch, source, expected):
    # A module of agents/ written in each form: the parser must report the imported module.
    fake = tmp_path / "agents" / "probe.py"
    fake.parent.mkdir()
    fake.write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert [target for _, target in imports(fake) if layer_of(target) is not None] == expected


def _python(code: str) -> str:
    """The last line printed by ``code`` in a fresh interpreter, run outside the checkout."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT.parent, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_import_tiengow_env_loads_no_torch_and_nothing_above_it():
    loaded = json.loads(
        _python(
            "import sys, json, tiengow_env\n"
            "from tiengow_env import Game, VectorEnv, tiengow_v0, TienGowEnv\n"
            "import tiengow_env.reference, tiengow_env.search, tiengow_env.tree\n"
            "print(json.dumps(sorted(m for m in sys.modules if m == 'torch' or m.startswith(('tiengow.', 'torch.')))))"
        )
    )
    assert loaded == []


def test_a_shipped_cfr_bot_plays_without_the_trainers():
    # Both kinds of CFR policy file (the full-game abstraction, the exact micro policy) load
    # and play a hand; no module of tiengow.training (or torch) is imported on the way.
    loaded = json.loads(
        _python(
            "import sys, json\n"
            "import tiengow.agents, tiengow.agents.arena\n"
            "from tiengow.agents import make_agent\n"
            "from tiengow.agents.cfr import DEFAULT_POLICY\n"
            "from tiengow.agents.arena import play_hand\n"
            "from tiengow_env import Game\n"
            "micro = 'cfr:' + str(DEFAULT_POLICY.parent / 'cfr_micro.npz')\n"
            "for spec, rules in (('cfr', 'standard'), (micro, 'micro'), ('expert', 'standard'),\n"
            "                    ('pimc:4', 'standard'), ('search:0.01', 'standard')):\n"
            "    agents = [make_agent(spec, rules, seed=s) for s in range(4)]\n"
            "    assert play_hand(Game(seed=1, rules=rules), agents, 1).is_over\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('tiengow.training', 'torch')))))"
        )
    )
    assert loaded == []


def test_the_shipped_ppo_and_champion_bots_play_without_the_trainers():
    loaded = json.loads(
        _python(
            "import sys, json\n"
            "from tiengow.agents import make_agent\n"
            "from tiengow.agents.arena import play_hand\n"
            "from tiengow_env import Game\n"
            "for spec in ('ppo', 'champion:4'):\n"
            "    assert play_hand(Game(seed=1), [make_agent(spec, seed=s) for s in range(4)], 1).is_over\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('tiengow.training'))))"
        )
    )
    assert loaded == []


# ============================================================================ no cycles
# Every installed package: on-disk folder -> import name.
ALL_PACKAGES = {**PACKAGES, "tiengow": "tiengow", "benchmarks": "tiengow.benchmarks", "configs": "tiengow.configs"}
ALL_FILES = sorted(p for folder in ALL_PACKAGES for p in (ROOT / folder).rglob("*.py"))


def full_module_name(path: Path) -> str:
    relative = path.relative_to(ROOT)
    parts = [ALL_PACKAGES[relative.parts[0]], *relative.with_suffix("").parts[1:]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Lines of the ``if TYPE_CHECKING:`` blocks (their imports are for annotations, never run)."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def import_graph(files: list[Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports (anywhere in it), each import resolved to the
    longest project module its dotted name starts with (``from pkg import name`` -> pkg)."""
    names = {full_module_name(p): p for p in files}
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        skipped = _type_checking_lines(ast.parse(path.read_text(encoding="utf-8")))
        edges = set()
        for line, target in _imports_in(path, name, package):
            if line in skipped:
                continue
            parts = target.split(".")
            while parts and ".".join(parts) not in names:
                parts.pop()
            if parts and ".".join(parts) != name:
                edges.add(".".join(parts))
        graph[name] = edges
    return graph


def _imports_in(path: Path, name: str, package: str) -> list[tuple[int, str]]:
    """``imports`` for a module of any installed package (its name given, not derived)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))
            )
        ):
            target = node.args[0].value
            found.append((node.lineno, package + target if target.startswith(".") else target))
    return found


def import_cycles(graph: dict[str, set[str]]) -> dict[frozenset[str], list[str]]:
    """Each strongly connected set of two or more modules (Tarjan), with one shortest cycle
    through its first module, closed (``[a, b, a]``), so that a failure names a path."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                members.add(w)
                if w == v:
                    break
            if len(members) > 1:
                found.append(frozenset(members))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return {members: _shortest_cycle(graph, members) for members in found}


def _shortest_cycle(graph: dict[str, set[str]], members: frozenset[str]) -> list[str]:
    """Breadth first inside ``members``: the shortest way from its first module back to it."""
    start = min(members)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph[v] & members):
                if w == start:
                    return paths[v] + [start]
                if w not in paths:
                    paths[w] = paths[v] + [w]
                    following.append(w)
        frontier = following
    raise AssertionError(f"{sorted(members)} is not strongly connected")


def test_every_installed_module_is_in_the_graph():
    graph = import_graph(ALL_FILES)
    assert {
        "tiengow.web.app",
        "tiengow.cli",
        "tiengow.benchmarks.bench",
        "tiengow_env.state",
        "tiengow.training.ppo",
        "tiengow.agents.base",
    } <= set(graph)
    assert "tiengow_env.layout" in graph["tiengow_env.state"]
    assert (
        "tiengow.agents" in graph["tiengow.training.locator"]
        or "tiengow.agents.base" in graph["tiengow.training.locator"]
    )


def test_no_import_cycle():
    found = list(import_cycles(import_graph(ALL_FILES)).values())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(path) for path in sorted(found))


@pytest.mark.parametrize(
    "edges, expected",
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}}, [["a", "b", "a"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}, [["a", "b", "c", "a"]]),
        ({"a": {"b"}, "b": {"a", "c"}, "c": {"b"}}, [["a", "b", "a"]]),  # one set of three, named by a shortest cycle
        ({"a": {"b", "c"}, "b": {"a"}, "c": {"b"}, "x": {"y"}, "y": {"x"}}, [["a", "b", "a"], ["x", "y", "x"]]),
    ],
)
def test_the_cycle_finder_names_each_cycle(edges, expected):
    assert sorted(import_cycles(edges).values()) == expected


def test_the_graph_sees_imports_inside_functions_and_skips_type_checking(tmp_path, monkeypatch):
    (tmp_path / "tiengow").mkdir()
    (tmp_path / "tiengow" / "__init__.py").write_text("")
    (tmp_path / "tiengow" / "a.py").write_text("def f():\n    from . import b\n")
    (tmp_path / "tiengow" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from .c import C\nimport importlib\n"
        "importlib.import_module('tiengow.a')\n"
    )
    (tmp_path / "tiengow" / "c.py").write_text("from tiengow.b import x\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    graph = import_graph(sorted((tmp_path / "tiengow").glob("*.py")))
    assert graph == {
        "tiengow": set(),
        "tiengow.a": {"tiengow.b"},
        "tiengow.b": {"tiengow.a"},
        "tiengow.c": {"tiengow.b"},
    }
    assert import_cycles(graph) == {frozenset({"tiengow.a", "tiengow.b"}): ["tiengow.a", "tiengow.b", "tiengow.a"]}


# ============================================================================ the state layout
# The kernel modules (tiengow_env/state.py says why these): only they may name layout.S_*.
KERNEL_MODULES = {"tiengow_env.layout", "tiengow_env.state", "tiengow_env.game", "tiengow_env.search"}


def is_kernel_module(name: str) -> bool:
    """The modules that may index a state by offset: KERNEL_MODULES and tiengow_env/_*kernels.py."""
    return name in KERNEL_MODULES or (name.startswith("tiengow_env._") and name.endswith("kernels"))


def state_offsets_read(path: Path) -> list[str]:
    """``file:line: name`` for each use of a ``layout.S_*`` name in the file: imported, read as a
    bare name or as an attribute (``L.S_COLS``)."""
    from tiengow_env import layout

    offsets = {n for n in vars(layout) if n.startswith("S_")}
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    where = path.relative_to(ROOT)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in offsets:
            found.append(f"{where}:{node.lineno}: {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in offsets:
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom):
            found += [f"{where}:{node.lineno}: imports {a.name}" for a in node.names if a.name in offsets]
    return found


def test_the_kernel_modules_exist():
    names = {full_module_name(p) for p in ALL_FILES}
    assert KERNEL_MODULES <= names
    assert {n for n in names if is_kernel_module(n)} >= {
        "tiengow_env._kernels",
        "tiengow_env._search_kernels",
        "tiengow_env._policy_kernels",
        "tiengow_env._state_kernels",
    }
    assert not is_kernel_module("tiengow.agents._cfr_play_kernels")


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, id=str(p.relative_to(ROOT))) for p in ALL_FILES if not is_kernel_module(full_module_name(p))],
)
def test_only_kernel_modules_read_state_offsets(path):
    found = state_offsets_read(path)
    assert not found, "state offsets outside the kernel modules (read the state through StateView):\n" + "\n".join(
        found
    )


@pytest.mark.parametrize(
    "source, count",
    [
        ("from tiengow_env import layout as L\nx = state[L.S_COLS + 1]", 1),
        ("from tiengow_env.layout import S_HAND, PHASE_OVER\nh = state[S_HAND]", 2),
        ("x = game.view.columns[1]  # S_COLS in a comment is fine", 0),
    ],
)
def test_the_offset_check_sees_every_form(tmp_path, monkeypatch, source, count):
    fake = tmp_path / "probe.py"
    fake.write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert len(state_offsets_read(fake)) == count
