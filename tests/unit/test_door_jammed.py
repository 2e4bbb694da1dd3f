"""The read server's door out of file descriptors (QA11 #6): an accept failing with EMFILE leaves the connection in
the backlog, so the listener stays readable, and the door looked again at once, for ever: the server spun at 100 %
CPU holding the graph, `kg serve stop` could not stop it, and every writer failed until it was killed by hand. The
door now says it is jammed, and the server lets go. A real socket in a child process whose descriptor limit is
lowered to what it has open."""

from __future__ import annotations

import subprocess
import sys

CHILD = r"""
import os, resource, select, socket, struct, sys, tempfile, time
from kg.serve import protocol
from kg.serve.door import Door

path = os.path.join(tempfile.mkdtemp(), "s")
listener = socket.socket(socket.AF_UNIX)
listener.bind(path)
listener.listen(8)
client = socket.socket(socket.AF_UNIX)
client.connect(path)
highest = max(int(fd) for fd in os.listdir("/proc/self/fd")) - 1  # (listdir's own, the highest, is closed again)
resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
door = Door(listener)
started = time.monotonic()
waits = door.waiting()
got = door.next(5.0)
print(waits, got, round(time.monotonic() - started, 1), door.jammed)
"""


def test_a_door_out_of_descriptors_says_so_at_once_instead_of_spinning():
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    waits, got, took, *jammed = r.stdout.split(maxsplit=3)
    assert (waits, got) == ("True", "None") and float(took) < 4.0, r.stdout
    assert "cannot take a connection (Too many open files)" in jammed[0], r.stdout
