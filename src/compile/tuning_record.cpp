#include "cuforge/compile/tuning_record.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "cuforge/core/error.hpp"
#include "cuforge/core/log.hpp"
#include "files.hpp"

namespace cuforge::compile {
namespace fs = std::filesystem;
namespace {

constexpr int kFormat = 1;
using Json = nlohmann::json;

// The record's entries; an empty object for no record, and for an unreadable one (reported).
Json read_entries(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return Json::object();
  try {
    // As the kernel entries: a record that another user could have placed or changed chooses no kernels.
    const Json record = read_json(path, Trust::own_files);
    if (record.value("format", 0) == kFormat && record.contains("entries") && record["entries"].is_object())
      return record.at("entries");
    log(LogLevel::warning, fmt::format("the tuning record {} is of another format: ignored (the next measurement "
                                       "rewrites it)", path.string()));
  } catch (const std::exception& e) {
    log(LogLevel::warning, fmt::format("the tuning record {} is unreadable ({}): ignored (the next measurement "
                                       "rewrites it)", path.string(), e.what()));
  }
  return Json::object();
}

// An entry as store() writes one, else nullopt: every field of its type and in range (a count read from
// 1e300 would be undefined behaviour, a time of -1e308 no time), `measured` an object of times.
std::optional<TunedKernel> from_json(const Json& j) {
  const auto count = [&](const char* field, int64_t low) -> std::optional<int> {
    const Json& v = j.at(field);
    if (!v.is_number_integer() || v.get<int64_t>() < low || v.get<int64_t>() > std::numeric_limits<int>::max())
      return std::nullopt;
    return int(v.get<int64_t>());
  };
  const auto time = [](const Json& v) { return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0; };
  try {
    if (!j.is_object() || !j.at("kernel").is_string() || !j.at("measured").is_object() || !time(j.at("us")))
      return std::nullopt;
    TunedKernel t;
    t.kernel = j.at("kernel").get<std::string>();
    const auto splits = count("splits", 1);
    if (!splits) return std::nullopt;
    t.splits = *splits;
    t.decomposition = parse<Decomposition>(j.at("decomposition").get<std::string>());
    t.microseconds = j.at("us").get<double>();
    for (const auto& [name, us] : j.at("measured").items()) {
      if (!time(us)) return std::nullopt;
      t.measured.emplace_back(name, us.get<double>());
    }
    const auto candidates = j.contains("candidates") ? count("candidates", 0) : std::optional<int>(int(t.measured.size()));
    if (!candidates) return std::nullopt;
    t.candidates = *candidates;
    return t;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Json to_json(const TunedKernel& t) {
  Json measured = Json::object();
  for (const auto& [name, us] : t.measured) measured[name] = us;
  return {{"kernel", t.kernel}, {"splits", t.splits}, {"decomposition", to_string(t.decomposition)},
          {"us", t.microseconds}, {"measured", measured}, {"candidates", t.candidates}};
}

}  // namespace

TuningRecord::TuningRecord(const KernelCache& cache) : cache_(cache) {}

fs::path TuningRecord::path() const { return cache_.root() / "tuning" / "record.json"; }

std::optional<TunedKernel> TuningRecord::find(const std::string& key) const {
  try {
    if (!cache_.holds("tuning")) return std::nullopt;  // none yet
  } catch (const CacheError& e) {  // a tuning/ that is not the cache's own: ignored, as an unreadable record is
    log(LogLevel::warning, fmt::format("the tuning record is not used: {}", e.what()));
    return std::nullopt;
  }
  const Json entries = read_entries(path());
  auto it = entries.find(key);
  if (it == entries.end()) return std::nullopt;
  auto tuned = from_json(*it);
  if (!tuned) log(LogLevel::warning, fmt::format("the tuning record's entry for {} is malformed: ignored", key));
  return tuned;
}

void TuningRecord::store(const std::string& key, const TunedKernel& tuned) const {
  // What a C++ caller stores is checked before the record is touched: an entry that would not read back
  // (a time that is not a finite number) or not write (text that is not UTF-8, nlohmann's type_error).
  auto check_time = [&](const std::string& what, double us) {
    if (!std::isfinite(us) || us < 0)
      throw InvalidArgumentError(
          fmt::format("tuning record: '{}' measured {} us for {}; expected a time", key, us, what));
  };
  check_time(tuned.kernel, tuned.microseconds);
  for (const auto& [candidate, us] : tuned.measured) check_time(candidate, us);
  if (tuned.splits < 1)
    throw InvalidArgumentError(fmt::format("tuning record: '{}' stores {} splits of K for {}; expected 1 or more", key,
                                           tuned.splits, tuned.kernel));
  if (tuned.candidates < 0)
    throw InvalidArgumentError(fmt::format("tuning record: '{}' stores {} candidates timed; expected 0 or more", key,
                                           tuned.candidates));
  try {
    const Json entry = to_json(tuned);
    (void)Json{{key, entry}}.dump();
    if (!from_json(entry))  // what else find() would refuse: a decomposition that is none of cuforge's
      throw InvalidArgumentError(fmt::format("tuning record: the entry for '{}' would not read back (decomposition {})",
                                             key, int(tuned.decomposition)));
  } catch (const Json::exception& e) {
    throw InvalidArgumentError(fmt::format("tuning record: the entry for '{}' cannot be written: {}", key, e.what()));
  }
  const fs::path dir = cache_.directory("tuning");
  const int lock = lock_file(cache_.directory("locks") / "tuning.lock", LockMode::exclusive);
  try {
    Json entries = read_entries(path());
    entries[key] = to_json(tuned);
    const fs::path staged = dir / fmt::format("record.json.{}", ::getpid());
    std::error_code ec, ignored;
    try {
      write_file_durably(staged, Json{{"format", kFormat}, {"entries", entries}}.dump(1));
    } catch (...) {
      fs::remove(staged, ignored);  // no part-written copy left beside the record
      throw;
    }
    fs::rename(staged, path(), ec);
    if (ec) {
      fs::remove(staged, ignored);
      throw CacheError(fmt::format("cannot write the tuning record {}: {}", path().string(), ec.message()));
    }
    fsync_path(dir);
  } catch (...) {
    unlock_file(lock);
    throw;
  }
  unlock_file(lock);
}

std::vector<std::pair<std::string, TunedKernel>> TuningRecord::entries() const {
  std::vector<std::pair<std::string, TunedKernel>> out;
  // As the cache's own listings: an unusable cache is an error, not an empty record.
  if (!cache_.check_root(/*create=*/false) || !cache_.holds("tuning")) return out;
  const Json entries = read_entries(path());
  for (const auto& [key, value] : entries.items()) {
    if (auto tuned = from_json(value))
      out.emplace_back(key, *tuned);
    else
      log(LogLevel::warning, fmt::format("the tuning record's entry for {} is malformed: ignored", key));
  }
  return out;
}

size_t TuningRecord::clear() const {
  // An unusable cache is an error, not a record of nothing cleared; never a record.json through a symbolic link.
  if (!cache_.check_root(/*create=*/false) || !cache_.holds("tuning")) return 0;
  const int lock = lock_file(cache_.directory("locks") / "tuning.lock", LockMode::exclusive);
  const Json entries = read_entries(path());  // the measured choices it held: its well-formed entries, as listed
  const size_t held = size_t(std::count_if(entries.begin(), entries.end(), [](const Json& e) { return bool(from_json(e)); }));
  std::error_code ec;
  fs::remove(path(), ec);
  unlock_file(lock);
  if (ec) throw CacheError(fmt::format("cannot remove the tuning record {}: {}", path().string(), ec.message()));
  return held;
}

}  // namespace cuforge::compile
