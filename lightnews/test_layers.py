"""The map of ``lightnews/``, kept true: no import up the stack, no import circle, no giant.

The layers are the ordered list in ``docs/architecture.md`` (read from there,
so the document and this test cannot disagree). A module may import from its
own layer or the layers below it; every import counts, the lazy ones inside
functions and those under ``TYPE_CHECKING`` too. Modules and functions have a
size bound (tests and migrations aside); an exception names its reason here.

Two allow-lists hold what other branches are removing as this one lands
(serve-split, cli-pkg, store-shape, typed-settings): each entry must still be
true (a stale entry fails), so merging those branches empties the lists.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
MAX_MODULE_LINES = 1_000
MAX_FUNCTION_LINES = 150

#: Imports up the stack or round a circle that another branch is removing right now.
#: Empty these as those branches land (a stale entry fails the test).
BEING_REMOVED_BY_ANOTHER_BRANCH: dict[tuple[str, str], str] = {}

#: Modules and functions over the bound that another branch is splitting right now.
#: Empty this as those branches land (a stale entry fails the test).
BEING_SPLIT_BY_ANOTHER_BRANCH: dict[str, str] = {}

#: Modules and functions over the bound for good, each with its reason.
OVERSIZED: dict[str, str] = {}


def layer_list(text: str) -> list[tuple[str, ...]]:
    """The ordered layers between the ``<!-- layers -->`` markers: each numbered line's
    leading backticked names (``1. `errors`, `model` - ...``), bottom first."""
    block = re.search(r"<!-- layers -->(.*?)<!-- /layers -->", text, re.S)
    assert block, f"{ARCHITECTURE} has no <!-- layers --> ... <!-- /layers --> list"
    found = []
    for line in block[1].splitlines():
        match = re.match(r"\s*\d+\.\s+((?:`[\w.]+`(?:,\s*)?)+)", line)
        if match:
            found.append(tuple(re.findall(r"`([\w.]+)`", match[1])))
    return found


def is_exempt(path: Path) -> bool:
    """Tests and migrations are not held to the map's size bounds (tests not to its arrows)."""
    parts = path.relative_to(PACKAGE).parts
    return (
        path.name.startswith("test_")
        or path.name == "conftest.py"
        or any(p in ("migrations", "pg_migrations") for p in parts)
    )


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def component(module: str) -> str:
    """What the layer list names a module by: its top package or root module under
    ``lightnews`` (the package's own ``__init__`` is ``__init__``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def modules() -> dict[str, Path]:
    return {
        module_name(p): p
        for p in sorted(PACKAGE.rglob("*.py"))
        if not is_exempt(p) and "__pycache__" not in p.parts
    }


def imported(tree: ast.AST, module: str, is_package: bool, known: Iterable[str]) -> set[str]:
    """The modules of ``known`` that ``tree`` imports, anywhere in it (lazy imports too)."""
    names = set(known)
    here = module.split(".") if is_package else module.split(".")[:-1]
    wanted: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            wanted += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[: len(here) - node.level + 1]) if node.level else ""
            source = ".".join(p for p in (base, node.module or "") if p)
            submodules = [f"{source}.{a.name}" for a in node.names]
            wanted += submodules
            if not all(m in names for m in submodules):  # names from the module itself
                wanted.append(source)
    found = set()
    for name in wanted:
        while name and name not in names:
            name = name.rpartition(".")[0]
        if name and name != module:
            found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    """Which module imports which, over the non-test modules of the package."""
    known = modules()
    return {
        name: imported(
            ast.parse(path.read_text(encoding="utf-8")), name, path.name == "__init__.py", known
        )
        for name, path in known.items()
    }


def up_the_stack(graph: Mapping[str, set[str]], order: Sequence[tuple[str, ...]]) -> list[str]:
    """Imports from a lower layer to a higher one, and modules the layer list does not place."""
    level = {name: i for i, names in enumerate(order) for name in names}
    problems = [
        f"{m} is on no layer of docs/architecture.md ({component(m)!r})"
        for m in sorted(graph)
        if component(m) not in level
    ]
    for source in sorted(graph):
        for target in sorted(graph[source]):
            low, high = level.get(component(source)), level.get(component(target))
            if low is not None and high is not None and high > low:
                problems.append(f"{source} (layer {low + 1}) imports {target} (layer {high + 1})")
    return problems


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Every import circle: the strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def oversized() -> dict[str, int]:
    """Non-test modules over ``MAX_MODULE_LINES`` and functions over ``MAX_FUNCTION_LINES``,
    keyed ``path`` and ``path:function`` (paths relative to the package)."""
    found = {}
    for path in modules().values():
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(PACKAGE).as_posix()
        if (lines := len(text.splitlines())) > MAX_MODULE_LINES:
            found[where] = lines
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found[f"{where}:{node.name}"] = length
    return found


def without(graph: Mapping[str, set[str]], edges: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    dropped = set(edges)
    return {s: {t for t in targets if (s, t) not in dropped} for s, targets in graph.items()}


def test_the_layer_list_is_read_from_the_architecture_document() -> None:
    order = layer_list(ARCHITECTURE.read_text(encoding="utf-8"))
    assert order[0] == ("errors", "model", "settings", "__init__"), order[0]
    names = [n for layer in order for n in layer]
    assert len(names) == len(set(names)), "a name on two layers"
    assert names.index("normalize") < names.index("sources") < names.index("store")
    assert names.index("store") < names.index("link") < names.index("rank")
    assert names.index("rank") < names.index("ingest") < names.index("serve")


def test_no_import_runs_up_the_stack() -> None:
    order = layer_list(ARCHITECTURE.read_text(encoding="utf-8"))
    graph = without(import_graph(), BEING_REMOVED_BY_ANOTHER_BRANCH)
    problems = up_the_stack(graph, order)
    assert problems == [], "imports up the stack (docs/architecture.md):\n" + "\n".join(problems)


def test_no_import_circle() -> None:
    found = circles(without(import_graph(), BEING_REMOVED_BY_ANOTHER_BRANCH))
    assert found == [], "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_arrows_being_removed_elsewhere_are_still_there() -> None:
    graph = import_graph()
    stale = [f"{s} -> {t}" for s, t in BEING_REMOVED_BY_ANOTHER_BRANCH if t not in graph.get(s, ())]
    assert stale == [], "gone: take them off BEING_REMOVED_BY_ANOTHER_BRANCH:\n" + "\n".join(stale)


def test_no_module_over_1000_lines_or_function_over_150() -> None:
    allowed = {**BEING_SPLIT_BY_ANOTHER_BRANCH, **OVERSIZED}
    found = oversized()
    over = [
        f"{where}: {lines} lines" for where, lines in sorted(found.items()) if where not in allowed
    ]
    stale = sorted(set(allowed) - set(found))
    assert over == [], "too long (split it, or write the reason in OVERSIZED):\n" + "\n".join(over)
    assert stale == [], "no longer too long: take off the allow-list:\n" + "\n".join(stale)


def test_the_checks_catch_what_they_are_for() -> None:
    """A planted back arrow, circle and unplaced module are each reported."""
    order = [("model",), ("store",), ("rank",)]
    graph = {
        "lightnews.model": set(),
        "lightnews.store": {"lightnews.model", "lightnews.rank"},
        "lightnews.rank": {"lightnews.store"},
        "lightnews.stray": set(),
    }
    problems = up_the_stack(graph, order)
    assert "lightnews.store (layer 2) imports lightnews.rank (layer 3)" in problems
    assert any("lightnews.stray is on no layer" in p for p in problems)
    assert circles(graph) == [["lightnews.rank", "lightnews.store"]]
    tree = ast.parse("def f() -> None:\n    from lightnews.rank import x\n")
    assert imported(tree, "lightnews.store.y", False, graph) == {"lightnews.rank"}
    tree = ast.parse("from ..rank import x\nfrom . import model\n")
    # ``from . import model`` names a submodule: it counts as that module alone, as
    # ``from .model import x`` does (the package's own names would count the package)
    assert imported(tree, "lightnews.store.y", False, [*graph, "lightnews.store.model"]) == {
        "lightnews.rank",
        "lightnews.store.model",
    }
