"""Threadblock swizzles and tile schedulers: ``plan.swizzling_functor = cuforge.swizzle.ThreadblockSwizzleStreamK``.

The names are CUTLASS 2.x's. SM80 kernels offer all of them; SM90 kernels run the persistent
scheduler (``IdentitySwizzle8``, the default) or stream-K (``ThreadblockSwizzleStreamK``). The
strided-dgrad swizzles are those cuforge's SM80 dgrad kernels take themselves: a dgrad plan given one
logs it and keeps them.
"""

import enum

from ._core import TileSchedulerType

IdentitySwizzle1 = TileSchedulerType.Identity1
IdentitySwizzle2 = TileSchedulerType.Identity2
IdentitySwizzle4 = TileSchedulerType.Identity4
IdentitySwizzle8 = TileSchedulerType.Default
HorizontalSwizzle = TileSchedulerType.Horizontal
ThreadblockSwizzleStreamK = TileSchedulerType.StreamK


class StridedDgradSwizzle(enum.Enum):
    """CUTLASS's swizzles of strided dgrad (its StridedDgradIdentity1 ... of cutlass_library)."""

    StridedDgradIdentity1 = 1
    StridedDgradIdentity4 = 4
    StridedDgradHorizontal = 0


StridedDgradIdentitySwizzle1 = StridedDgradSwizzle.StridedDgradIdentity1
StridedDgradIdentitySwizzle4 = StridedDgradSwizzle.StridedDgradIdentity4
StridedDgradHorizontalSwizzle = StridedDgradSwizzle.StridedDgradHorizontal


def get_swizzling_functors() -> list:
    """Every name above, in the CUTLASS Python interface's order (a plan's swizzling_functors() lists those its
    kernels take)."""
    return [IdentitySwizzle1, IdentitySwizzle2, IdentitySwizzle4, IdentitySwizzle8, HorizontalSwizzle,
            ThreadblockSwizzleStreamK, StridedDgradIdentitySwizzle1, StridedDgradIdentitySwizzle4,
            StridedDgradHorizontalSwizzle]
