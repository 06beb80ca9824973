"""Tests marked `gpu` need a CUDA GPU; without one they are skipped, and say why."""

import pytest


def _gpu_missing_reason():
    try:
        import cuforge
    except ImportError as e:  # pragma: no cover - the package must be installed to test it
        return f"cuforge is not importable: {e}"
    if cuforge.device_count() == 0:
        return "no CUDA GPU on this machine (cudaGetDeviceCount found none): GPU test not run"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _gpu_missing_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
