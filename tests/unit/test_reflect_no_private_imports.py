"""No module of kg.reflect imports another module's private (underscore) names: verdict.py took lesson.py's `_fill`
and `_prose`, readers.py parse.py's `_describe` and `_flatten`, specstory.py and window.py its `_SPECSTORY_HEADING`,
apply.py kg.ingest.apply's `_second`. A helper another module uses has a public name where it lives, so a change to
a private one can be made knowing no other module depends on it. Read from the source files themselves."""

from __future__ import annotations

import ast
from pathlib import Path

import kg.reflect

REFLECT = Path(kg.reflect.__file__).parent


def _private_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found += [f"{path.name}:{node.lineno} {node.module or '.'}.{alias.name}" for alias in node.names
                      if alias.name.startswith("_") and not alias.name.startswith("__")]
    return found


def test_no_reflect_module_imports_another_s_private_names():
    files = sorted(REFLECT.rglob("*.py"))
    assert len(files) > 10  # the package's modules were found
    assert [found for path in files for found in _private_imports(path)] == []


def test_the_scan_sees_a_private_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from .lesson import _fill, key\nfrom kg.ingest.apply import _second as s\nimport os\n")
    assert _private_imports(sample) == ["sample.py:1 lesson._fill", "sample.py:2 kg.ingest.apply._second"]
