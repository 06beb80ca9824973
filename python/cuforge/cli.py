"""The `cuforge` command installed with the Python package: runs the bundled C++ CLI with the
CUTLASS headers of the nvidia-cutlass wheel as its default (CUTLASS_PATH still wins); `profile`
and `tune`, which run kernels, are the profiler's (cuforge.profile_command)."""

from __future__ import annotations

import os
import signal
import sys

from .cutlass_headers import cutlass_path


def main() -> None:
    # Python ignores SIGPIPE (and an exec'd program inherits that): restored, so that `cuforge list | head` and
    # `cuforge profile ... | head` end quietly, as a command line's output does when its reader has gone.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if len(sys.argv) > 1 and sys.argv[1] in ("profile", "tune"):
        from .profile_command import main as profiler_main

        try:  # an output that never reached its file fails the command, as the C++ commands' do (/dev/full)
            try:
                status = profiler_main(sys.argv[1:])
            except SystemExit as e:  # argparse's --help and usage errors
                status = e.code
            if sys.stdout is not None:  # `>&-`: none to flush (the table's print went nowhere)
                sys.stdout.flush()
        except OSError as e:
            print(f"cuforge {sys.argv[1]}: cannot write the output: {e.strerror or e}", file=sys.stderr)
            os._exit(2)  # not Python's own report of the failed flush at exit
        sys.exit(status)
    binary = os.path.join(os.path.dirname(__file__), "bin", "cuforge")
    env = dict(os.environ)
    if not env.get("CUTLASS_PATH") and cutlass_path():
        env["CUTLASS_PATH"] = cutlass_path()
    os.execve(binary, [binary, *sys.argv[1:]], env)


if __name__ == "__main__":
    main()
