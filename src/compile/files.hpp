// The cache's files: read whole, written durably (fsync before the rename that publishes them),
// and locked with flock (released by the kernel when a process dies, so a dead builder never
// holds a key).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace cuforge::compile {

// The most a file read whole may hold: far above any entry.json, tuning record, digest or log, and
// a bound on what a file replaced by a link to /dev/zero can make a reader take in.
inline constexpr size_t kMaxFileBytes = size_t(64) << 20;
// The deepest nesting a JSON file of the cache may have (its own are two or three levels deep):
// nlohmann's copies and destructors recurse once per level, so a deeper file would overflow the stack.
inline constexpr int kMaxJsonDepth = 32;

// nvcc runs its steps through /bin/sh, each path in double quotes, which leave $, ` and \ live (and a " or a
// newline ends the quoting or the command): a path holding one would run as shell code
// (CUFORGE_CACHE_DIR='/tmp/x$(touch f)' ran touch). The first such character of `path` as an error message shows
// it ("\\n" for a newline), else "".
std::string shell_special(const std::filesystem::path& path);
inline constexpr const char* kShellSpecialCharacters = "$, `, \\, \" or newlines";

// Whose files a reader takes: any the path leads to, or only this user's own (no link, not writable by others:
// a file another user could have placed or changed decides nothing).
enum class Trust { any_file, own_files };

// The file's bytes; throws CacheError when it cannot be read, is not a regular file once links are
// followed (a FIFO would block the reader, a device never end), holds more than kMaxFileBytes, or is not
// `trust`'s.
std::string read_file(const std::filesystem::path& path, Trust trust = Trust::any_file);
// The file's bytes, or "" when read_file would throw (logs that are best-effort).
std::string read_file_or_empty(const std::filesystem::path& path);
// A log for a message: all of it where it holds at most kLogShownBytes, else its first and last halves of that
// around a line saying how much is left out; "" where it cannot be read (an unreadable log says nothing).
std::string read_log(const std::filesystem::path& path);
inline constexpr uint64_t kLogShownBytes = uint64_t(1) << 20;
// The file's JSON document, read by read_file; throws CacheError when it is not JSON or nests
// deeper than kMaxJsonDepth.
nlohmann::json read_json(const std::filesystem::path& path, Trust trust = Trust::any_file);

// Writes the file (mode 0600) and fsyncs it; throws CacheError saying what failed (a full disk...).
void write_file_durably(const std::filesystem::path& path, std::string_view text);
void fsync_path(const std::filesystem::path& path);  // a file or a directory; best-effort

enum class LockMode { exclusive, shared };
// Opens (creating, 0600) and flocks the file; blocks unless `wait` is false, then returns -1 when
// it is held elsewhere. Returns the descriptor to pass to unlock_file. Throws CacheError.
int lock_file(const std::filesystem::path& path, LockMode mode, bool wait = true);
void unlock_file(int fd);

}  // namespace cuforge::compile
