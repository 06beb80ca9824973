// compile/cache: the content-addressed kernel cache, driven directly with staged builds that hold
// a fake kernel.so (no nvcc): hits and misses, atomic publish, corruption, permissions, ownership,
// clearing, and where the cache lives. What info() counts and prune() removes: test_cache_info.cpp; builds and
// lookups at once: test_cache_concurrency.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cache_fixture.hpp"
#include "cuforge/compile/tuning_record.hpp"
#include "cuforge/core/error.hpp"
#include "cuforge/core/log.hpp"
#include "files.hpp"

namespace cuforge {
namespace {

using namespace test;

TEST_F(CacheTest, RootIsVersionedUnderTheGivenDirectory) {
  EXPECT_EQ(cache.root(), tmp.path() / "v1");
  auto build = cache.begin_build(kKey);
  EXPECT_EQ(build->staging().parent_path(), cache.root() / "staging");
  EXPECT_TRUE(fs::exists(cache.root() / "locks" / (kKey + ".lock")));
  EXPECT_EQ(cache.keep_failed(kKey, *build), cache.root() / "failed" / kKey);
}

// A failed build's log reaches its message whole, or where it is long, its head and tail (a log of 70 MB, past the
// 64 MiB a file of the cache may hold, gave "(nvcc printed nothing)").
// An empty root (a C++ caller's) threw std::filesystem's error; a log sink that throws escaped the core's log().
TEST(CacheRoot, AnEmptyRootIsACacheErrorAndAThrowingSinkIsContained) {
  EXPECT_THROW(KernelCache(""), CacheError);
  const KernelCache cache("/tmp/cuforge-test-unused");  // holds() names one of its directories: never a path
  for (const char* name : {"/etc", "..", "kernels/../..", ""}) EXPECT_THROW(cache.holds(name), InvalidArgumentError);
  set_log_sink([](LogLevel, const std::string&) { throw std::logic_error("a sink's own failure"); });
  EXPECT_NO_THROW(log(LogLevel::warning, "said to standard error instead"));
  set_log_sink({});
}

TEST_F(CacheTest, ALongLogIsShownByItsHeadAndTail) {
  const fs::path log = tmp.path() / "nvcc.log";
  test::write_file(log, "error: the first\n");
  EXPECT_EQ(compile::read_log(log), "error: the first\n");
  const std::string middle(70 << 20, 'x');
  test::write_file(log, "error: the first\n" + middle + "the last\n");
  const std::string shown = compile::read_log(log);
  EXPECT_LE(shown.size(), compile::kLogShownBytes + 100);
  EXPECT_EQ(shown.rfind("error: the first\n", 0), 0u);
  EXPECT_NE(shown.find("bytes of the log left out here"), std::string::npos);
  EXPECT_EQ(shown.substr(shown.size() - 9), "the last\n");
  EXPECT_EQ(compile::read_log(tmp.path() / "none"), "");
}

TEST_F(CacheTest, MissThenHit) {
  EXPECT_EQ(cache.find(kKey), std::nullopt);  // no root yet: a miss, not an error
  EXPECT_EQ(cache.info().entries, 0u);

  const std::string library = fake_library();
  CacheEntry published = publish(cache, kKey, kName, library);
  EXPECT_EQ(published.key, kKey);
  EXPECT_EQ(published.name, kName);
  EXPECT_EQ(published.directory, entry_dir());
  EXPECT_EQ(test::read_file(published.library()), library);
  EXPECT_TRUE(fs::exists(published.source()));

  auto found = cache.find(kKey);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->key, kKey);
  EXPECT_EQ(found->name, kName);
  EXPECT_EQ(found->directory, entry_dir());
  EXPECT_EQ(cache.find("ffffffffffffffffffffffffffffffff"), std::nullopt);

  auto info = cache.info();
  EXPECT_EQ(info.root, cache.root());
  EXPECT_EQ(info.entries, 1u);
  EXPECT_GE(info.bytes, library.size());
  EXPECT_TRUE(children(cache.root() / "staging").empty()) << "the staged build was moved, not copied";

  auto checks = cache.verify();
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].key, kKey);
  EXPECT_EQ(checks[0].name, kName);
  EXPECT_EQ(checks[0].problem, "");
}

