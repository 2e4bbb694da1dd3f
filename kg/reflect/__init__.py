"""Learn from session transcripts: parse them, then detect what is worth logging.

The pure core of `kg reflect`: `read_transcript`/`parse_bytes` build a Transcript,
`detect`/`reflect` turn what the user said into findings under the rules in rules/reflect.toml,
`failures` the failed tool calls under rules/errors.toml.
Nothing here writes anywhere; `--apply` is the caller's business.
"""

from .detect import Finding, Reflection, Task, default_redact, detect, own_lines, reflect
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
