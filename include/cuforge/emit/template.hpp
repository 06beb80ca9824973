// Fills the named holes of a source template: ${name} is replaced by its value. A hole with no
// value, or a value with no hole, is a programming error and throws.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace cuforge::emit {

using Holes = std::map<std::string, std::string, std::less<>>;

std::string render(std::string_view text, const Holes& holes);

}  // namespace cuforge::emit
