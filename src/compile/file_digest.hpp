// Size and XXH3-128 checksum of a file's contents: the cache's guard against truncated or
// modified libraries.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace cuforge::compile {

struct FileDigest {
  uint64_t bytes = 0;
  std::string xxh3;  // 32 hex digits
};

std::optional<FileDigest> file_digest(const std::filesystem::path& path);

// XXH3-128 of a sequence of byte strings, each length-prefixed so that boundaries matter.
std::string digest_of(std::initializer_list<std::string_view> parts);

}  // namespace cuforge::compile
