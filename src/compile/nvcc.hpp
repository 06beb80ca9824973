// One nvcc pass, its host and device halves run at once (see nvcc.cpp).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace cuforge::compile {

// Builds what `argv` (an nvcc command line) builds, as nvcc would; intermediate files go to
// steps_dir, the output of the steps to log. Returns nvcc's exit status. Where `stop` (polled while the steps
// run) says so, kills them and throws Interrupted.
int run_nvcc(const std::vector<std::string>& argv, const std::filesystem::path& steps_dir, const std::string& module_id,
             const std::filesystem::path& log, const std::function<bool()>& stop);

}  // namespace cuforge::compile
