"""Where kernel workspaces come from, on the CPU: use_rmm's checks and its refusal without RMM,
get_memory_pool's answer, and the torch and RMM allocators driven as the core drives them, over
fake `torch` and `rmm` modules (neither is installed here; tests/gpu/test_memory_gpu.py runs the
real torch path through kernels)."""

import importlib.util
import sys
import types

import pytest

import cuforge
from cuforge import memory


@pytest.fixture(autouse=True)
def default_source():
    yield
    memory._use_default()


def fake_torch(cuda_available=True):
    calls = []
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(is_available=lambda: cuda_available, init=lambda: calls.append("init"),
                                       memory_reserved=lambda: 1 << 20)
    torch._C = types.SimpleNamespace(
        _cuda_cudaCachingAllocator_raw_alloc=lambda nbytes, stream: calls.append(("alloc", nbytes, stream)) or 0x7000,
        _cuda_cudaCachingAllocator_raw_delete=lambda address: calls.append(("delete", address)))
    return torch, calls


def fake_rmm(monkeypatch, stream_protocol=True):
    """An RMM whose pools hand out made-up addresses and log what they are asked."""
    log = []

    class Stream:
        def __init__(self, obj):
            if stream_protocol and hasattr(obj, "__cuda_stream__"):
                self.handle = obj.__cuda_stream__()[1]
            elif hasattr(obj, "ptr"):  # CuPy's
                self.handle = obj.ptr
            else:
                raise TypeError(f"Cannot create stream from {type(obj)}")

    class PoolMemoryResource:
        def __init__(self, upstream, initial_pool_size, maximum_pool_size):
            self.sizes = (initial_pool_size, maximum_pool_size)
            log.append(("pool", initial_pool_size, maximum_pool_size))

        def allocate(self, nbytes, stream):
            log.append(("allocate", nbytes, stream.handle))
            return 0x10000

        def deallocate(self, address, nbytes, stream):
            log.append(("deallocate", address, nbytes, stream.handle))

        def pool_size(self):
            return self.sizes[0]

    rmm = types.ModuleType("rmm")
    rmm.__version__ = "25.12.00"
    rmm.mr = types.SimpleNamespace(CudaMemoryResource=object, PoolMemoryResource=PoolMemoryResource,
                                   set_per_device_resource=lambda device, mr: log.append(("resource", device)))
    stream_module = types.ModuleType("rmm.pylibrmm.stream")
    stream_module.Stream = Stream
    monkeypatch.setitem(sys.modules, "rmm", rmm)
    monkeypatch.setitem(sys.modules, "rmm.pylibrmm.stream", stream_module)
    return log


def without_torch(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)


def test_without_torch_workspaces_are_cuforges(monkeypatch):
    without_torch(monkeypatch)
    pool = cuforge.get_memory_pool()
    assert isinstance(pool, cuforge.MemoryPool)
    assert pool.source == "cuforge"
    assert pool.pool_size() == cuforge._core.workspace_pool_bytes() >= 0
    assert "cuforge" in repr(pool)


def test_torch_blocked_in_sys_modules_leaves_workspaces_to_cuforge(monkeypatch):
    """sys.modules["torch"] = None, how torch is blocked: workspaces are cuforge's (the pending choice once took
    None for torch, and every workspace raised)."""
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: object() if name == "torch" else None)
    for decided_before in (False, True):
        without_torch(monkeypatch)
        if decided_before:
            memory._use_default()  # torch installed, not yet imported: decided at the first workspace
        monkeypatch.setitem(sys.modules, "torch", None)
        if not decided_before:
            memory._use_default()
        assert memory._allocate_once_torch_is_imported(0, 4096, 0) == 0
        assert cuforge.get_memory_pool().source == "cuforge"


def test_torch_installed_but_not_imported_leaves_the_choice_to_the_first_workspace(monkeypatch):
    without_torch(monkeypatch)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: object() if name == "torch" else None)
    memory._use_default()
    assert memory._source == "pending"
    assert memory._allocate_once_torch_is_imported(0, 4096, 0) == 0  # torch not imported: cuforge's pool
    assert cuforge.get_memory_pool().source == "cuforge"

    torch, calls = fake_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    assert memory._allocate_once_torch_is_imported(0, 4096, 7) == 0x7000
    assert calls == ["init", ("alloc", 4096, 7)]
    pool = cuforge.get_memory_pool()
    assert pool.source == "torch" and pool.pool_size() == 1 << 20
    memory._torch_free(0x7000, 0, 4096, 7)
    assert calls[-1] == ("delete", 0x7000)


def test_torch_imported_at_cuforges_import_is_asked_nothing_until_a_workspace(monkeypatch):
    torch, calls = fake_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    memory._use_default()
    assert memory._source == "pending" and calls == []  # CUDA untouched: the process may yet fork
    assert cuforge.get_memory_pool().source == "torch"
    assert calls == ["init"]


def test_torch_without_cuda_leaves_workspaces_to_cuforge(monkeypatch):
    torch, calls = fake_torch(cuda_available=False)
    monkeypatch.setitem(sys.modules, "torch", torch)
    memory._use_default()
    assert memory._allocate_once_torch_is_imported(0, 4096, 0) == 0
    assert cuforge.get_memory_pool().source == "cuforge"
    assert calls == []


