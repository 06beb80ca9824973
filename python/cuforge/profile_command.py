"""The `cuforge profile` and `cuforge tune` command lines, over cuforge.profiler: a plan from the
options, the problem checked, the table printed and the CSV and plot written; or the tuning record
filled from a file of shapes.

    cuforge profile --m 4096 --n 4096 --k 4096 --dtype bf16 --csv p.csv --plot p.png
    cuforge profile --op grouped --groups 64 --m 128 --n 2048 --k 2048 --offsets
    cuforge profile --op fprop --conv 32,56,56,64,64,3,3 --padding 1 --dtype f16 --top 8
    cuforge tune shapes.txt --dtype bf16        # shapes.txt: "M N K [batch]" per line
"""

from __future__ import annotations

import argparse
import errno
import sys

from . import _core
from ._core import InvalidArgumentError, LayoutType
from .messages import shown
from .profiler import check_outputs, profile, profile_conv, profile_grouped, tune


def _plan_from(args):
    from .op import Conv2d, Gemm, GroupedGemm

    if getattr(args, "op", "gemm") not in ("gemm", "grouped"):
        return Conv2d(kind=args.op, element=args.dtype, element_A=args.a, element_B=args.b, element_C=args.c,
                      element_D=args.d, element_accumulator=args.acc, kernel_cc=args.kernel_cc)
    layouts = {"r": LayoutType.RowMajor, "c": LayoutType.ColumnMajor}
    given = "rrr" if args.layouts is None else args.layouts
    if len(given) != 3 or any(ch not in layouts for ch in given):
        raise InvalidArgumentError(f"--layouts takes three letters r/c (A, B, C), got {shown(given)}")
    plan_class = GroupedGemm if getattr(args, "op", "gemm") == "grouped" else Gemm
    return plan_class(element=args.dtype, element_A=args.a, element_B=args.b, element_C=args.c, element_D=args.d,
                      element_accumulator=args.acc, layout_A=layouts[given[0]], layout_B=layouts[given[1]],
                      layout_C=layouts[given[2]], kernel_cc=args.kernel_cc)


# A shapes file's size past which it is no list of shapes (/dev/zero, say): refused unread.
_MAX_SHAPES_FILE_BYTES = 16 << 20


def _shapes(path):
    """The distinct shapes of a file of 'M N K [batch]' lines, in their order."""
    try:
        with open(path) as f:
            text = f.read(_MAX_SHAPES_FILE_BYTES + 1)
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidArgumentError(f"{path}: cannot read a file of 'M N K [batch]' lines: {e}") from None
    if len(text) > _MAX_SHAPES_FILE_BYTES:
        raise InvalidArgumentError(f"{path}: more than {_MAX_SHAPES_FILE_BYTES >> 20} MiB: not a file of 'M N K [batch]' "
                                   f"lines")
    shapes = []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split("#")[0].split()
        if not fields:
            continue
        if len(fields) not in (3, 4) or not all(x.isascii() and x.isdigit() for x in fields):  # not '²'
            raise InvalidArgumentError(f"{path}:{number}: expected 'M N K [batch]', got {shown(line.strip())}")
        if any(len(x.lstrip("0")) > 19 for x in fields):  # past 64 bits (and Python's int() of 4300 digits)
            raise InvalidArgumentError(f"{path}:{number}: a size of more than 19 digits, beyond any GEMM cuforge runs")
        shapes.append(tuple(int(x) for x in fields) + ((1,) if len(fields) == 3 else ()))
    if not shapes:
        raise InvalidArgumentError(f"{path}: no 'M N K [batch]' lines (# starts a comment)")
    return list(dict.fromkeys(shapes))


def _decimal(text: str) -> bool:
    """ASCII digits (int() takes other scripts' digits too, '١٢'; a shapes file refuses them) without a leading
    zero (which C reads as octal: the C++ commands refuse '010' too), fewer than int() refuses to read (4300): a
    size past a plan's range is refused by the plan, naming it."""
    text = text.strip()
    return text.isascii() and text.isdigit() and (text == "0" or text[0] != "0") and len(text) <= 4000


def _integer(text: str) -> int:
    """An option's integer, in ASCII digits (a sign allowed: the plan refuses what it cannot run, by name)."""
    if not _decimal(text.strip().removeprefix("-")):
        raise argparse.ArgumentTypeError(f"expected an integer in decimal digits, got {shown(text)}")
    return int(text)


def _operation(text: str) -> str:
    """--op's value, the interface's spellings too, as `cuforge list --op` takes them: grouped_gemm,
    conv2d_fprop, conv2d_dgrad, conv2d_wgrad."""
    return "grouped" if text == "grouped_gemm" else text.removeprefix("conv2d_") if text in (
        "conv2d_fprop", "conv2d_dgrad", "conv2d_wgrad") else text


def _extents(text: str) -> tuple:
    fields = text.split(",")
    if len(fields) != 7 or not all(_decimal(f) for f in fields):
        raise argparse.ArgumentTypeError(f"expected seven integers N,H,W,C,K,R,S, got {shown(text)}")
    return tuple(int(f) for f in fields)


def _pair_argument(text: str) -> tuple:
    fields = text.split(",")
    if len(fields) not in (1, 2) or not all(_decimal(f) for f in fields):
        raise argparse.ArgumentTypeError(f"expected an integer or two (height,width), got {shown(text)}")
    values = [int(f) for f in fields]
    return (values[0], values[-1])


