// compile/tuning_record: the measured choices kept beside the kernels in the cache directory:
// store, find, list and clear; a corrupted record reported, ignored and rewritten; concurrent
// writers in separate processes losing no entry.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "cuforge/compile/cache.hpp"
#include "cuforge/compile/tuning_record.hpp"
#include "cuforge/core/log.hpp"
#include "files.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

namespace fs = std::filesystem;
using compile::KernelCache;
using compile::TuningRecord;
using test::TempDir;

class TuningRecordTest : public ::testing::Test {
 protected:
  TempDir tmp;
  KernelCache cache{tmp.path()};
};

TEST_F(TuningRecordTest, TuningRecordStoresFindsListsAndClears) {
  TuningRecord record(cache);
  EXPECT_FALSE(record.find("k1"));
  record.store("k1", {"kernel_a", 1, Decomposition::Heuristic, 12.5, {{"kernel_a x1", 12.5}, {"kernel_b x1", 14.0}}});
  record.store("k2", {"kernel_b", 4, Decomposition::SplitK, 30.0, {{"kernel_b x4", 30.0}}});
  record.store("k1", {"kernel_c", 1, Decomposition::StreamK, 11.0, {{"kernel_c x1", 11.0}}});  // replaces
  auto k1 = record.find("k1");
  ASSERT_TRUE(k1);
  EXPECT_EQ(k1->kernel, "kernel_c");
  EXPECT_EQ(k1->decomposition, Decomposition::StreamK);
  EXPECT_DOUBLE_EQ(k1->microseconds, 11.0);
  auto k2 = TuningRecord(KernelCache(tmp.path())).find("k2");  // what another process would read
  ASSERT_TRUE(k2);
  EXPECT_EQ(k2->splits, 4);
  ASSERT_EQ(k2->measured.size(), 1u);
  EXPECT_EQ(record.entries().size(), 2u);
  struct stat st {};
  ASSERT_EQ(::stat(record.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(record.clear(), 2u);
  EXPECT_FALSE(record.find("k2"));
}

// How many candidates a measurement tried travels with its entry (an autotune asking for more measures
// again); an entry written before it was kept reads as the candidates it timed.
TEST_F(TuningRecordTest, AnEntryKeepsHowManyCandidatesItsMeasurementTried) {
  TuningRecord record(cache);
  record.store("k1", {"kernel_a", 1, Decomposition::Heuristic, 12.5, {{"kernel_a x1", 12.5}}, 6});
  auto k1 = TuningRecord(KernelCache(tmp.path())).find("k1");
  ASSERT_TRUE(k1);
  EXPECT_EQ(k1->candidates, 6);
  EXPECT_EQ(k1->measured.size(), 1u);  // the other five failed to build or run
  test::write_file(record.path(),
                   R"({"format": 1, "entries": {"k2": {"kernel": "kernel_b", "splits": 1, "decomposition": "heuristic",
                       "us": 3.0, "measured": {"kernel_b x1": 3.0, "kernel_c x1": 4.0}}}})");
  auto k2 = record.find("k2");
  ASSERT_TRUE(k2);
  EXPECT_EQ(k2->candidates, 2);
}

// A C++ caller's entry that would not write (text that is not UTF-8: nlohmann's type_error escaped) or not read
// back (a time that is not a number) is refused, and the record keeps what it held.
TEST_F(TuningRecordTest, AnEntryThatCannotBeWrittenOrReadBackIsRefused) {
  TuningRecord record(cache);
  record.store("k1", {"kernel_a", 1, Decomposition::Heuristic, 12.5, {{"kernel_a x1", 12.5}}});
  EXPECT_THROW(record.store("bad\xff", {"kernel_a", 1, Decomposition::Heuristic, 1.0, {}}), InvalidArgumentError);
  EXPECT_THROW(record.store("k2", {"kernel_\xc3", 1, Decomposition::Heuristic, 1.0, {}}), InvalidArgumentError);
  EXPECT_THROW(record.store("k3", {"kernel_a", 1, Decomposition::Heuristic, std::nan(""), {}}), InvalidArgumentError);
  EXPECT_THROW(record.store("k4", {"kernel_a", 1, Decomposition::Heuristic, -1.0, {}}), InvalidArgumentError);
  EXPECT_THROW(record.store("k5", {"kernel_a", 1, Decomposition::Heuristic, 1.0, {{"kernel_a x1", std::nan("")}}}),
               InvalidArgumentError);
  // Entries that would store but never read back (each later read warned of a malformed entry).
  EXPECT_THROW(record.store("k6", {"kernel_a", 0, Decomposition::Heuristic, 1.0, {}}), InvalidArgumentError);
  EXPECT_THROW(record.store("k7", {"kernel_a", 1, Decomposition::Heuristic, 1.0, {}, -1}), InvalidArgumentError);
  EXPECT_THROW(record.store("k8", {"kernel_a", 1, static_cast<Decomposition>(42), 1.0, {}}), InvalidArgumentError);
  ASSERT_EQ(record.entries().size(), 1u);
  EXPECT_EQ(record.find("k1")->kernel, "kernel_a");
}

