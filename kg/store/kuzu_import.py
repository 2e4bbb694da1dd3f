"""`import kuzu` without its asyncio half.

kuzu 0.11.3's package `__init__` imports `AsyncConnection`, and with it asyncio, ssl and concurrent.futures:
about 0.1 s of CPU and 9 MB of resident memory in every process, for a class kg never uses. The module is
stood in for while kuzu is imported; `kuzu.AsyncConnection` still works, loading the real one on first use.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

_NAME = "kuzu.async_connection"


def _real() -> Any:
    if isinstance(sys.modules.get(_NAME), _Stub):
        del sys.modules[_NAME]
    real = importlib.import_module(_NAME).AsyncConnection
    sys.modules["kuzu"].AsyncConnection = real
    return real


class _Stub(types.ModuleType):
    pass


class AsyncConnection:
    """Stands in for kuzu.AsyncConnection until it is used."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        return _real()(*args, **kwargs)


def import_kuzu() -> Any:
    if "kuzu" in sys.modules:
        return sys.modules["kuzu"]
    stub = _Stub(_NAME)
    stub.AsyncConnection = AsyncConnection  # type: ignore[attr-defined]
    sys.modules.setdefault(_NAME, stub)
    try:
        import kuzu
    finally:
        if sys.modules.get(_NAME) is stub:
            del sys.modules[_NAME]
    return kuzu
