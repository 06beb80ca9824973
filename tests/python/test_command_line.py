"""The `cuforge` command line where its reader has gone (`cuforge list | head -1`): no abort, and the quiet end a
command line's output has."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import cuforge


@pytest.mark.parametrize("ignored", [True, False], ids=["sigpipe-ignored", "sigpipe-default"])
def test_the_command_line_ends_without_an_abort_when_its_reader_has_gone(ignored):
    """`cuforge list 2>&1 | head -1` from Python, whose children may inherit an ignored SIGPIPE: the failed write's
    error could not be printed either (the same pipe), and the second throw aborted (SIGABRT). Now it exits 2 where
    SIGPIPE is ignored, and ends by SIGPIPE, as a command line's output does, where it is not."""
    binary = os.path.join(os.path.dirname(cuforge.__file__), "bin", "cuforge")
    listing = subprocess.Popen([binary, "list"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               restore_signals=not ignored)
    listing.stdout.read(1)
    listing.stdout.close()
    assert listing.wait(timeout=60) == (2 if ignored else -13)


def test_the_command_lines_entry_point_restores_sigpipe():
    """The `cuforge` entry point (Python, which ignores SIGPIPE) restores it before it runs a command: its output to
    a reader that has gone ends it quietly, as a command line's does."""
    entry = [sys.executable, "-c", "import sys; from cuforge.cli import main; sys.argv[0] = 'cuforge'; main()", "list"]
    listing = subprocess.Popen(entry, stdout=subprocess.PIPE, stderr=subprocess.PIPE, restore_signals=False)
    listing.stdout.read(1)
    listing.stdout.close()
    assert listing.wait(timeout=60) == -13, listing.stderr.read()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this machine")
@pytest.mark.parametrize("command", [["profile", "--help"], ["tune", "--help"]])
def test_the_profilers_lost_output_fails_the_command(command):
    """`cuforge profile --help > /dev/full` exited 0, its output lost (argparse's write failed unseen at exit); the
    C++ commands exit 2 there."""
    entry = [sys.executable, "-c", "import sys; from cuforge.cli import main; sys.argv[0] = 'cuforge'; main()",
             *command]
    with open("/dev/full", "w") as full:
        done = subprocess.run(entry, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith(f"cuforge {command[0]}: cannot write the output: "), \
        done.stderr


def test_the_profilers_output_with_stdout_closed_fails_the_command():
    """`cuforge profile --help >&-`: Python has no sys.stdout; it died of an AttributeError (a traceback, exit 1)."""
    entry = [sys.executable, "-c", "import sys; from cuforge.cli import main; sys.argv[0] = 'cuforge'; main()",
             "profile", "--help"]
    done = subprocess.run(entry, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60,
                          preexec_fn=lambda: os.close(1))
    assert done.returncode == 2 and done.stderr == "cuforge profile: cannot write the output: the standard output " \
                                                   "is closed\n", done.stderr
