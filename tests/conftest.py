"""Tests marked `gpu` need a CUDA GPU; without one they are skipped, and say why."""

import pytest


def _gpu_missing_reason():
    try:
        import cuforge
    except ImportError as e:  # pragma: no cover - the package must be installed to test it
        return f"cuforge is not importable: {e}"
    if cuforge.device_count() == 0:
        driver = cuforge._core.driver_cuda_version()
        if driver == 0:
            return "no CUDA driver on this machine (so no GPU): GPU test not run"
        # A driver older than the CUDA runtime cuforge links makes cudaGetDeviceCount fail as if there were no
        # GPU: said here, not hidden behind "no GPU".
        return (f"the CUDA driver (CUDA {driver // 1000}.{driver % 1000 // 10}) lists no GPU cuforge's CUDA runtime "
                f"can use (none installed, or a driver older than the runtime): GPU test not run")
    return None


def pytest_collection_modifyitems(config, items):
    reason = _gpu_missing_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
