"""Code run in a fresh interpreter: cuforge finds its toolchain and cache once per process, so a test of
them (or of the environment variables that choose them) starts a new one."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    """Runs code (dedented) in a fresh interpreter with these environment variables added."""
    full_env = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=full_env, timeout=120)
