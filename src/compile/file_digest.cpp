#include "file_digest.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <fstream>
#include <memory>
#include <vector>

namespace cuforge::compile {
namespace {

std::string hex(XXH128_hash_t h) { return fmt::format("{:016x}{:016x}", h.high64, h.low64); }

struct StateDeleter {
  void operator()(XXH3_state_t* s) const { XXH3_freeState(s); }
};

}  // namespace

std::optional<FileDigest> file_digest(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::unique_ptr<XXH3_state_t, StateDeleter> state(XXH3_createState());
  XXH3_128bits_reset(state.get());
  std::vector<char> buffer(1 << 20);
  FileDigest d;
  while (in) {
    in.read(buffer.data(), std::streamsize(buffer.size()));
    auto got = in.gcount();
    if (got <= 0) break;
    XXH3_128bits_update(state.get(), buffer.data(), size_t(got));
    d.bytes += uint64_t(got);
  }
  d.xxh3 = hex(XXH3_128bits_digest(state.get()));
  return d;
}

std::string digest_of(std::initializer_list<std::string_view> parts) {
  std::unique_ptr<XXH3_state_t, StateDeleter> state(XXH3_createState());
  XXH3_128bits_reset(state.get());
  for (auto part : parts) {
    uint64_t n = part.size();
    XXH3_128bits_update(state.get(), &n, sizeof n);
    XXH3_128bits_update(state.get(), part.data(), part.size());
  }
  return hex(XXH3_128bits_digest(state.get()));
}

}  // namespace cuforge::compile
