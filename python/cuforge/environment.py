"""The machine cuforge builds and runs on, as the CUTLASS Python interface reports it: the CUDA
toolkit, the driver, the GPU, and the CUDA versions of the array libraries in the process."""

from __future__ import annotations

import os
import sys

from . import _core
from ._core import ToolchainError


def cuda_install_path() -> str:
    """The CUDA toolkit cuforge compiles with (CUDA_INSTALL_PATH, else the first nvcc on PATH, then
    /usr/local/cuda). Raises ToolchainError when there is none."""
    nvcc = _core.toolchain()["nvcc"]
    return os.path.dirname(os.path.dirname(nvcc))


def nvcc_version() -> str:
    """The toolkit's CUDA release, e.g. '13.0', as the CUTLASS Python interface's (`float()` takes it; the
    toolkit's full version, '13.0.88', is ``cuforge._core.toolchain()["cuda_version"]``)."""
    return ".".join(_core.toolchain()["cuda_version"].split(".")[:2])


def device_id() -> int:
    """The GPU cuforge runs on: CUTLASS_CUDA_DEVICE_ID, else the current device."""
    return _core.device_id()


def device_cc(device: int = -1) -> int:
    """The compute capability of a GPU (by default that one), as major * 10 + minor (90 on an H100 or H200)."""
    return _core.device_cc(_ordinal(device))


def device_sm_count(device: int = -1) -> int:
    """The streaming multiprocessors of a GPU (by default device_id()'s): 132 on an H100 SXM or H200."""
    return _core.device_sm_count(_ordinal(device))


def initialize_cuda_context() -> None:
    """What the CUTLASS Python interface did before its first kernel: checks the CUDA versions
    (check_cuda_versions()) and that device_id()'s GPU is there (its properties read). cuforge does both on its
    own at a plan's first run, and makes the GPU's context then; calling this first moves the checks, or the
    DeviceError of a machine without a GPU, to here."""
    check_cuda_versions()
    _core.device_cc(-1)


def _ordinal(device) -> int:
    """A device ordinal as the interface takes them: -1 (or any negative) for device_id()'s."""
    from .arguments import integer

    return min(max(integer(device, "device"), -1), 2**31 - 1)  # past int: no such device, as the core says


def _major_minor(version: str) -> tuple[int, int] | None:
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return None


def _array_library_versions() -> dict:
    """The CUDA each array library already imported was built for."""
    versions = {}
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch.version, "cuda", None):
        versions["torch"] = torch.version.cuda
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            v = cupy.cuda.runtime.runtimeGetVersion()
            versions["cupy"] = f"{v // 1000}.{v % 1000 // 10}"
        except Exception:  # noqa: BLE001 - a CuPy without a usable runtime reports nothing
            pass
    return versions


def check_cuda_versions() -> dict:
    """The CUDA versions in play: the toolkit's (nvcc), the driver's, and those the array libraries
    imported in this process were built for. Raises ToolchainError when the driver is older than the
    toolkit (kernels nvcc builds would not load). Array libraries on another CUDA release are fine:
    cuforge links the CUDA runtime statically and shares only the driver with them."""
    toolkit = nvcc_version()
    driver = _core.driver_cuda_version()
    versions = {"toolkit": toolkit, "driver": f"{driver // 1000}.{driver % 1000 // 10}" if driver else None,
                **_array_library_versions()}
    have = _major_minor(toolkit)
    if driver and have and (driver // 1000, driver % 1000 // 10) < have:
        raise ToolchainError(f"the CUDA driver supports CUDA {versions['driver']}, older than the toolkit's {toolkit} "
                             f"({cuda_install_path()}): kernels it builds would not load. Update the driver, or point "
                             f"CUDA_INSTALL_PATH at a toolkit of CUDA {versions['driver']} or older")
    return versions

