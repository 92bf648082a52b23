"""No module imports another liedar module's private names.

ruff's SLF001 (pyproject.toml) catches ``module._name`` read as an attribute; this test
catches the other door, ``from liedar.x import _name`` (absolute or relative, at module
level or inside a function). A name one module needs from another is public in its home
module, with a docstring saying why it exists. A private name is one with a leading
underscore that is not a dunder; importing a private *module* for its public names
(``from liedar.core._util.extras import require``) is fine. Binding a public name to a private
alias (``import load as _load``) is fine too. Tests are out of scope: they pin private
primitives on purpose.
"""

from __future__ import annotations

import ast
from pathlib import Path

from package_dirs import PACKAGE_DIRS, ROOT

FOLDERS = {**PACKAGE_DIRS, "scripts": ROOT / "scripts"}  # scripts/ is no package, but is checked too


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(prefix: str, folder: Path, path: Path) -> tuple[str, str]:
    """(dotted module name, the package its relative imports start from)."""
    parts = [p for p in path.relative_to(folder).with_suffix("").parts if p != "__init__"]
    name = ".".join([prefix, *parts])
    return name, name if path.name == "__init__.py" else name.rpartition(".")[0]


def private_imports(module: str, package: str, source: str) -> list[tuple[int, str, str]]:
    """(line, imported-from module, private name) for each private name ``module`` imports
    from a different liedar module."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join(anchor + ([base] if base else []))
        if not (base == "liedar" or base.startswith("liedar.")) or base == module:
            continue
        found += [(node.lineno, base, alias.name) for alias in node.names if _private(alias.name)]
    return found


def violations(folders: dict[str, Path], root: Path) -> list[str]:
    """``file:line: message`` for every private import across modules under ``folders``."""
    bad = []
    for prefix, folder in folders.items():
        for path in sorted(folder.rglob("*.py")):
            module, package = _module_name(prefix, folder, path)
            for line, base, name in private_imports(module, package, path.read_text(encoding="utf-8")):
                bad.append(f"{path.relative_to(root)}:{line}: {module} imports {base}.{name}")
    return bad


def test_no_module_imports_another_modules_private_names():
    bad = violations(FOLDERS, ROOT)
    assert not bad, "private names imported across modules (make them public in their home module):\n" + "\n".join(bad)


def test_the_check_catches_a_planted_import(tmp_path):
    pkg = tmp_path / "liedar"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .inner import _own_helper\n")
    (pkg / "sub" / "inner.py").write_text(
        "from __future__ import annotations\n"
        "from liedar.sub.inner import _self_is_fine\n"
        "from liedar.other import public, _helper\n"
        "def f():\n"
        "    from ..other import _lazy\n"
        "    from . import _sibling\n"
        "    from liedar.other import __version__, load as _load\n"
        "    from liedar.core._util.extras import require\n"
        "    from numpy import _private_elsewhere\n"
    )
    bad = violations({"liedar": pkg}, tmp_path)
    assert bad == [
        "liedar/sub/__init__.py:1: liedar.sub imports liedar.sub.inner._own_helper",
        "liedar/sub/inner.py:3: liedar.sub.inner imports liedar.other._helper",
        "liedar/sub/inner.py:5: liedar.sub.inner imports liedar.other._lazy",
        "liedar/sub/inner.py:6: liedar.sub.inner imports liedar.sub._sibling",
    ]