TEST_F(TuningRecordTest, ACorruptedTuningRecordIsReportedIgnoredAndRewritten) {
  TuningRecord record(cache);
  record.store("k1", {"kernel_a", 1, Decomposition::Heuristic, 12.5, {}});
  std::vector<std::string> warnings;
  set_log_sink([&](LogLevel level, const std::string& m) {
    if (level == LogLevel::warning) warnings.push_back(m);
  });
  for (const std::string& garbage : {std::string("{\"format\": 1, \"entries\": {\"k1\": "), std::string("[1, 2]"),
                                     std::string("{\"format\": 7, \"entries\": {}}")}) {
    test::write_file(record.path(), garbage);
    warnings.clear();
    EXPECT_FALSE(record.find("k1")) << garbage;
    ASSERT_EQ(warnings.size(), 1u) << garbage;
    EXPECT_NE(warnings[0].find("ignored"), std::string::npos) << warnings[0];
  }
  test::write_file(record.path(), "{\"format\": 1, \"entries\": {\"k1\": {\"kernel\": 5}}}");  // a bad entry
  EXPECT_FALSE(record.find("k1"));
  record.store("k2", {"kernel_b", 1, Decomposition::Heuristic, 3.0, {}});
  set_log_sink({});
  EXPECT_TRUE(record.find("k2"));
}

// A record nested far deeper than any record cuforge writes (nlohmann's copies recurse per level and
// overflowed the stack) is refused as it is parsed: reported, ignored, cleared and rewritten.
TEST_F(TuningRecordTest, ADeeplyNestedRecordIsReportedAndIgnored) {
  TuningRecord record(cache);
  constexpr int kDepth = 100000;
  std::string text = R"({"format": 1, "entries": {"k": )";
  for (int i = 0; i < kDepth; ++i) text += R"({"a": )";
  test::write_file(record.path(), text + "1" + std::string(kDepth, '}') + "}}");
  std::vector<std::string> warnings;
  set_log_sink([&](LogLevel level, const std::string& m) {
    if (level == LogLevel::warning) warnings.push_back(m);
  });
  EXPECT_FALSE(record.find("k"));
  EXPECT_TRUE(record.entries().empty());
  EXPECT_EQ(record.clear(), 0u);
  set_log_sink({});
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_TRUE(test::contains(warnings[0], "nests deeper than 32 levels")) << warnings[0];
  EXPECT_TRUE(test::contains(warnings[0], "ignored")) << warnings[0];
  EXPECT_FALSE(fs::exists(record.path()));
  record.store("k", {"kernel_a", 1, Decomposition::Heuristic, 3.0, {}});
  EXPECT_TRUE(record.find("k"));
}

// A record of many entries reads in time linear in its size (json::parse with a callback rescanned an
// object's members as each one ended: 16,000 entries took 2 s, 200,000 minutes).
TEST_F(TuningRecordTest, ALargeRecordReadsInLinearTime) {
  TuningRecord record(cache);
  constexpr int kEntries = 60000;
  std::string text = R"({"format": 1, "entries": {)";
  for (int i = 0; i < kEntries; ++i)
    text += fmt::format(R"({}"k{}": {{"kernel": "kernel_a", "splits": 1, "decomposition": "heuristic", "us": 3.0, )"
                        R"("measured": {{"kernel_a x1": 3.0}}, "candidates": 1}})",
                        i ? ", " : "", i);
  test::write_file(record.path(), text + "}}");
  const auto start = std::chrono::steady_clock::now();
  auto found = record.find("k59999");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(found);
  EXPECT_EQ(found->kernel, "kernel_a");
  EXPECT_LT(seconds, 3.0) << "60,000 entries (" << text.size() / 1000000 << " MB) took " << seconds << " s";
}

