"""How a process says it waits for the graph, read without taking any lock (Linux, 64-bit): a waiter holds an
open-file-description read lock on `graph.lock.wait`, and a checker asks the kernel whether one is held
(F_OFD_GETLK). Light on purpose: `kg.store.lock` and the session-start hook's check (`kg.runtimes.graph_held`,
which must not import kg.store and Kùzu) both read it here."""

from __future__ import annotations

import fcntl
import os
import struct
import sys

OFD = sys.platform.startswith("linux") and hasattr(fcntl, "F_OFD_GETLK") and struct.calcsize("P") == 8
_FLOCK = "@hhqqi4x"  # struct flock on 64-bit Linux: l_type, l_whence, l_start, l_len, l_pid (32 bytes)


def whole_file(kind: int) -> bytes:
    return struct.pack(_FLOCK, kind, os.SEEK_SET, 0, 0, 0)  # the whole file; l_pid must be 0 for OFD locks


def read_lock_held(fd: int) -> bool:
    """Whether any open file description holds a lock on `fd`'s file that a write lock would meet (OFD only;
    raises OSError as fcntl does)."""
    return struct.unpack(_FLOCK, fcntl.fcntl(fd, fcntl.F_OFD_GETLK, whole_file(fcntl.F_WRLCK)))[0] != fcntl.F_UNLCK