TEST_F(CacheTest, KeysAreDigestsAndDirectoriesTheCachesOwnNeverPaths) {
  // A C++ caller's key reached the file system as a path: find("/home/me/project") removed the directory as an
  // unsound entry, find("../tuning") the tuning record.
  const fs::path outside = tmp.path() / "outside";
  fs::create_directories(outside / "kept");
  // A lock's name ("cache": begin_build deadlocked on cache.lock) and a name with the staging's '.' too.
  for (const std::string& key : {outside.string(), std::string("../tuning"), std::string(".."), std::string(""),
                                 std::string("a/b"), std::string(".hidden"), std::string("a\0b", 3),
                                 std::string("cache"), std::string("a.b"), kKey + "0", std::string(32, 'F')}) {
    SCOPED_TRACE(key);
    EXPECT_THROW(cache.find(key), InvalidArgumentError);
    EXPECT_THROW(cache.begin_build(key), InvalidArgumentError);
    EXPECT_THROW(cache.directory(key), InvalidArgumentError);
  }
  auto build = cache.begin_build(kKey);
  EXPECT_THROW(cache.publish("../escaped", kName, *build), InvalidArgumentError);
  EXPECT_THROW(cache.keep_failed("/tmp", *build), InvalidArgumentError);
  EXPECT_TRUE(fs::exists(outside / "kept"));
  EXPECT_FALSE(fs::exists(cache.root().parent_path() / "escaped"));
}

TEST_F(CacheTest, SecondPublishOfAKeyKeepsOneGoodEntry) {
  const std::string first = fake_library(4096, 'a'), second = fake_library(5000, 'b');
  fs::path staged1, staged2;
  {
    auto build = stage(cache, kKey, first);
    staged1 = build->staging();
    cache.publish(kKey, kName, *build);
  }
  auto build = stage(cache, kKey, second);
  staged2 = build->staging();
  EXPECT_NE(staged1, staged2) << "each build stages into its own directory";
  CacheEntry again = cache.publish(kKey, kName, *build);
  EXPECT_EQ(again.directory, entry_dir());
  EXPECT_EQ(test::read_file(again.library()), first) << "the entry published first is kept";
  EXPECT_EQ(children(cache.root() / "kernels").size(), 1u);
  EXPECT_FALSE(fs::exists(staged2)) << "the losing build is cleaned up";
  EXPECT_EQ(problem_of(cache, kKey), "");
  EXPECT_TRUE(cache.find(kKey).has_value());
}

TEST_F(CacheTest, PublishWithoutALibraryIsAnError) {
  auto build = cache.begin_build(kKey);
  test::write_file(build->staging() / "kernel.cu", "// no library\n");
  EXPECT_THROW(cache.publish(kKey, kName, *build), CacheError);
  EXPECT_EQ(cache.find(kKey), std::nullopt);
}

TEST_F(CacheTest, EverythingIsPrivate) {
  publish(cache, kKey, kName, fake_library());
  EXPECT_EQ(test::mode_of(cache.root()), 0700u);
  EXPECT_EQ(test::mode_of(cache.root() / "kernels"), 0700u);
  EXPECT_EQ(test::mode_of(cache.root() / "staging"), 0700u);
  EXPECT_EQ(test::mode_of(entry_dir()), 0700u);
  for (const char* f : {"kernel.so", "kernel.cu", "entry.json"})
    EXPECT_EQ(test::mode_of(entry_dir() / f), 0600u) << f;
  cache.keep_failed(kKey, *cache.begin_build(kKey));
  EXPECT_EQ(test::mode_of(cache.root() / "locks"), 0700u);
  EXPECT_EQ(test::mode_of(cache.root() / "failed"), 0700u);
}

// A directory of the cache that others may write is refused, for lookups and builds alike, and
// left as it is (never silently chmod-ed): cuforge loads code from it.
TEST_F(CacheTest, DirectoriesOpenToOthersAreRefusedNotChanged) {
  publish(cache, kKey, kName, fake_library());
  for (const fs::path& dir : {tmp.path(), cache.root(), cache.root() / "kernels", cache.root() / "staging"}) {
    SCOPED_TRACE(dir);
    ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
    EXPECT_TRUE(contains(test::message_of<CacheError>([&] { cache.find(kKey); }) +
                             test::message_of<CacheError>([&] { cache.begin_build(kKey); }),
                         "writable by other users"));
    EXPECT_TRUE(contains(test::message_of<CacheError>([&] { cache.begin_build(kKey); }), dir.string()));
    if (dir != cache.root() / "staging") {
      EXPECT_TRUE(contains(test::message_of<CacheError>([&] { cache.verify(); }), "writable by other users"));
    }
    EXPECT_EQ(test::mode_of(dir), 0777u) << "changed behind the user's back";
    ::chmod(dir.c_str(), 0700);
  }
  EXPECT_TRUE(cache.find(kKey).has_value());
}

