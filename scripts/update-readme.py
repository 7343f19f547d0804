#!/usr/bin/env python3
"""Refreshes the real outputs in README.md: every fenced block whose first line is
`$ COMMAND` is replaced by that command's current output (run from the repository root,
`schedlab` meaning target/release/schedlab; build it first). Run it after a change that
alters what a documented command prints."""
import re
import subprocess
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
readme = root / "README.md"
text = readme.read_text()


def run(cmd: str) -> str:
    shell = cmd.replace("schedlab ", str(root / "target/release/schedlab") + " ", 1) if cmd.startswith("schedlab ") else cmd
    out = subprocess.run(shell, shell=True, cwd=root, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"'{cmd}' failed:\n{out.stderr}")
    lines = out.stdout.splitlines()
    if cmd == "make simulate":
        # make echoes its recipe; keep schedlab's own output.
        start = next(i for i, l in enumerate(lines) if l.startswith("workload"))
        lines = lines[start:]
    return "\n".join(lines)


def refresh(m: re.Match) -> str:
    cmd = m.group(1)
    print(f"running: {cmd}", file=sys.stderr)
    return f"```\n$ {cmd}\n{run(cmd)}\n```"


# A block: its fence, the `$ COMMAND` line, any output lines (none yet for a new one),
# the closing fence.
text = re.sub(r"```\n\$ ([^\n]+)\n(?:(?!```)[^\n]*\n)*```", refresh, text)
readme.write_text(text)
