"""Run a command as an MCP client's stdio server and keep a byte-exact copy of everything it writes to stdout.

    python tee_stdout.py CAPTURE_DIR COMMAND [ARG...]

The client talks to COMMAND through this wrapper; CAPTURE_DIR/stdout receives every byte COMMAND writes to its
stdout, until COMMAND exits (`done` appears then, and `pid` names COMMAND). The server and the copying tee run
in sessions of their own: a client that stops the wrapper's process group at the end of a session (the SDK
does after a 2 s grace) must not cut off what the server writes while it exits, which is what the test is about.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TEE = """
import os, sys
out, capture = 1, open(sys.argv[1], "wb")
while chunk := os.read(0, 65536):
    capture.write(chunk)
    capture.flush()
    try:
        if out is not None:
            os.write(out, chunk)
    except OSError:  # the client stopped reading: keep capturing
        out = None
capture.close()
open(sys.argv[2], "w").close()
"""


def main() -> int:
    capture, command = Path(sys.argv[1]), sys.argv[2:]
    read_end, write_end = os.pipe()
    tee = subprocess.Popen([sys.executable, "-c", TEE, str(capture / "stdout"), str(capture / "done")],
                           stdin=read_end, start_new_session=True)
    server = subprocess.Popen(command, stdout=write_end, start_new_session=True)
    os.close(read_end)
    os.close(write_end)
    (capture / "pid").write_text(str(server.pid))
    code = server.wait()
    tee.wait()
    return code


if __name__ == "__main__":
    sys.exit(main())