// Each corruption makes the entry unsound: verify() says what is wrong, find() misses and removes
// the entry (so the kernel is rebuilt), and a new publish of the key works.
struct Corruption {
  const char* what;
  void (*apply)(const fs::path& entry);
  const char* problem;
};

const Corruption kCorruptions[] = {
    {"truncated library",
     [](const fs::path& e) { fs::resize_file(e / "kernel.so", fs::file_size(e / "kernel.so") / 2); },
     "checksum"},
    {"empty library", [](const fs::path& e) { fs::resize_file(e / "kernel.so", 0); }, "checksum"},
    {"one flipped byte",
     [](const fs::path& e) {
       std::fstream f(e / "kernel.so", std::ios::in | std::ios::out | std::ios::binary);
       f.seekg(1000);
       char c = 0;
       f.read(&c, 1);
       f.seekp(1000);
       c = char(c ^ 0x01);
       f.write(&c, 1);
     },
     "checksum"},
    {"library replaced by one of the same size",
     [](const fs::path& e) { test::write_file(e / "kernel.so", fake_library(4096, 'z')); }, "checksum"},
    {"library missing", [](const fs::path& e) { fs::remove(e / "kernel.so"); }, "kernel.so is missing"},
    {"library is a symbolic link",
     [](const fs::path& e) {
       fs::rename(e / "kernel.so", e / "real.so");
       fs::create_symlink(e / "real.so", e / "kernel.so");
     },
     "symbolic link"},
    {"entry.json missing", [](const fs::path& e) { fs::remove(e / "entry.json"); }, "entry.json is missing"},
    {"source missing", [](const fs::path& e) { fs::remove(e / "kernel.cu"); }, "kernel.cu is missing"},
    {"source modified", [](const fs::path& e) { test::write_file(e / "kernel.cu", "// changed\n"); },
     "kernel.cu does not match"},
    {"entry.json with a size as a string",
     [](const fs::path& e) {
       std::string text = test::read_file(e / "entry.json");
       size_t at = text.find("\"library_bytes\": ") + 17;
       text.insert(text.find_first_of(",\n}", at), "\"");
       text.insert(at, "\"");
       test::write_file(e / "entry.json", text);
     },
     "no unsigned field 'library_bytes'"},
    {"entry.json with a number as its key",
     [](const fs::path& e) {
       std::string text = test::read_file(e / "entry.json");
       text.replace(text.find("\"" + kKey + "\""), kKey.size() + 2, "5");
       test::write_file(e / "entry.json", text);
     },
     "no string field 'key'"},
    {"entry.json an array", [](const fs::path& e) { test::write_file(e / "entry.json", "[1, 2]"); },
     "entry.json is unreadable"},
    {"entry.json garbage", [](const fs::path& e) { test::write_file(e / "entry.json", "{not json"); },
     "entry.json is unreadable"},
    {"entry.json nested 100000 deep",  // otherwise sound: nlohmann's copies recurse per level
     [](const fs::path& e) {
       std::string text = test::read_file(e / "entry.json");
       std::string deep = "\"padding\": ";
       for (int i = 0; i < 100000; ++i) deep += "[";
       text.insert(text.find('{') + 1, deep + std::string(100000, ']') + ",");
       test::write_file(e / "entry.json", text);
     },
     "nests deeper than 32 levels"},
    {"entry.json a FIFO",  // would block its reader
     [](const fs::path& e) {
       fs::remove(e / "entry.json");
       ::mkfifo((e / "entry.json").c_str(), 0600);
     },
     "entry.json is not a regular file"},
    {"library a FIFO",
     [](const fs::path& e) {
       fs::remove(e / "kernel.so");
       ::mkfifo((e / "kernel.so").c_str(), 0600);
     },
     "kernel.so is not a regular file"},
    {"entry.json of another key",
     [](const fs::path& e) {
       std::string text = test::read_file(e / "entry.json");
       text.replace(text.find(kKey), kKey.size(), std::string(kKey.size(), 'f'));
       test::write_file(e / "entry.json", text);
     },
     "another key"},
    {"world-writable library", [](const fs::path& e) { ::chmod((e / "kernel.so").c_str(), 0666); },
     "writable by other users"},
    {"group-writable library", [](const fs::path& e) { ::chmod((e / "kernel.so").c_str(), 0620); },
     "writable by other users"},
    {"world-writable entry directory", [](const fs::path& e) { ::chmod(e.c_str(), 0777); },
     "writable by other users"},
    {"world-writable entry.json", [](const fs::path& e) { ::chmod((e / "entry.json").c_str(), 0646); },
     "writable by other users"},
};