// A record that is not a regular file (a FIFO would block the reader, /dev/zero never end), or one
// far larger than any record, is reported and ignored, at once.
TEST_F(TuningRecordTest, ARecordThatIsNotARegularFileIsReportedAndIgnored) {
  TuningRecord record(cache);
  record.store("k", {"kernel_a", 1, Decomposition::Heuristic, 3.0, {}});
  std::vector<std::string> warnings;
  set_log_sink([&](LogLevel level, const std::string& m) {
    if (level == LogLevel::warning) warnings.push_back(m);
  });
  auto expect_ignored = [&](const std::string& says) {
    warnings.clear();
    auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(record.find("k")) << says;
    EXPECT_TRUE(record.entries().empty()) << says;
    EXPECT_LT(test::ms_since(start), 2000.0) << says;
    ASSERT_EQ(warnings.size(), 2u) << says;
    EXPECT_TRUE(test::contains(warnings[0], says)) << warnings[0];
    EXPECT_TRUE(test::contains(warnings[0], "unreadable")) << warnings[0];
  };
  fs::remove(record.path());
  ASSERT_EQ(::mkfifo(record.path().c_str(), 0600), 0);
  expect_ignored("a FIFO");
  EXPECT_EQ(record.clear(), 0u);
  // A link, to a device or to another record (anyone's: a fault probe's), is not followed, as kernel entries' are
  // not; nor is a record other users may write read.
  fs::create_symlink("/dev/zero", record.path());
  expect_ignored("a symbolic link");
  fs::remove(record.path());
  const fs::path elsewhere = record.path().parent_path() / "elsewhere.json";
  test::write_file(elsewhere, R"({"format": 1, "entries": {"k": {"kernel": "kernel_b", "splits": 1, )"
                              R"("decomposition": "heuristic", "us": 1.0, "measured": {}}}})");
  fs::create_symlink(elsewhere, record.path());
  expect_ignored("a symbolic link");
  fs::remove(record.path());
  fs::rename(elsewhere, record.path());
  ASSERT_TRUE(record.find("k"));  // the same file, in place, is a record
  fs::permissions(record.path(), fs::perms::others_write, fs::perm_options::add);
  expect_ignored("writable by other users");
  fs::remove(record.path());
  test::write_file(record.path(), "");
  fs::resize_file(record.path(), compile::kMaxFileBytes + 1);  // sparse: nothing is written
  expect_ignored("more than the 64 MiB");
  set_log_sink({});
  record.store("k", {"kernel_a", 1, Decomposition::Heuristic, 3.0, {}});  // rewritten whole, a regular file again
  EXPECT_TRUE(record.find("k"));
}

// Entries of the wrong types or out of range are ignored, each with a warning, in a listing as in a lookup: a
// count of 1e300 was converted to int (undefined behaviour; `cuforge cache tuning` showed x-2147483648), a time
// of -1e308 or an array of measurements shown as they were, and other malformed entries dropped unsaid.
TEST_F(TuningRecordTest, AMalformedEntryIsIgnoredWithAWarning) {
  TuningRecord record(cache);
  record.store("good", {"kernel_a", 1, Decomposition::Heuristic, 3.0, {{"kernel_a x1", 3.0}}});
  const std::string good = R"("kernel": "k", "splits": 1, "decomposition": "heuristic", "us": 2.0, "measured": {"k x1": 2.0})";
  std::string entries = "\"good\": {" + good + "}";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"huge_splits", R"("kernel": "k", "splits": 1e300, "decomposition": "heuristic", "us": 2.0, "measured": {})"},
      {"zero_splits", R"("kernel": "k", "splits": 0, "decomposition": "heuristic", "us": 2.0, "measured": {})"},
      {"negative_time", R"("kernel": "k", "splits": 1, "decomposition": "heuristic", "us": -1e308, "measured": {})"},
      {"text_time", R"("kernel": "k", "splits": 1, "decomposition": "heuristic", "us": "nan", "measured": {})"},
      {"listed_times", R"("kernel": "k", "splits": 1, "decomposition": "heuristic", "us": 2.0, "measured": [1, 2])"},
      {"bad_measure", R"("kernel": "k", "splits": 1, "decomposition": "heuristic", "us": 2.0, "measured": {"k": -3})"},
      {"negative_count", R"("kernel": "k", "splits": 1, "decomposition": "heuristic", "us": 2.0, "measured": {}, "candidates": -9)"},
      {"unknown_split", R"("kernel": "k", "splits": 1, "decomposition": "sideways", "us": 2.0, "measured": {})"}};
  for (const auto& [key, body] : bad) entries += ", \"" + key + "\": {" + body + "}";
  test::write_file(record.path(), "{\"format\": 1, \"entries\": {" + entries + "}}");
  std::vector<std::string> warnings;
  set_log_sink([&](LogLevel level, const std::string& m) {
    if (level == LogLevel::warning) warnings.push_back(m);
  });
  const auto listed = record.entries();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].first, "good");
  EXPECT_EQ(warnings.size(), bad.size());
  for (const auto& [key, body] : bad) {
    warnings.clear();
    EXPECT_FALSE(record.find(key)) << key;
    ASSERT_EQ(warnings.size(), 1u) << key;
    EXPECT_TRUE(test::contains(warnings[0], "entry for " + key + " is malformed")) << warnings[0];
  }
  set_log_sink({});
  EXPECT_EQ(record.clear(), 1u) << "the measured choices it held, as listed";
}

