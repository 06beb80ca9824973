"""Building many kernels at once, in parallel, with a progress line."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable

from . import _core
from ._core import CompilationError, InvalidArgumentError
from .arguments import capability, flag, jobs_count, text


def compilation_error(message: str, log: str, source_path: str | None) -> CompilationError:
    """A CompilationError as the core raises one: with the compiler's ``log`` and the kept
    ``source_path`` of what failed (None when no source was kept)."""
    err = CompilationError(message)
    err.log = log
    err.source_path = source_path
    return err


def _terminal(stream) -> bool:
    """Whether a stream is a terminal: not where there is no stream (sys.stderr None) or it is closed."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def progress_line():
    """A progress callback for the core's parallel builds, (done, total, failed, kernel name): one line on stderr,
    redrawn in place on a terminal (one line per build elsewhere), ended with the last build. Nothing is shown, and
    nothing raised, where stderr is missing or closed."""
    start = time.monotonic()

    def report(done, total, failed, last):
        stream = sys.stderr
        if stream is None:  # print(file=None) would print to stdout
            return
        tty = _terminal(stream)
        bar = "#" * (30 * done // max(total, 1))
        line = f"build [{bar:<30}] {done}/{total} {failed} failed {time.monotonic() - start:.0f}s {last}"
        try:
            print(("\r\33[2K" + line) if tty else line, end="\n" if done == total or not tty else "", file=stream,
                  flush=True)
        except (AttributeError, ValueError, OSError):  # no stderr, or a closed one: the build goes on unseen
            pass

    return report


def build(names, jobs: int | None = None, progress: bool = True, cc: int | None = None) -> list[dict]:
    """Compile kernels by name (one, or a list) into the cache with ``jobs`` nvcc processes at once
    (default: one per core) for compute capability ``cc`` (default: the GPU's, else 90). Returns one
    dict per kernel (name, library, cache_hit, seconds). Raises CompilationError naming every kernel
    nvcc rejected, after all have been tried (its ``log`` nvcc's output for each, its ``source_path``
    the first one's kept source); ToolchainError or CacheError when the compiler or the
    cache cannot be used."""

    names_given = names
    names = ([names] if isinstance(names, str) else None if isinstance(names, (bytes, bytearray))
             else list(names) if isinstance(names, Iterable) else None)
    if names is None:  # bytes would be taken as a list of integers
        raise InvalidArgumentError(f"names: expected a kernel name or a list of them (strings), got "
                                   f"{type(names_given).__name__}")
    names = list(dict.fromkeys(text(n, "names", "a kernel name or a list of them (strings)") for n in names))

    jobs, cc, progress = jobs_count(jobs), 0 if cc is None else capability(cc, "cc"), flag(progress, "progress")
    results = _core.build(names, jobs, cc, progress_line() if progress else None)
    failed = [r for r in results if r["error"]]
    if failed:
        # Each failure's message names its kept source; source_path is the first one's.
        raise compilation_error(
            f"{len(failed)} of {len(results)} kernels failed to compile:\n" + "\n".join(r["error"] for r in failed),
            "\n".join(r.get("log", r["error"]) for r in failed), failed[0].get("source_path"))
    return results

