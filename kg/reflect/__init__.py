"""Learn from session transcripts: parse them, then detect what is worth logging.

The pure core of `kg reflect`: `read_transcript`/`parse_bytes` build a Transcript,
`detect`/`reflect` turn what the user said into findings under the rules in rules/reflect.toml,
`failures` the failed tool calls under rules/errors.toml.
Nothing here writes anywhere; `--apply` is the caller's business.
"""

import sys
import types
from importlib import import_module
from typing import Any

# Loaded on first use (module `__getattr__`), so a caller that needs one submodule (the post-tool-use hook reads
# `failures` and `state`) does not pay for detection and its rapidfuzz. `detect` is both a function and a
# submodule: the attribute is the function, `kg.reflect.detect` imported by its dotted name stays the module.
_LAZY = {
    **dict.fromkeys(("Finding", "Reflection", "Task", "default_redact", "detect", "own_lines", "reflect"), "detect"),
    **dict.fromkeys(("FORMATS", "Transcript", "TranscriptError", "Turn", "detect_format", "parse_bytes",
                     "parse_text", "read_transcript"), "parse"),
    **dict.fromkeys(("ReflectRules", "default_rules", "load_rules", "load_rules_file"), "rules"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        if name == "detect" and isinstance(value, types.ModuleType):
            return  # importing the submodule binds it on its parent: `kg.reflect.detect` stays the function
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = [
    "FORMATS",
    "Finding",
    "ReflectRules",
    "Reflection",
    "Task",
    "Transcript",
    "TranscriptError",
    "Turn",
    "default_redact",
    "default_rules",
    "detect",
    "detect_format",
    "load_rules",
    "load_rules_file",
    "own_lines",
    "parse_bytes",
    "parse_text",
    "read_transcript",
    "reflect",
]
