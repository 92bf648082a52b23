"""No function is over 80 lines without a reason in its docstring.

A function's length here is its body without the docstring: from the first statement after
the docstring to the end of the last, blank lines and comments between them included. Every
function and method counts, nested ones too (a nested function's lines also count towards
the function around it). A function may run longer when its docstring says why, on a line
of its own starting with ``Long because`` (a declarative table, say, that splitting would
scatter). The library's package folders are walked, and scripts/ too.
"""

from __future__ import annotations

import ast
from pathlib import Path

from package_dirs import PACKAGE_DIRS, ROOT

FOLDERS = {**PACKAGE_DIRS, "scripts": ROOT / "scripts"}  # scripts/ is no package, but is checked too
LIMIT = 80
REASON = "Long because"

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def body_lines(node: _Function) -> int:
    """Lines from the first statement after the docstring to the end of the last (0 when the
    body is only a docstring)."""
    body = node.body
    if ast.get_docstring(node, clean=False) is not None:
        body = body[1:]
    if not body:
        return 0
    return (body[-1].end_lineno or body[-1].lineno) - body[0].lineno + 1


def has_reason(node: _Function) -> bool:
    """Whether the docstring has a line starting with ``Long because``."""
    doc = ast.get_docstring(node) or ""
    return any(line.lstrip().startswith(REASON) for line in doc.splitlines())


def long_functions(source: str) -> list[tuple[int, str, int]]:
    """(line, qualified name, body lines) of each function in ``source`` over the limit with
    no reason given."""
    found: list[tuple[int, str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                length = body_lines(child)
                if length > LIMIT and not has_reason(child):
                    found.append((child.lineno, name, length))
                visit(child, name + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return sorted(found)


def violations(folders: dict[str, Path], root: Path) -> list[str]:
    """``file:line: message`` for every function over the limit with no reason, under ``folders``."""
    bad = []
    for folder in folders.values():
        for path in sorted(folder.rglob("*.py")):
            for line, name, length in long_functions(path.read_text(encoding="utf-8")):
                bad.append(f"{path.relative_to(root)}:{line}: {name} has {length} body lines (limit {LIMIT})")
    return bad


def test_no_function_is_long_without_a_reason():
    bad = violations(FOLDERS, ROOT)
    assert not bad, (
        f"functions over {LIMIT} lines (split them into helpers with one job each, or give the reason "
        f"on a docstring line starting with '{REASON}'):\n" + "\n".join(bad)
    )


def _function(name: str, lines: int, doc: str = "", indent: str = "") -> str:
    docstring = f'{indent}    """{doc}"""\n' if doc else ""
    body = "".join(f"{indent}    x{i} = {i}\n" for i in range(lines))
    return f"{indent}def {name}():\n{docstring}{body}"


def test_the_check_catches_a_planted_long_function(tmp_path):
    source = (
        _function("long_without_reason", LIMIT + 1, doc="A docstring is not counted.\n\n    Nor is this.\n    ")
        + _function("long_with_reason", LIMIT + 5, doc="A table.\n\n    Long because: a table, one row a line.\n    ")
        + _function("short", LIMIT, doc="Exactly at the limit.")
        + "class Holder:\n"
        + _function("method", LIMIT + 1, indent="    ")
        + "    def outer(self):\n"
        + "        pass\n"
        + _function("inner", LIMIT + 2, indent="        ")
    )
    pkg = tmp_path / "liedar"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text(source)
    lines = source.splitlines()

    def line(name: str) -> int:
        return next(i for i, text in enumerate(lines, 1) if text.lstrip().startswith(f"def {name}("))

    bad = violations({"liedar": pkg}, tmp_path)
    assert bad == [
        f"liedar/mod.py:{line('long_without_reason')}: long_without_reason has {LIMIT + 1} body lines (limit {LIMIT})",
        f"liedar/mod.py:{line('method')}: Holder.method has {LIMIT + 1} body lines (limit {LIMIT})",
        f"liedar/mod.py:{line('outer')}: Holder.outer has {LIMIT + 4} body lines (limit {LIMIT})",
        f"liedar/mod.py:{line('inner')}: Holder.outer.<locals>.inner has {LIMIT + 2} body lines (limit {LIMIT})",
    ]
