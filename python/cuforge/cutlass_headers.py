"""Where the CUTLASS headers come from: CUTLASS_PATH, else the pinned nvidia-cutlass wheel.

The wheel is only a source of C++ headers: its Python packages are never imported.
"""

from __future__ import annotations

import importlib.metadata
import os


def cutlass_path() -> str:
    """The CUTLASS tree (holding include/cutlass) cuforge compiles against; '' when none is found
    (the first compile then says what to install)."""
    env = os.environ.get("CUTLASS_PATH")
    if env:
        if not os.path.isabs(env):  # anchored where cuforge was imported: the core reads it at its first build,
            try:  # which may be after os.chdir
                os.environ["CUTLASS_PATH"] = env = os.path.abspath(env)
            except OSError:  # no current directory (removed): the first build says the headers are missing
                pass
        return env
    try:
        dist = importlib.metadata.distribution("nvidia-cutlass")
    except importlib.metadata.PackageNotFoundError:
        return ""
    root = dist.locate_file("cutlass_library/source")
    return str(root) if os.path.isdir(os.path.join(root, "include", "cutlass")) else ""
