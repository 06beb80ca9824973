"""Where kernel workspaces come from: stream-K partials, split-K slices, the zeros of a K = 0
product, TF32 copies of operands.

Once torch is imported, from torch's caching allocator (they show in torch.cuda.memory_allocated()
and the memory is torch's to reuse); after use_rmm(), from RMM pools; otherwise from cuforge's own
pool (a buffer per device and stream). All three are stream-ordered: memory given back after a
launch goes only to work queued after it on the same stream. Workspaces of at most 256 KiB (a
grouped run's arrays, CUTLASS's tensor maps) always come from cuforge's pool: torch's allocator or
RMM would cost a call into Python each way. Under CUDA graph capture a workspace is always the
graph's own allocation, whatever the source. A run whose kernel needs no workspace asks none of
them.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.util
import operator
import sys
import threading

from . import _core
from ._core import InvalidArgumentError, ToolchainError
from .messages import shown

# "cuforge", "torch", "rmm", or "pending": torch is installed but was not imported when a workspace
# last asked (that one came from cuforge's pool); the first workspace after its import decides.
_source = "cuforge"
_rmm_pools = None


class MemoryPool:
    """What kernel workspaces come from (get_memory_pool()). ``source`` is "torch" (torch's
    caching allocator), "rmm" (the pools of use_rmm()) or "cuforge" (cuforge's own pool)."""

    def __init__(self, source: str, rmm_pools=None):
        self.source = source
        self._rmm_pools = rmm_pools

    def pool_size(self) -> int:
        """Bytes the source holds now, in use or kept for reuse: torch's memory_reserved() on the
        current device, the sum of the RMM pools, or what cuforge's pool holds."""
        if self.source == "torch":
            return sys.modules["torch"].cuda.memory_reserved()
        if self.source == "rmm":
            return self._rmm_pools.pool_size()
        return _core.workspace_pool_bytes()

    def __repr__(self):
        return f"MemoryPool(source={self.source!r}, pool_size={self.pool_size()})"


def _imported_torch():
    """torch where it is imported, else None (also where it is blocked: None in sys.modules)."""
    return sys.modules.get("torch")


def get_memory_pool() -> MemoryPool:
    """What kernel workspaces come from now: a MemoryPool whose ``source`` is "torch", "rmm" or
    "cuforge". With torch imported since the last workspace, torch's allocator is taken here."""
    if _source == "pending" and _imported_torch() is not None:
        _adopt_torch()
    return MemoryPool("cuforge" if _source == "pending" else _source, _rmm_pools)


def use_rmm(initial: int | None = None, maximum: int | None = None, *, initial_pool_size: int | None = None,
            maximum_pool_size: int | None = None) -> MemoryPool:
    """Take kernel workspaces from RMM (the RAPIDS Memory Manager) from now on, instead of torch's
    allocator or cuforge's pool: a pool of ``initial`` bytes (default 1 GiB) growing up to
    ``maximum`` (default 4 GiB) per device, made at the device's first workspace and set as RMM's
    resource for that device, so that cuforge and the process's other RMM users share it. The
    CUTLASS Python interface's names ``initial_pool_size`` and ``maximum_pool_size`` are taken too.
    Sizes are whole multiples of 256 bytes. Raises cuforge.ToolchainError when RMM is not installed.
    Returns get_memory_pool()."""
    global _source, _rmm_pools
    initial, maximum = _pool_sizes(_either(initial, initial_pool_size, "initial"),
                                   _either(maximum, maximum_pool_size, "maximum"))
    try:
        rmm = importlib.import_module("rmm")
    except ImportError as e:
        raise ToolchainError(f"use_rmm: RMM (the Python package 'rmm'; pip install rmm-cu13) is not installed ({e})") from None
    pools = _RmmPools(rmm, initial, maximum)
    pools.stream(0)  # an RMM that cannot take a stream by its handle is refused here, not at a run
    _core.set_workspace_allocator(pools.allocate, pools.free)
    _source, _rmm_pools = "rmm", pools
    return get_memory_pool()


def create_memory_pool(init_pool_size: int = 0, max_pool_size: int = 2**34) -> MemoryPool | None:
    """The CUTLASS Python interface's create_memory_pool: RMM pools of these sizes (use_rmm) where RMM
    is installed, else None (workspaces then come from torch's allocator or cuforge's pool). The sizes are
    checked either way."""
    _pool_sizes(init_pool_size, max_pool_size, "create_memory_pool", ("init_pool_size", "max_pool_size"))
    if importlib.util.find_spec("rmm") is None:
        return None
    return use_rmm(init_pool_size, max_pool_size)


def _pool_sizes(initial, maximum, caller="use_rmm", names=("initial", "maximum")) -> tuple[int, int]:
    """use_rmm's (initial, maximum), checked (errors name the caller's arguments); the default initial size is
    capped by a smaller maximum given (use_rmm(maximum=2**29) starts at 2**29)."""
    maximum = _pool_size(maximum, f"{caller}: expected {names[1]}", 2**32)
    initial = _pool_size(initial, f"{caller}: expected {names[0]}", min(2**30, maximum))
    if initial > maximum:
        raise InvalidArgumentError(f"{caller}: expected {names[0]} ({initial} bytes) to be at most {names[1]} "
                                   f"({maximum} bytes)")
    return initial, maximum


def _either(value, seed_value, name):
    if value is not None and seed_value is not None:
        raise InvalidArgumentError(f"use_rmm: give {name} or {name}_pool_size, not both")
    return seed_value if value is None else value


def _pool_size(value, expected: str, default):
    if value is None:
        return default
    try:
        size = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        size = None
    if size is None or not 0 <= size < 2**64 or size % 256:
        raise InvalidArgumentError(f"{expected} to be a number of bytes below 2**64, a multiple of 256 (RMM's pools "
                                   f"take no other), got {shown(value)}")
    return size


def _torch_allocate(device, nbytes, stream):
    # cuforge calls with `device` current, the device torch's raw allocation takes.
    return sys.modules["torch"]._C._cuda_cudaCachingAllocator_raw_alloc(nbytes, stream)


def _torch_free(address, device, nbytes, stream):
    sys.modules["torch"]._C._cuda_cudaCachingAllocator_raw_delete(address)


def _allocate_once_torch_is_imported(device, nbytes, stream):
    # Decided at a workspace, not at `import cuforge`: torch may be imported later, and asking it
    # about CUDA at import would initialise CUDA in a process that may yet fork.
    if _imported_torch() is None or not _adopt_torch():
        return 0  # cuforge's pool
    return _torch_allocate(device, nbytes, stream)


def _adopt_torch() -> bool:
    """Hands workspaces to torch when its CUDA works (True), else to cuforge's pool for good."""
    global _source
    torch = _imported_torch()
    if torch.cuda.is_available():
        torch.cuda.init()  # the caching allocator exists from here on
        _core.set_workspace_allocator(_torch_allocate, _torch_free)
        _source = "torch"
        return True
    _core.set_workspace_allocator(None, None)
    _source = "cuforge"
    return False


def _use_default():
    """torch's caching allocator if torch is (or may yet be) imported, else cuforge's pool."""
    global _source, _rmm_pools
    _rmm_pools = None
    blocked = "torch" in sys.modules and _imported_torch() is None  # sys.modules["torch"] = None
    if not blocked and (_imported_torch() is not None or importlib.util.find_spec("torch") is not None):
        _core.set_workspace_allocator(_allocate_once_torch_is_imported, _torch_free)
        _source = "pending"
    else:
        _core.set_workspace_allocator(None, None)
        _source = "cuforge"


class _RmmPools:
    """use_rmm()'s memory: an RMM pool per device, made with the device current (as RMM makes
    them) at its first workspace."""

    def __init__(self, rmm, initial, maximum):
        self._rmm, self._initial, self._maximum = rmm, initial, maximum
        self.pools = {}  # device -> rmm.mr.PoolMemoryResource
        self._streams = {}  # stream handle -> rmm's Stream over it
        self._making = threading.Lock()  # one pool per device, whichever thread asks first

    def allocate(self, device, nbytes, stream):
        pool = self.pools.get(device)
        if pool is None:
            with self._making:
                pool = self.pools.get(device)
                if pool is None:
                    mr = self._rmm.mr
                    pool = mr.PoolMemoryResource(mr.CudaMemoryResource(), initial_pool_size=self._initial,
                                                 maximum_pool_size=self._maximum)
                    mr.set_per_device_resource(device, pool)
                    self.pools[device] = pool
        return pool.allocate(nbytes, self.stream(stream))

    def free(self, address, device, nbytes, stream):
        self.pools[device].deallocate(address, nbytes, self.stream(stream))

    def stream(self, handle):
        s = self._streams.get(handle)
        if s is None:
            s = self._streams[handle] = _rmm_stream(self._rmm, handle)
        return s

    def pool_size(self) -> int:
        return sum(p.pool_size() for p in self.pools.values())


class _StreamHandle:
    """A CUDA stream by its handle, as the CUDA stream protocol hands it over."""

    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def _rmm_stream(rmm, handle):
    """RMM's Stream over a stream handle: through the CUDA stream protocol (RMM 25.12 and later),
    else through CuPy's ExternalStream."""
    try:
        Stream = importlib.import_module("rmm.pylibrmm.stream").Stream
        try:
            return Stream(_StreamHandle(handle))
        except TypeError:
            return Stream(importlib.import_module("cupy").cuda.ExternalStream(handle))
    except ImportError as e:
        version = getattr(rmm, "__version__", "of unknown version")
        raise ToolchainError(f"use_rmm: RMM {version} cannot take a CUDA stream by its handle ({e}): it needs RMM 25.12 or "
                    "later, or RMM 25.02 or later with CuPy installed") from None


_use_default()
atexit.register(_core.set_workspace_allocator, None, None)  # the core lets go of the Python callables