// A warning quotes a malformed entry's key with its control characters escaped (an ESC from the file cleared
// the terminal of a process that printed it): core's log() makes every message printable, its lines kept.
TEST_F(TuningRecordTest, AWarningEscapesTheControlCharactersOfTheKeyItQuotes) {
  TuningRecord record(cache);
  test::write_file(record.path(), R"({"format": 1, "entries": {"esc\u001b[2J\n": {"kernel": 7}}})");
  std::vector<std::string> warnings;
  set_log_sink([&](LogLevel level, const std::string& m) {
    if (level == LogLevel::warning) warnings.push_back(m);
  });
  EXPECT_FALSE(record.find("esc\x1b[2J\n"));
  set_log_sink({});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(test::contains(warnings[0], "entry for esc\\x1b[2J\n is malformed")) << warnings[0];
}

// A tuning/ that is a symbolic link is refused: clearing the record removed a record.json wherever it pointed,
// and listing showed that file as the cache's record. A lookup (every selection's) ignores it with a warning,
// as it does an unreadable record, rather than failing the selection.
TEST_F(TuningRecordTest, ATuningDirectoryThatIsALinkIsRefusedAndItsTargetKept) {
  TempDir outside;
  test::write_file(outside / "record.json",
                   R"({"format": 1, "entries": {"k": {"kernel": "k", "splits": 1, "decomposition": "heuristic", )"
                   R"("us": 2.0, "measured": {}}}})");
  cache.check_root();
  fs::create_directory_symlink(outside.path(), cache.root() / "tuning");
  TuningRecord record(cache);
  for (const std::string& error : {test::message_of<CacheError>([&] { record.clear(); }),
                                   test::message_of<CacheError>([&] { record.entries(); })})
    EXPECT_TRUE(test::contains(error, "tuning is a symbolic link")) << error;
  std::vector<std::string> warnings;
  set_log_sink([&](LogLevel level, const std::string& m) {
    if (level == LogLevel::warning) warnings.push_back(m);
  });
  EXPECT_FALSE(record.find("k")) << "the linked record's entry";
  set_log_sink({});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(test::contains(warnings[0], "the tuning record is not used")) << warnings[0];
  EXPECT_TRUE(test::contains(warnings[0], "tuning is a symbolic link")) << warnings[0];
  EXPECT_TRUE(fs::exists(outside / "record.json"));
}

// A cache root that is no directory makes clearing the record an error, as listing it is (`cuforge cache
// clear-tuning` said "removed 0 measured choices").
TEST_F(TuningRecordTest, ClearingInAnUnusableCacheIsAnError) {
  test::write_file(tmp / "a-file", "x");
  KernelCache file_root(tmp / "a-file");
  EXPECT_TRUE(test::contains(test::message_of<CacheError>([&] { TuningRecord(file_root).clear(); }), "unusable"));
  EXPECT_TRUE(test::contains(test::message_of<CacheError>([&] { TuningRecord(file_root).entries(); }), "unusable"));
}

TEST_F(TuningRecordTest, ConcurrentTuningRecordWritersLoseNoEntry) {
  constexpr int kWriters = 6, kEach = 20;
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = ::fork();
    if (pid == 0) {
      TuningRecord record(cache);
      for (int i = 0; i < kEach; ++i)
        record.store("writer" + std::to_string(w) + "/" + std::to_string(i),
                     {"kernel", 1, Decomposition::Heuristic, double(i), {}});
      ::_exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(TuningRecord(cache).entries().size(), size_t(kWriters * kEach));
}

}  // namespace
}  // namespace cuforge
