// The cache's files: read whole, written durably (fsync before the rename that publishes them),
// and locked with flock (released by the kernel when a process dies, so a dead builder never
// holds a key).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace cuforge::compile {

// The file's bytes; throws CacheError when it cannot be read.
std::string read_file(const std::filesystem::path& path);
// The file's bytes, or "" when it cannot be read (logs that are best-effort).
std::string read_file_or_empty(const std::filesystem::path& path);

// Writes the file (mode 0600) and fsyncs it; throws CacheError saying what failed (a full disk...).
void write_file_durably(const std::filesystem::path& path, std::string_view text);
void fsync_path(const std::filesystem::path& path);  // a file or a directory; best-effort

enum class LockMode { exclusive, shared };
// Opens (creating, 0600) and flocks the file; blocks unless `wait` is false, then returns -1 when
// it is held elsewhere. Returns the descriptor to pass to unlock_file. Throws CacheError.
int lock_file(const std::filesystem::path& path, LockMode mode, bool wait = true);
void unlock_file(int fd);

}  // namespace cuforge::compile
