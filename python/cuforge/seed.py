"""The CUTLASS Python interface's module paths whose names cuforge keeps in its own modules, registered under
cuforge (and in sys.modules, so that ``import cuforge.utils.datatypes`` works as the interface's import does):

- ``backend.utils.device``: device_cc and device_sm_count (the interface's notebooks import device_cc there);
- ``utils.datatypes``: its conversions between element types (cuforge.dtypes);
- ``op.gemm_grouped``, ``op.conv`` and ``op.op``: the modules of GroupedGemm, Conv2d and OperationBase.
"""

from __future__ import annotations

import sys
import types

from . import dtypes, environment
from .op import conv2d, grouped_gemm, plan


def _alias(path: str, module: types.ModuleType) -> None:
    """``module`` as cuforge.<path>, the packages on the way made where cuforge has none."""
    parent = sys.modules[__name__.rpartition(".")[0]]
    *packages, last = path.split(".")
    for part in packages:
        if not hasattr(parent, part):
            child = types.ModuleType(f"{parent.__name__}.{part}")
            sys.modules[child.__name__] = child
            setattr(parent, part, child)
        parent = getattr(parent, part)
    sys.modules[f"{parent.__name__}.{last}"] = module
    setattr(parent, last, module)


def _names(path: str, **names) -> types.ModuleType:
    module = types.ModuleType(f"{__name__.rpartition('.')[0]}.{path}")
    module.__dict__.update(names)
    return module


def register() -> None:
    """Registers the paths above (once cuforge's own modules are imported)."""
    _alias("backend.utils.device", _names("backend.utils.device", device_cc=environment.device_cc,
                                          device_sm_count=environment.device_sm_count))
    _alias("utils.datatypes", dtypes)
    _alias("op.gemm_grouped", grouped_gemm)
    _alias("op.conv", conv2d)
    _alias("op.op", _names("op.op", OperationBase=plan.Plan))
