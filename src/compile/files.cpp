#include "files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "cuforge/core/error.hpp"

namespace cuforge::compile {
namespace fs = std::filesystem;

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

}  // namespace

std::string read_file(const fs::path& path, Trust trust) {
  // Opened without blocking and checked through the descriptor: opening a FIFO to read waits for a
  // writer, and a check made before the open could be of another file.
  const bool own = trust == Trust::own_files;
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | (own ? O_NOFOLLOW : 0));
  if (fd < 0)
    throw CacheError(fmt::format("cannot read {}: {}", path.string(),
                                 own && errno == ELOOP ? "it is a symbolic link" : std::strerror(errno)));
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0)
    why = std::strerror(errno);
  else if (own && st.st_uid != ::geteuid())
    why = fmt::format("it belongs to another user (uid {})", st.st_uid);
  else if (own && (st.st_mode & 0022))
    why = "it is writable by other users";
  else if (!S_ISREG(st.st_mode))
    why = fmt::format("it is {}, not a regular file", kind_of(st.st_mode));
  else if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)  // a regular file: read it blocking
    why = std::strerror(errno);  // (network file systems may honour O_NONBLOCK there, with EAGAIN)
  else if (uint64_t(st.st_size) > kMaxFileBytes)
    why = fmt::format("it holds {} bytes, more than the {} MiB a file of the cache may", st.st_size, kMaxFileBytes >> 20);
  std::string text;
  if (why.empty()) {
    text.reserve(size_t(st.st_size));
    // Read to its end, or to one byte past the limit: a file that grows meanwhile is caught too.
    char buffer[1 << 16];
    while (text.size() <= kMaxFileBytes) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) why = std::strerror(errno);
      if (n <= 0) break;
      text.append(buffer, size_t(n));
    }
    if (text.size() > kMaxFileBytes)
      why = fmt::format("it holds more than the {} MiB a file of the cache may", kMaxFileBytes >> 20);
  }
  ::close(fd);
  if (!why.empty()) throw CacheError(fmt::format("cannot read {}: {}", path.string(), why));
  return text;
}

std::string read_log(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return "";
  auto read = [&](std::streamoff from, std::streamoff count) {
    std::string part(size_t(count), '\0');
    in.seekg(from);
    in.read(part.data(), count);
    part.resize(size_t(std::max<std::streamsize>(in.gcount(), 0)));
    return part;
  };
  if (uint64_t(size) <= kLogShownBytes) return read(0, size);
  const std::streamoff half = std::streamoff(kLogShownBytes / 2);
  return fmt::format("{}\n[... {} bytes of the log left out here ...]\n{}", read(0, half), size - 2 * half,
                     read(size - half, half));
}

std::string read_file_or_empty(const fs::path& path) {
  try {
    return read_file(path);
  } catch (const CacheError&) {
    return "";
  }
}

namespace {

// Nesting as nlohmann's SAX parser reports it, the parse stopped past kMaxJsonDepth: a pass of its own, as
// json::parse with a callback (the DOM callback parser) scans an object's members each time one of them
// ends, quadratic in a record of many entries (16,000 took 2 s, 200,000 minutes).
struct DepthCheck final : nlohmann::json_sax<nlohmann::json> {
  int depth = 0;
  bool too_deep = false;

  bool open() {
    too_deep = ++depth > kMaxJsonDepth;
    return !too_deep;
  }
  bool start_object(std::size_t) override { return open(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_object() override { return --depth, true; }
  bool end_array() override { return --depth, true; }
  bool key(string_t&) override { return true; }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

}  // namespace

std::string shell_special(const fs::path& path) {
  const std::string& text = path.native();
  const size_t at = text.find_first_of("$`\\\"\n");
  if (at == std::string::npos) return "";
  return text[at] == '\n' ? "\\n" : std::string(1, text[at]);
}

nlohmann::json read_json(const fs::path& path, Trust trust) {
  const std::string text = read_file(path, trust);
  // Refused before a deep document exists to be copied or destroyed.
  DepthCheck depth;
  if (!nlohmann::json::sax_parse(text, &depth) && depth.too_deep)
    throw CacheError(fmt::format("{} nests deeper than {} levels", path.string(), kMaxJsonDepth));
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw CacheError(fmt::format("{} is not JSON: {}", path.string(), e.what()));
  }
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