TEST_F(CacheTest, CorruptEntriesAreDetectedAndRemoved) {
  const std::string library = fake_library();
  for (const auto& c : kCorruptions) {
    SCOPED_TRACE(c.what);
    publish(cache, kKey, kName, library);
    ASSERT_TRUE(cache.find(kKey).has_value());
    c.apply(entry_dir());

    std::string problem = problem_of(cache, kKey);
    EXPECT_TRUE(contains(problem, c.problem)) << "verify() said: '" << problem << "'";
    EXPECT_EQ(cache.find(kKey), std::nullopt) << "an unsound entry was returned";
    EXPECT_FALSE(fs::exists(entry_dir())) << "the unsound entry was left in place";
    EXPECT_TRUE(cache.verify().empty());

    // Rebuilt: publishing the key again gives a sound entry.
    publish(cache, kKey, kName, library);
    EXPECT_TRUE(cache.find(kKey).has_value());
    EXPECT_EQ(problem_of(cache, kKey), "");
    cache.clear();
  }
}

TEST_F(CacheTest, VerifyReportsEveryEntry) {
  const std::string other = "fedcba9876543210fedcba9876543210";
  publish(cache, kKey, kName, fake_library());
  publish(cache, other, "other", fake_library(3000));
  fs::resize_file(cache.root() / "kernels" / other / "kernel.so", 10);
  auto checks = cache.verify();
  ASSERT_EQ(checks.size(), 2u);
  for (const auto& c : checks) {
    if (c.key == kKey) {
      EXPECT_EQ(c.problem, "");
      EXPECT_EQ(c.name, kName);
    } else {
      EXPECT_EQ(c.key, other);
      EXPECT_TRUE(contains(c.problem, "checksum")) << c.problem;
    }
  }
  EXPECT_EQ(cache.verify().size(), 2u) << "verify() only reports; it removes nothing";
}

TEST_F(CacheTest, EntryOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  for (const char* part : {"kernel.so", "entry.json", ""}) {
    SCOPED_TRACE(part);
    publish(cache, kKey, kName, fake_library());
    fs::path p = *part ? entry_dir() / part : entry_dir();
    ASSERT_EQ(::lchown(p.c_str(), test::kOtherUid, test::kOtherUid), 0);
    EXPECT_TRUE(contains(problem_of(cache, kKey), "belongs to another user")) << problem_of(cache, kKey);
    EXPECT_EQ(cache.find(kKey), std::nullopt);
    EXPECT_FALSE(fs::exists(entry_dir()));
  }
}

TEST_F(CacheTest, RootOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  fs::create_directories(cache.root());
  ASSERT_EQ(::chown(cache.root().c_str(), test::kOtherUid, test::kOtherUid), 0);
  try {
    cache.begin_build(kKey);
    FAIL() << "a cache directory owned by another user was used";
  } catch (const CacheError& e) {
    EXPECT_TRUE(contains(e.what(), "belongs to another user")) << e.what();
    EXPECT_TRUE(contains(e.what(), "CUFORGE_CACHE_DIR")) << e.what();
  }
}

// Runs `body` as an unprivileged user when the tests run as root (root may write anywhere).
void expect_cache_error_as_user(const fs::path& parent, const std::function<void()>& body, const std::string& says) {
  GTEST_FLAG_SET(death_test_style, "fast");
  const bool root = ::geteuid() == 0;
  if (root) {
    ASSERT_EQ(::chmod(parent.c_str(), 0755), 0);  // let the other user reach the cache
  }
  EXPECT_EXIT(
      {
        if (root && (::setgid(test::kOtherUid) != 0 || ::setuid(test::kOtherUid) != 0)) std::_Exit(3);
        try {
          body();
          std::fprintf(stderr, "no error\n");
          std::_Exit(1);
        } catch (const CacheError& e) {
          std::fprintf(stderr, "CacheError: %s\n", e.what());
          std::_Exit(0);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "other error: %s\n", e.what());
          std::_Exit(2);
        }
      },
      ::testing::ExitedWithCode(0), says);
}

