#include "files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cuforge/core/error.hpp"

namespace cuforge::compile {
namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CacheError(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string read_file_or_empty(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  if (in) ss << in.rdbuf();
  return ss.str();
}

void write_file_durably(const fs::path& path, std::string_view text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw CacheError(fmt::format("cannot create {}: {}", path.string(), std::strerror(errno)));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      throw CacheError(fmt::format("cannot write {}: {}{}", path.string(), std::strerror(err),
                                   err == ENOSPC ? " (the disk is full: free space or set CUFORGE_CACHE_DIR)" : ""));
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0)
    throw CacheError(fmt::format("cannot write {} to the disk: {}", path.string(), std::strerror(errno)));
}

void fsync_path(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

int lock_file(const fs::path& path, LockMode mode, bool wait) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) throw CacheError(fmt::format("cannot open the lock file {}: {}", path.string(), std::strerror(errno)));
  int operation = (mode == LockMode::exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB);
  while (::flock(fd, operation) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) return -1;
    throw CacheError(fmt::format("cannot lock {}: {}", path.string(), std::strerror(err)));
  }
  return fd;
}

void unlock_file(int fd) {
  if (fd >= 0) ::close(fd);  // closing the descriptor releases its flock
}

}  // namespace cuforge::compile