def test_use_rmm_without_rmm_names_the_package(monkeypatch):
    without_torch(monkeypatch)
    monkeypatch.setitem(sys.modules, "rmm", None)  # what an import of a missing package finds
    with pytest.raises(cuforge.ToolchainError, match=r"use_rmm: RMM \(the Python package 'rmm'.*is not installed"):
        cuforge.use_rmm()
    assert cuforge.get_memory_pool().source == "cuforge"


@pytest.mark.parametrize("kwargs, message", [
    (dict(initial=-256), r"expected initial to be a number of bytes below 2\*\*64, a multiple of 256.*got -256"),
    (dict(initial=1000), "expected initial .*got 1000"),
    (dict(maximum=2.0**32), r"expected maximum .*got 4294967296\.0"),
    (dict(maximum=True), "expected maximum .*got True"),
    (dict(initial_pool_size="1GiB"), "expected initial .*got '1GiB'"),
    (dict(initial=2**30, initial_pool_size=2**30), "give initial or initial_pool_size, not both"),
    (dict(initial=2**31, maximum=2**30), r"expected initial \(2147483648 bytes\) to be at most maximum \(1073741824"),
    (dict(initial_pool_size=2**33), r"expected initial \(8589934592 bytes\) to be at most maximum \(4294967296"),
])
def test_use_rmm_checks_its_sizes_before_looking_for_rmm(monkeypatch, kwargs, message):
    monkeypatch.setitem(sys.modules, "rmm", None)
    with pytest.raises(cuforge.InvalidArgumentError, match="use_rmm: " + message):
        cuforge.use_rmm(**kwargs)


def test_use_rmm_takes_the_seeds_names_and_makes_a_pool_per_device_at_its_first_workspace(monkeypatch):
    log = fake_rmm(monkeypatch)
    pool = cuforge.use_rmm(initial_pool_size=2**20, maximum_pool_size=2**24)
    assert pool.source == "rmm" and pool.pool_size() == 0
    assert log == []  # no pool, and no GPU touched, before a workspace asks for one
    pools = memory._rmm_pools
    assert pools.allocate(1, 4096, 0x55) == 0x10000
    assert pools.allocate(1, 512, 0x66) == 0x10000
    pools.free(0x10000, 1, 4096, 0x55)
    assert log == [("pool", 2**20, 2**24), ("resource", 1), ("allocate", 4096, 0x55), ("allocate", 512, 0x66),
                   ("deallocate", 0x10000, 4096, 0x55)]
    assert cuforge.get_memory_pool().pool_size() == 2**20


def test_use_rmm_defaults_and_positional_sizes(monkeypatch):
    log = fake_rmm(monkeypatch)
    cuforge.use_rmm()
    memory._rmm_pools.allocate(0, 256, 0)
    assert log[0] == ("pool", 2**30, 2**32)
    cuforge.use_rmm(2**28, 2**29)
    memory._rmm_pools.allocate(0, 256, 0)
    assert ("pool", 2**28, 2**29) in log
    cuforge.use_rmm(maximum=2**29)  # the default initial 1 GiB capped by a smaller maximum (it was refused)
    memory._rmm_pools.allocate(0, 256, 0)
    assert log[-3] == ("pool", 2**29, 2**29)


def test_threads_racing_a_devices_first_workspace_make_one_rmm_pool(monkeypatch):
    import threading
    import time

    log = fake_rmm(monkeypatch)
    slow = sys.modules["rmm"].mr.PoolMemoryResource

    def pool_slowly(*args, **kwargs):  # a pool takes a while to make: the window two threads once both entered
        time.sleep(0.05)
        return slow(*args, **kwargs)

    sys.modules["rmm"].mr.PoolMemoryResource = pool_slowly
    cuforge.use_rmm()
    threads = [threading.Thread(target=memory._rmm_pools.allocate, args=(0, 256, 0)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [e for e in log if e[0] == "pool"] == [("pool", 2**30, 2**32)]
    assert sum(e[0] == "allocate" for e in log) == 4


def test_use_rmm_replaces_torch(monkeypatch):
    torch, _ = fake_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    memory._use_default()
    assert cuforge.get_memory_pool().source == "torch"
    fake_rmm(monkeypatch)
    cuforge.use_rmm()
    assert cuforge.get_memory_pool().source == "rmm"


def test_an_rmm_before_the_stream_protocol_takes_streams_through_cupy(monkeypatch):
    log = fake_rmm(monkeypatch, stream_protocol=False)
    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(ExternalStream=lambda handle: types.SimpleNamespace(ptr=handle))
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    cuforge.use_rmm()
    memory._rmm_pools.allocate(0, 256, 0x77)
    assert log[-1] == ("allocate", 256, 0x77)


def test_an_rmm_before_the_stream_protocol_without_cupy_is_refused_at_use_rmm(monkeypatch):
    fake_rmm(monkeypatch, stream_protocol=False)
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(cuforge.Error, match=r"RMM 25\.12\.00 cannot take a CUDA stream by its handle.*CuPy"):
        cuforge.use_rmm()
    assert memory._rmm_pools is None
