"""Reading untrusted input with bounds: transcripts, hook payloads, files named on the command line.

`kg reflect /dev/zero` read until memory ran out, a 2 MB gzip that expands to 2 GiB did the same, and a FIFO
named as a transcript (or as a hook payload's `transcript_path`) hung forever. Every reader of outside input
goes through here: only regular files (or a stdin stream), at most a fixed number of bytes, and gzip expanded
to at most the same bound.
"""

from __future__ import annotations

import os
import stat
import zlib
from pathlib import Path
from typing import Any

from kg.core.errors import UsageError

# Resource bounds, not policy: a transcript of a very long session is a few tens of MB.
MAX_INPUT_BYTES = 256 * 1024 * 1024
MAX_PAYLOAD_BYTES = 16 * 1024 * 1024
_CHUNK = 1024 * 1024


class InputTooLarge(UsageError):
    """The input is larger than kg reads."""


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):,.0f} MB"


def read_file(path: str | os.PathLike[str], *, what: str = "the input", limit: int | None = None) -> bytes:
    """The bytes of a regular file, refused past `limit` (default MAX_INPUT_BYTES, read when called). FIFOs,
    devices and sockets are refused without blocking (the file is opened non-blocking and checked before a byte
    is read), and so is a file whose size is already past the limit (a sparse 3 GB file is not read first)."""
    limit = MAX_INPUT_BYTES if limit is None else limit
    p = Path(path)
    fd = _open_regular(p, what)
    try:
        if os.fstat(fd).st_size > limit:
            raise InputTooLarge(f"{what} {p} is larger than {_mb(limit)}, more than kg reads; split it or give a "
                                "smaller file")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return _bounded(fh, limit, f"{what} {p}")
    finally:
        os.close(fd)


def read_head(path: str | os.PathLike[str], size: int, *, what: str = "the input") -> bytes:
    """At most the first `size` bytes of a regular file, refused as `read_file` refuses what is not one (a
    FIFO would block a plain open for ever)."""
    p = Path(path)
    fd = _open_regular(p, what)
    try:
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(size)
    finally:
        os.close(fd)


def _open_regular(p: Path, what: str) -> int:
    """An open descriptor on the regular file `p`: opened non-blocking (a FIFO with no writer would block a
    plain open), then checked, so nothing else is ever read."""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise UsageError(f"{what} {p} does not exist: check the path") from None
    except IsADirectoryError:
        raise UsageError(f"{what} {p} is a folder: name one file") from None
    except PermissionError:
        raise UsageError(f"{what} {p} cannot be read: permission denied") from None
    except OSError as exc:
        raise UsageError(f"{what} {p} cannot be opened: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise UsageError(f"{what} {p} is a folder: name one file")
        if not stat.S_ISREG(mode):
            raise UsageError(f"{what} {p} is not a regular file (a FIFO, device or socket); kg reads only "
                             "files, or '-' for stdin")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_stream(stream: Any, *, what: str = "stdin", limit: int = MAX_INPUT_BYTES) -> bytes:
    """At most `limit` bytes of a binary stream; more is refused (nothing is half-read silently)."""
    return _bounded(stream, limit, what)


def _bounded(fh: Any, limit: int, what: str) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        chunk = fh.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            break
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8", "surrogateescape")
        parts.append(chunk)
        total += len(chunk)
        if total > limit:
            raise InputTooLarge(f"{what} is larger than {_mb(limit)}, more than kg reads; split it or give a "
                                "smaller file")
    return b"".join(parts)


def gunzip(data: bytes, *, what: str = "the input", limit: int = MAX_INPUT_BYTES) -> bytes:
    """Expand gzip data to at most `limit` bytes (a small file that expands to gigabytes is refused). A
    truncated or damaged stream gives what it held up to the damage; nothing at all raises zlib.error."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = bytearray()
    step = 64 * 1024
    for start in range(0, len(data), step):
        try:
            out += d.decompress(data[start:start + step], limit + 1 - len(out))
        except zlib.error:
            if out:
                return bytes(out)
            raise
        if len(out) > limit or d.unconsumed_tail:
            raise InputTooLarge(f"{what} expands to more than {_mb(limit)} when unpacked; kg will not read it")
        if d.eof:
            break
    return bytes(out)