class _Parser(argparse.ArgumentParser):
    """argparse's parser, but that its help is written as any output is: a write that fails raises (argparse's own
    printing drops the error, and `cuforge profile --help > /dev/full` exited 0). Its subcommands' parsers are
    of this class too."""

    def print_help(self, file=None):
        out = file or sys.stdout
        if out is None:  # `>&-`: Python has no stdout
            raise OSError(errno.EBADF, "the standard output is closed")
        out.write(self.format_help())


def main(argv=None) -> int:
    parser = _Parser(prog="cuforge", description="time kernels on this machine's GPU")
    commands = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--dtype", default="bf16", help="element type of every operand (default bf16)")
    for name in ("a", "b", "c", "d"):
        common.add_argument(f"--{name}", help=f"element type of {name.upper()} (default --dtype)")
    common.add_argument("--acc", help="accumulator type (default: the plan's for these types, f32 for 16-bit inputs)")
    common.add_argument("--layouts", help="GEMMs: layouts of A, B, C as three letters r/c (default rrr)")
    common.add_argument("--kernel-cc", type=_integer, choices=(80, 90), help="kernel family (default: the newest)")
    p = commands.add_parser("profile", parents=[common], help="time the cost model's best candidates for a problem")
    p.add_argument("--op", type=_operation, choices=("gemm", "grouped", "fprop", "dgrad", "wgrad"), default="gemm",
                   help="a GEMM (--m --n --k), a grouped GEMM (--groups of --m --n --k) or a Conv2d pass "
                        "(--conv, NHWC tensors); default gemm")
    for name in ("m", "n", "k"):
        p.add_argument(f"--{name}", type=_integer)
    p.add_argument("--batch", type=_integer, help="--op gemm: the batch of M x N x K (default 1)")
    p.add_argument("--groups", type=_integer, help="--op grouped: how many groups of M x N x K")
    p.add_argument("--offsets", action="store_true",
                   help="--op grouped: the offsets form (A and D cut into groups of rows on the device)")
    p.add_argument("--conv", type=_extents, metavar="N,H,W,C,K,R,S", help="a convolution's extents (--op fprop ...)")
    for name, default in (("stride", 1), ("padding", 0), ("dilation", 1)):
        p.add_argument(f"--{name}", type=_pair_argument, metavar="V or H,W",
                       help=f"the convolution's {name} (default {default})")
    p.add_argument("--top", type=_integer, default=6, help="candidates to time (default 6)")
    p.add_argument("--filter", help="shell glob on kernel names")
    p.add_argument("-j", "--jobs", type=_integer, help="nvcc processes at once (default: one per core)")
    p.add_argument("--csv", help="write the rows here")
    p.add_argument("--plot", help="draw TFLOP/s per kernel into this PNG")
    t = commands.add_parser("tune", parents=[common], help="fill the tuning record for a file of shapes")
    t.add_argument("shapes", help="a file of 'M N K [batch]' lines")
    t.add_argument("--candidates", type=_integer, default=6, help="candidates timed per shape (default 6)")
    args = parser.parse_args(argv)
    try:
        if args.command == "profile":  # refused before anything is timed; written after the table is printed
            check_outputs(args.csv, args.plot)
        plan = _plan_from(args)
        if args.command == "tune":
            tune(plan, _shapes(args.shapes), args.candidates)
            return 0
        geometry = any(v is not None for v in (args.stride, args.padding, args.dilation))
        if args.op == "gemm":
            if None in (args.m, args.n, args.k) or args.conv or args.groups is not None or args.offsets or geometry:
                parser.error("profile --op gemm takes --m, --n and --k (and no --conv, --groups, --offsets, --stride, "
                             "--padding, --dilation)")
            result = profile(plan, args.m, args.n, args.k, 1 if args.batch is None else args.batch, top=args.top,
                             filter=args.filter, jobs=args.jobs)
        elif args.op == "grouped":
            if None in (args.groups, args.m, args.n, args.k) or args.conv or args.batch is not None or geometry:
                parser.error("profile --op grouped takes --groups, --m, --n and --k (and no --conv, --batch, --stride, "
                             "--padding, --dilation)")
            result = profile_grouped(plan, args.groups, args.m, args.n, args.k, offsets=args.offsets, top=args.top,
                                     filter=args.filter, jobs=args.jobs)
        else:
            if args.conv is None or any(v is not None for v in (args.m, args.n, args.k, args.groups, args.batch,
                                                                  args.layouts)) or args.offsets:
                parser.error(f"profile --op {args.op} takes --conv N,H,W,C,K,R,S (and no --m, --n, --k, --groups, "
                             "--batch, --layouts, --offsets: its tensors are NHWC)")
            stride, padding, dilation = (default if v is None else v for v, default in (
                (args.stride, (1, 1)), (args.padding, (0, 0)), (args.dilation, (1, 1))))
            result = profile_conv(plan, *args.conv, stride, padding, dilation, top=args.top,
                                  filter=args.filter, jobs=args.jobs)
        try:
            print(result.table(), flush=True)
        except OSError as e:  # the measurements still reach the files asked for
            result.save(args.csv, args.plot)
            print(f"cuforge {args.command}: cannot write the table to stdout: {e.strerror or e}", file=sys.stderr)
            return 2
        result.save(args.csv, args.plot)
        return 0
    except (_core.Error, OSError) as e:  # OSError: --csv or --plot could not be written
        message = str(e).removeprefix(f"{args.command}: ")  # plan.profile's own errors name it already
        print(f"cuforge {args.command}: {message}", file=sys.stderr)
        return 2
