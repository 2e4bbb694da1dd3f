"""Learn from session transcripts: parse them, then detect what is worth logging.

The pure core of `kg reflect`: `read_transcript`/`parse_bytes` build a Transcript,
`detect`/`reflect` turn it into findings under the rules in rules/reflect.toml.
Nothing here writes anywhere; `--apply` is the caller's business.
"""

from .detect import Finding, Reflection, Task, detect, is_error_result, own_lines, redactor, reflect
from .parse import (
    FORMATS,
    Transcript,
    TranscriptError,
    Turn,
    detect_format,
    parse_bytes,
    parse_text,
    read_transcript,
)
from .rules import ReflectRules, default_rules, load_rules, load_rules_file
from .signature import ErrorSignature, signature

__all__ = [
    "FORMATS",
    "ErrorSignature",
    "Finding",
    "ReflectRules",
    "Reflection",
    "Task",
    "Transcript",
    "TranscriptError",
    "Turn",
    "default_rules",
    "detect",
    "detect_format",
    "is_error_result",
    "load_rules",
    "load_rules_file",
    "own_lines",
    "parse_bytes",
    "parse_text",
    "read_transcript",
    "redactor",
    "reflect",
    "signature",
]