TEST_F(CacheTest, RootThatIsNotWritableIsRefused) {
  fs::create_directories(cache.root());
  if (::geteuid() == 0) {  // the cache belongs to the user who runs it, who cannot write it
    ASSERT_EQ(::chown(tmp.path().c_str(), test::kOtherUid, test::kOtherUid), 0);
    ASSERT_EQ(::chown(cache.root().c_str(), test::kOtherUid, test::kOtherUid), 0);
  }
  ASSERT_EQ(::chmod(cache.root().c_str(), 0500), 0);
  expect_cache_error_as_user(tmp.path(), [&] { cache.begin_build(kKey); }, "not writable");
}

TEST_F(CacheTest, RootThatCannotBeCreatedIsRefused) {
  // The parent belongs to this user (root) and is read-only for the user who runs the cache.
  KernelCache nested(tmp.path() / "sub" / "dir");
  if (::geteuid() != 0) {
    ASSERT_EQ(::chmod(tmp.path().c_str(), 0500), 0);
  }
  expect_cache_error_as_user(tmp.path(), [&] { nested.begin_build(kKey); }, "cannot create");
  ::chmod(tmp.path().c_str(), 0700);
}

TEST_F(CacheTest, RootThatIsAFileIsRefused) {
  test::write_file(tmp.path() / "file", "not a directory");
  KernelCache on_file(tmp.path() / "file");
  EXPECT_THROW(on_file.begin_build(kKey), CacheError);
  EXPECT_EQ(on_file.find(kKey), std::nullopt);
  EXPECT_THROW(on_file.info(), CacheError);
  EXPECT_THROW(on_file.verify(), CacheError);
  EXPECT_THROW(on_file.prune(0), CacheError);
  EXPECT_THROW(on_file.clear(), CacheError);
}

// nvcc runs its steps through /bin/sh, paths in double quotes: a root the shell would expand is refused before
// a build (CUFORGE_CACHE_DIR='/tmp/x$(touch f)' ran touch), and nothing is made there.
TEST_F(CacheTest, ARootTheShellWouldExpandIsRefused) {
  for (const std::string name : {"x$(touch f)", "x`touch f`", "x\\y", "x\"y", "x\ny"}) {
    KernelCache odd(tmp.path() / name);
    try {
      odd.begin_build(kKey);
      ADD_FAILURE() << "accepted " << name;
    } catch (const CacheError& e) {
      EXPECT_TRUE(test::contains(e.what(), "which the shell nvcc runs its steps in would expand")) << e.what();
    }
    EXPECT_FALSE(fs::exists(tmp.path() / name)) << name;
  }
}

// What only lists or removes leaves no cache behind where there was none (`cuforge cache info` created one).
TEST_F(CacheTest, ListingsAndRemovalsOfAMissingCacheCreateNothing) {
  const KernelCache missing(tmp.path() / "none");
  EXPECT_EQ(missing.info().entries, 0u);
  EXPECT_TRUE(missing.verify().empty());
  EXPECT_EQ(missing.prune(0), 0u);
  missing.clear();
  EXPECT_TRUE(compile::TuningRecord(missing).entries().empty());
  EXPECT_EQ(compile::TuningRecord(missing).clear(), 0u);
  EXPECT_EQ(compile::TuningRecord(missing).find("k"), std::nullopt);
  EXPECT_FALSE(fs::exists(tmp.path() / "none"));
  fs::create_directories(tmp.path() / "none");  // the directory given, not yet the cache's versioned root
  ::chmod((tmp.path() / "none").c_str(), 0700);  // private whatever the umask, as the cache makes its own
  EXPECT_EQ(missing.info().entries, 0u);
  EXPECT_FALSE(fs::exists(missing.root()));
}

TEST_F(CacheTest, ClearOfAReadOnlyCacheIsAnError) {
  publish(cache, kKey, kName, fake_library());
  ASSERT_EQ(::chmod(cache.root().c_str(), 0500), 0);
  expect_cache_error_as_user(tmp.path(), [&] { cache.clear(); }, "");
  ::chmod(cache.root().c_str(), 0700);
}

