"""Threadblock swizzles and tile schedulers: ``plan.swizzling_functor = cuforge.swizzle.ThreadblockSwizzleStreamK``.

The names are CUTLASS 2.x's. SM80 kernels offer all of them; SM90 kernels run the persistent
scheduler (``IdentitySwizzle8``, the default) or stream-K (``ThreadblockSwizzleStreamK``).
"""

from ._core import TileSchedulerType

IdentitySwizzle1 = TileSchedulerType.Identity1
IdentitySwizzle2 = TileSchedulerType.Identity2
IdentitySwizzle4 = TileSchedulerType.Identity4
IdentitySwizzle8 = TileSchedulerType.Default
HorizontalSwizzle = TileSchedulerType.Horizontal
ThreadblockSwizzleStreamK = TileSchedulerType.StreamK
