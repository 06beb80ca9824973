// cuforge: declare, compile (once, cached) and run CUTLASS kernels from C++.
#pragma once

#include "cuforge/compile/cache.hpp"
#include "cuforge/compile/compiler.hpp"
#include "cuforge/compile/toolchain.hpp"
#include "cuforge/core/error.hpp"
#include "cuforge/core/gemm_problem.hpp"
#include "cuforge/core/grouped_problem.hpp"
#include "cuforge/core/log.hpp"
#include "cuforge/core/tensor.hpp"
#include "cuforge/core/tile.hpp"
#include "cuforge/core/types.hpp"
#include "cuforge/library/catalog.hpp"
#include "cuforge/op/gemm.hpp"
#include "cuforge/op/grouped_gemm.hpp"
#include "cuforge/runtime/device.hpp"
#include "cuforge/runtime/device_buffer.hpp"
#include "cuforge/runtime/handle.hpp"