// A kernels/ its user cannot list is an unusable cache, not an empty one: verify() said "0 entries checked, 0 bad"
// and info() "0 kernels".
TEST_F(CacheTest, AnUnlistableCacheIsAnErrorNotAnEmptyCache) {
  publish(cache, kKey, kName, fake_library());
  if (::geteuid() == 0) {  // the cache belongs to the user who runs it (root lists anything)
    for (const auto& e : fs::recursive_directory_iterator(tmp.path()))
      ASSERT_EQ(::lchown(e.path().c_str(), test::kOtherUid, test::kOtherUid), 0) << e.path();
    ASSERT_EQ(::chown(tmp.path().c_str(), test::kOtherUid, test::kOtherUid), 0);
  }
  ASSERT_EQ(::chmod((cache.root() / "kernels").c_str(), 0), 0);
  expect_cache_error_as_user(tmp.path(), [&] { cache.verify(); }, "cannot list .*kernels");
  expect_cache_error_as_user(tmp.path(), [&] { cache.info(); }, "cannot list .*kernels");
  expect_cache_error_as_user(tmp.path(), [&] { cache.prune(0); }, "cannot list .*kernels");
  ::chmod((cache.root() / "kernels").c_str(), 0700);
}

TEST_F(CacheTest, ClearRemovesEverything) {
  publish(cache, kKey, kName, fake_library());
  dead_staging(cache, "fedcba9876543210fedcba9876543210");  // an abandoned build
  const fs::path modules = cache.directory("torch");  // emit.pytorch's built modules, of the kernels cleared
  EXPECT_EQ(fs::status(modules).permissions() & fs::perms::all, fs::perms::owner_all) << "private";
  test::write_file(modules / "cf_gemm-0a1b" / "cf_gemm.so", fake_library());
  cache.clear();
  EXPECT_EQ(cache.info().entries, 0u);
  EXPECT_EQ(cache.find(kKey), std::nullopt);
  EXPECT_FALSE(fs::exists(cache.root() / "staging"));
  EXPECT_FALSE(fs::exists(modules));
  publish(cache, kKey, kName, fake_library());  // usable again
  EXPECT_TRUE(cache.find(kKey).has_value());
  // A clear killed midway leaves its directories renamed aside (remove_atomically), a prune or lookup its entry:
  // the next clear takes them; a prune, only those ten minutes old (a live removal may be at a younger one).
  test::write_file(cache.root() / ".trash-kernels-0a1b2c3d" / kKey / "kernel.so", fake_library());
  test::write_file(cache.root() / "kernels" / (".trash-" + kKey + "-0a1b2c3d") / "kernel.so", fake_library());
  cache.prune(0);
  EXPECT_TRUE(fs::exists(cache.root() / ".trash-kernels-0a1b2c3d")) << "a removal just now: left to it";
  EXPECT_TRUE(fs::exists(cache.root() / "kernels" / (".trash-" + kKey + "-0a1b2c3d")));
  cache.clear();
  EXPECT_FALSE(fs::exists(cache.root() / ".trash-kernels-0a1b2c3d"));
}

// With CUFORGE_CACHE_DIR unset, the cache is under XDG_CACHE_HOME, else ~/.cache; never the
// current directory. Each case runs in a fresh process (the user cache is made once).
class UserCacheDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

void expect_user_cache_root(const char* cache_dir, const char* xdg, const char* home, const fs::path& expected) {
  EXPECT_EXIT(
      {
        auto set = [](const char* var, const char* value) {
          if (value) {
            ::setenv(var, value, 1);
          } else {
            ::unsetenv(var);
          }
        };
        set("CUFORGE_CACHE_DIR", cache_dir);
        set("XDG_CACHE_HOME", xdg);
        set("HOME", home);
        try {
          fs::path root = KernelCache::user_cache().root();
          std::fprintf(stderr, "root %s\n", root.c_str());
          std::_Exit(root == expected ? 0 : 1);
        } catch (const CacheError& e) {
          std::fprintf(stderr, "CacheError: %s\n", e.what());
          std::_Exit(expected.empty() ? 0 : 2);
        }
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(UserCacheDeathTest, CuforgeCacheDirWins) {
  expect_user_cache_root("/tmp/cuforge-a", "/tmp/xdg", "/tmp/home", "/tmp/cuforge-a/v1");
}
TEST_F(UserCacheDeathTest, ThenXdgCacheHome) {
  expect_user_cache_root(nullptr, "/tmp/xdg", "/tmp/home", "/tmp/xdg/cuforge/v1");
  expect_user_cache_root("", "/tmp/xdg", "/tmp/home", "/tmp/xdg/cuforge/v1");
}
TEST_F(UserCacheDeathTest, ThenHome) { expect_user_cache_root(nullptr, nullptr, "/tmp/home", "/tmp/home/.cache/cuforge/v1"); }
TEST_F(UserCacheDeathTest, NoneIsAnErrorNotTheCurrentDirectory) {
  expect_user_cache_root(nullptr, nullptr, nullptr, fs::path());
}

}  // namespace
}  // namespace cuforge
