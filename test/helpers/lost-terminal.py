"""Runs a program on a pseudo-terminal, then takes the terminal away under it.

usage: python3 lost-terminal.py MARKER TIMEOUT_S PROGRAM [ARGS...]

The program gets a fresh pty (80x24) as stdin, stdout and stderr, in a session of its own with
no controlling terminal, so closing the master sends it no SIGHUP: its next write to the terminal
fails with EIO, as after `script` or an SSH session that went away without a signal reaching it.
Once MARKER appears in what it wrote, the master is closed; the helper waits for the program to
end and prints one JSON line: {"seen", "code", "signal", "transcript"}.
"""

import fcntl
import json
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time

marker = sys.argv[1].encode()
timeout = float(sys.argv[2])
command = sys.argv[3:]

master, slave = os.openpty()
# A size, as `script` and sshd give one: without it sluice draws lines, not its live view.
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
child = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, start_new_session=True, close_fds=True)
os.close(slave)

transcript = b""
seen = False
deadline = time.monotonic() + timeout
while not seen and time.monotonic() < deadline and child.poll() is None:
    ready, _, _ = select.select([master], [], [], 0.2)
    if not ready:
        continue
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    transcript += chunk
    seen = marker in transcript

os.close(master)
try:
    child.wait(timeout=timeout)
except subprocess.TimeoutExpired:
    child.kill()
    child.wait()
code = child.returncode
print(
    json.dumps(
        {
            "seen": seen,
            "code": code if code >= 0 else None,
            "signal": signal.Signals(-code).name if code < 0 else None,
            "transcript": transcript.decode("utf8", "replace"),
        }
    )
)
