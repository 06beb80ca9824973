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
        return env
    try:
        dist = importlib.metadata.distribution("nvidia-cutlass")
    except importlib.metadata.PackageNotFoundError:
        return ""
    root = dist.locate_file("cutlass_library/source")
    return str(root) if os.path.isdir(os.path.join(root, "include", "cutlass")) else ""
