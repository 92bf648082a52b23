"""The layering is a contract, checked on the source: imports point down only.

`LAYERS` below is the project's one layer map (docs/contributing.md links here).

Every import counts, also those inside functions (an upward import in a function is still
upward) and those under ``if TYPE_CHECKING:`` (a type names a module as surely as a call
does). The whole graph, function-level and type-only imports included, must have no
circle: a lazy import whose only job is to dodge a circle is a circle.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from package_dirs import PACKAGE_DIRS, ROOT

FOLDERS = PACKAGE_DIRS
# the sub-packages that package-dir maps from folders of their own (core, models, probes, behavioral)
NESTED = {package.split(".", 1)[1] for package in PACKAGE_DIRS if package.startswith("liedar.")}

# (rank, group): an import must go to a lower rank, or stay inside its own group.
LAYERS: list[tuple[int, str, tuple[str, ...]]] = [
    (0, "base", ("liedar", "liedar.core")),
    (1, "models", ("liedar.models",)),
    (2, "probes", ("liedar.probes",)),
    (2, "behavioral", ("liedar.behavioral",)),
    (3, "report", ("liedar.report", "liedar.readings")),
    (3, "organisms", ("liedar.organisms",)),
    (
        4,
        "top",
        ("liedar.cli", "liedar.commands", "liedar.pipeline", "liedar.audit", "liedar.integrations"),
    ),
]


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for prefix, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([prefix, *parts])
            if prefix == "liedar" and parts and parts[0] in NESTED:
                continue
            found[name] = path
    return found


MODULES = _modules()


def _layer(module: str) -> tuple[int, str]:
    best: tuple[int, int, str] | None = None
    for rank, group, prefixes in LAYERS:
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if prefix == "liedar" and module != "liedar":
                    continue
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), rank, group)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")
    return best[1], best[2]


def _imports(module: str, path: Path) -> list[tuple[str, int, bool]]:
    """(imported project module, line, at module level) for every import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name == "liedar" or alias.name.startswith("liedar."):
                        out.append((alias.name, child.lineno, top))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (child.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                if base == "liedar" or base.startswith("liedar."):
                    for alias in child.names:
                        sub = f"{base}.{alias.name}"
                        out.append((sub if sub in MODULES else base, child.lineno, top))
            else:
                inner = top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                visit(child, inner)

    visit(tree, True)
    return out


def _resolve(target: str) -> str:
    """The module an import names (a name imported from a module resolves to that module)."""
    while target not in MODULES and "." in target:
        target = target.rpartition(".")[0]
    return target


GRAPH = {m: [(_resolve(t), line, top) for t, line, top in _imports(m, p)] for m, p in MODULES.items()}


def test_every_module_has_a_layer():
    for module in MODULES:
        _layer(module)


def test_imports_point_down():
    bad = []
    for module, edges in GRAPH.items():
        rank, group = _layer(module)
        for target, line, _top in edges:
            t_rank, t_group = _layer(target)
            if t_group == group or t_rank < rank:
                continue
            bad.append(f"{MODULES[module].relative_to(ROOT)}:{line}: {module} ({group}) imports {target} ({t_group})")
    assert not bad, "imports that point up or sideways:\n" + "\n".join(bad)


def test_no_import_circles():
    """Tarjan's strongly connected components over every import (function-level included);
    a package's __init__ importing its own submodules lazily counts too."""
    graph = {m: sorted({t for t, _l, _top in edges if t != m}) for m, edges in GRAPH.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    counter = [0]

    def strongconnect(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, []):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            strongconnect(v)
    assert not circles, "import circles: " + "; ".join(" <-> ".join(c) for c in circles)


HEAVY = (
    "torch",
    "transformers",
    "llama_cpp",
    "liedar.models.hf",
    "liedar.models.llamacpp",
    "liedar.models.registry",
    "liedar.probes",
)


def test_behavioral_imports_without_torch():
    """Import every module of liedar.behavioral in a fresh interpreter: none of the heavy
    modules may be loaded (they are imported inside the runner functions that load a model)."""
    mods = sorted(m for m in MODULES if m.startswith("liedar.behavioral"))
    code = (
        "import sys, importlib\n"
        f"for m in {mods!r}: importlib.import_module(m)\n"
        f"bad = [h for h in {HEAVY!r} if h in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert out.stdout.strip() == "", f"liedar.behavioral loaded {out.stdout.strip()} at import time"


def test_a_users_models_package_is_not_ours(tmp_path):
    """`import models` from a user's environment must not find liedar's backends."""
    code = "import importlib.util as u; s = u.find_spec('models'); print(s.origin if s else 'none')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert str(ROOT) not in out.stdout, f"`import models` found {out.stdout.strip()}"


@pytest.mark.parametrize("module", ["liedar.models", "liedar.probes", "liedar.behavioral"])
def test_subpackages_import_by_the_one_name(module, tmp_path):
    code = f"import {module} as m; print(m.__file__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip().startswith(str(ROOT))
