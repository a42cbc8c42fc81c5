"""The house's one-way imports (DESIGN.md "The house"): surfaces -> conversation -> plan -> estimate / knowledge
-> records, with render and store beside them. A lower layer that imports a higher one, or anything below the
surfaces that imports Slack or click, fails here with the file and the import that broke the rule."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

BOT = Path(__file__).resolve().parents[1] / "bot"

# What each layer may import from bot/ besides itself. `plan -> render` is the advisor's wording through the
# templates; the planner's rewrite returns data only and this edge goes with it.
ALLOWED = {
    "records": set(),
    "knowledge": {"records"},
    "estimate": {"records", "knowledge"},
    "store": {"records"},
    "render": {"records", "knowledge"},
    "plan": {"records", "knowledge", "estimate", "render"},
    "conversation": {"records", "knowledge", "estimate", "plan", "render"},
    "surfaces": {"records", "knowledge", "estimate", "plan", "render", "conversation", "store"},
}
IO_LIBRARIES = {"slack_bolt", "slack_sdk", "click", "waitress"}


def _imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{path}:{node.lineno}: use absolute imports (from bot.<layer>.<module> import ...)"
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
    return out


def _modules() -> list[Path]:
    return sorted(p for p in BOT.rglob("*.py") if len(p.relative_to(BOT).parts) > 1)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(BOT)))
def test_imports_go_one_way(path):
    layer = path.relative_to(BOT).parts[0]
    assert layer in ALLOWED, f"bot/{layer}/ is not a layer of DESIGN.md's house; add it to ALLOWED with its edges"
    for line, module in _imports(path):
        top, _, rest = module.partition(".")
        if top == "bot" and rest:
            target = rest.split(".")[0]
            assert target == layer or target in ALLOWED[layer], \
                f"bot/{path.relative_to(BOT)}:{line} imports {module}: {layer} may import only {sorted(ALLOWED[layer])}"
        if layer != "surfaces":
            assert top not in IO_LIBRARIES, f"bot/{path.relative_to(BOT)}:{line} imports {top}: only bot/surfaces/ may"


def test_every_module_lives_in_a_layer():
    loose = [p.name for p in BOT.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert loose == [], f"modules directly in bot/ {loose}: move each into the layer it belongs to"


def test_python_dash_m_bot_is_the_command():
    out = subprocess.run([sys.executable, "-m", "bot", "--help"], capture_output=True, text=True, check=True).stdout
    assert "ask" in out and "estimate" in out and "audit" in out


# Import circles inside a layer that other work is removing (issue 33: surfaces; issue 34: store). Each entry is one
# circle exactly as it stands: a new circle fails the test below, and so does one listed here that is gone (take it
# off the list in the change that breaks it), so the list can only shrink.
KNOWN_CIRCLES: set[frozenset[str]] = set()      # none left: a new circle fails the test below


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(BOT).with_suffix("").parts).removesuffix(".__init__")


def _import_graph() -> dict[str, set[str]]:
    """Module -> the bot modules it imports anywhere in its body (a function-level import closes a circle just as
    surely as a top-level one; it only moves the failure to run time). `from bot.plan import perf` is an edge to
    bot/plan/perf.py, `from bot.plan.perf import x` too."""
    paths = {_module_name(p): p for p in BOT.rglob("*.py") if len(p.relative_to(BOT).parts) > 1}
    graph = {}
    for name, path in paths.items():
        edges = set()
        for _line, module in _imports(path):
            inner = module.removeprefix("bot.")
            if inner in paths and paths[inner].name != "__init__.py":
                edges.add(inner)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bot."):
                inner = node.module.removeprefix("bot.")
                edges |= {f"{inner}.{a.name}" for a in node.names if f"{inner}.{a.name}" in paths}
        graph[name] = edges - {name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for root in graph:  # noqa: PLC0206 -- graph[root] is read only for an unvisited root
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_circles_are_found():
    """The detector itself: a three-module ring and a self-contained pair are found, a chain is not."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d"}, "f": {"a"}, "g": set()}
    assert sorted(map(sorted, _circles(graph))) == [["a", "b", "c"], ["d", "e"]]


def test_no_import_circles_inside_a_layer():
    """Modules of a layer import each other one way (DESIGN.md: plan/ as one-way stages), so that each module can be
    read, tested and replaced from the modules below it alone."""
    circles = set(_circles(_import_graph()))
    new = [sorted(c) for c in circles - KNOWN_CIRCLES]
    gone = [sorted(c) for c in KNOWN_CIRCLES - circles]
    assert not new, f"import circles: {new}; move what both sides need into a module below them"
    assert not gone, f"these circles are broken now (good): remove them from KNOWN_CIRCLES: {gone}"


def _redefinitions(tree: ast.AST) -> list[tuple[int, str]]:
    """Functions, methods and classes defined twice in one body: the second silently replaces the first."""
    found = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        seen: dict[str, int] = {}
        for child in body:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                overloads = any(isinstance(d, ast.Name) and d.id == "overload" or
                                isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter", "overload")
                                for d in child.decorator_list)
                if child.name in seen and not overloads:
                    found.append((child.lineno, child.name))
                seen[child.name] = child.lineno
    return found


def test_redefinitions_are_found():
    tree = ast.parse("class A:\n    def f(self): pass\n    def g(self): pass\n    def f(self): pass\n")
    assert _redefinitions(tree) == [(4, "f")]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(BOT)))
def test_nothing_is_defined_twice(path):
    """Two methods of one name in a class: the later one wins without a word (a comparison's USD cost method was
    replaced by the fleet's of the same name, and every comparison picked its GPU by name)."""
    twice = _redefinitions(ast.parse(path.read_text(encoding="utf-8")))
    assert not twice, f"bot/{path.relative_to(BOT)}: defined twice (the later replaces the earlier): {twice}"


def test_the_planner_orchestrator_stays_short():
    """plan/advisor.py only runs the stages (DESIGN.md: plan/ as one-way stages, each a module with one product);
    the work of each stage lives in its own module, which a newcomer finds by its name in the tree."""
    lines = (BOT / "plan" / "advisor.py").read_text(encoding="utf-8").count("\n")
    assert lines <= 200, f"bot/plan/advisor.py has {lines} lines: move what is not orchestration into its stage"
