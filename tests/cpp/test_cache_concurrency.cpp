// compile/cache with builds and lookups at once: staging left by builds killed midway, clear()
// beside builds in progress, peers removing entries others are finding, and concurrent publishers
// (threads, and processes forked after the cache was used).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cache_fixture.hpp"
#include "cuforge/core/log.hpp"

namespace cuforge {
namespace {

using namespace test;

// A build killed midway (SIGKILL: no destructor runs) leaves its staging directory behind. It is
// counted by info(), and reclaimed by the next build or prune once nobody holds its key's lock;
// a build in progress (its lock held) is left alone.
TEST_F(CacheTest, StagingOfDeadBuildsIsCountedAndReclaimed) {
  publish(cache, kKey, kName, fake_library());
  const std::string other = "fedcba9876543210fedcba9876543210";
  fs::path dead = dead_staging(cache, other);
  EXPECT_EQ(cache.info().staging, 1u);
  EXPECT_GT(cache.info().staging_bytes, 0u);
  {
    auto live = cache.begin_build(kKey);  // reclaims the dead one, keeps its own
    EXPECT_FALSE(fs::exists(dead));
    EXPECT_TRUE(fs::exists(live->staging()));
    EXPECT_EQ(cache.info().staging, 1u);
    dead = dead_staging(cache, other);
    cache.prune(UINT64_MAX);
    EXPECT_FALSE(fs::exists(dead));
    EXPECT_TRUE(fs::exists(live->staging())) << "a build in progress was reclaimed";
  }
  EXPECT_EQ(cache.info().staging, 0u) << "a build dropped unpublished removes its staging";
  // Killed for real, in a child process: its staging stays until reclaimed.
  pid_t child = ::fork();
  if (child == 0) {
    auto build = stage(cache, other, fake_library());
    ::kill(::getpid(), SIGKILL);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_EQ(cache.info().staging, 1u);
  cache.begin_build(kKey);
  EXPECT_EQ(cache.info().staging, 0u);
  // The next build of the killed build's own kernel reclaims it too (it takes that key's lock).
  dead = dead_staging(cache, other);
  {
    auto again = cache.begin_build(other);
    EXPECT_FALSE(fs::exists(dead)) << "the same key's dead staging was left behind";
  }
  EXPECT_EQ(cache.info().staging, 0u);
}

// clear() waits for builds in progress (they finish publishing) instead of pulling their
// directories away; it then removes everything, their entries included.
TEST_F(CacheTest, ClearWaitsForBuildsInProgress) {
  auto build = stage(cache, kKey, fake_library());
  std::atomic<bool> cleared{false};
  std::thread clearer([&] {
    cache.clear();
    cleared = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(cleared) << "clear() did not wait for the build";
  CacheEntry e = cache.publish(kKey, kName, *build);
  build.reset();
  clearer.join();
  EXPECT_TRUE(cleared);
  EXPECT_FALSE(fs::exists(e.directory));
}

// A hold (emit.pytorch's jit builds writing torch/) is waited for as a build is, while a build of the same
// process beside it (the hold's owner building its kernel) goes on: shared locks, on the same cache.
TEST_F(CacheTest, ClearWaitsForAHold) {
  auto hold = cache.hold();
  std::mutex said_mutex;
  std::string said;
  set_log_sink([&](LogLevel, const std::string& m) {
    std::lock_guard lock(said_mutex);
    said += m;
  });
  std::atomic<bool> cleared{false};
  std::thread clearer([&] {
    cache.clear();
    cleared = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(cleared) << "clear() did not wait for the hold";
  const fs::path torch = cache.directory("torch");
  write_file(torch / "module.so", "built");
  publish(cache, kKey, kName, fake_library());  // a build while clear() waits: not blocked by it
  hold.reset();
  clearer.join();
  set_log_sink({});
  EXPECT_TRUE(cleared);
  EXPECT_FALSE(fs::exists(torch));
  EXPECT_TRUE(said.find("waiting for the builds in progress to finish") != std::string::npos) << said;
}

// A thread that holds the cache (a hold, or a build it began) and clears it would wait for itself: refused, the
// cache left as it was; a clear waiting for another thread's hold stops where its stop check says so.
TEST_F(CacheTest, ClearRefusesTheThreadHoldingTheCacheAndStopsWhenAsked) {
  const CacheEntry e = publish(cache, kKey, kName, fake_library());
  {
    auto hold = cache.hold();
    EXPECT_THROW(cache.clear(), CacheError);
    TempDir elsewhere;  // another cache: this thread's hold is not on it
    KernelCache other(elsewhere.path());
    publish(other, kKey, kName, fake_library());
    EXPECT_NO_THROW(other.clear());
    EXPECT_FALSE(other.find(kKey));
  }
  {
    auto build = cache.begin_build("0123456789abcdef0123456789abcdef");
    try {
      cache.clear();
      ADD_FAILURE() << "clear() under this thread's own build";
    } catch (const CacheError& err) {
      EXPECT_NE(std::string(err.what()).find("while this thread holds it"), std::string::npos) << err.what();
    }
  }
  EXPECT_TRUE(fs::exists(e.directory));
  std::atomic<bool> held{false}, done{false};
  std::thread holder([&] {
    auto hold = cache.hold();
    held = true;
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
  while (!held) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  int asked = 0;
  EXPECT_THROW(cache.clear([&] { return ++asked == 3; }), Interrupted);
  EXPECT_EQ(asked, 3);
  EXPECT_TRUE(fs::exists(e.directory));
  done = true;
  holder.join();
  cache.clear();  // the hold released: this thread holds nothing
  EXPECT_FALSE(fs::exists(e.directory));
}

// Eight processes publish the same key at once: every one ends with the sound entry, no error,
// and the cache holds exactly one entry. Returns what went wrong, or "" when nothing did.
std::string concurrent_publishers(const KernelCache& cache) {
  const int kProcesses = 8;
  auto statuses = test::run_children(kProcesses, [&](int i) {
    const std::string library = fake_library(8192 + i, char('a' + i));
    CacheEntry e = publish(cache, kKey, "writer" + std::to_string(i), library);
    auto found = cache.find(kKey);
    if (!found || found->directory != e.directory) return 1;
    return 0;
  });
  std::string wrong;
  for (int i = 0; i < kProcesses; ++i)
    if (statuses[i] != 0) wrong += "writer " + std::to_string(i) + " exited with " + std::to_string(statuses[i]) + "; ";
  auto entries = children(cache.root() / "kernels");
  if (entries.size() != 1 || entries[0].filename() != kKey)
    wrong += std::to_string(entries.size()) + " entries instead of one; ";
  if (problem_of(cache, kKey) != "") wrong += "unsound entry: " + problem_of(cache, kKey) + "; ";
  if (!children(cache.root() / "staging").empty()) wrong += "losing builds were left in staging; ";
  if (!cache.find(kKey)) wrong += "no entry found afterwards; ";
  return wrong;
}

// In a fresh process (a death test re-runs this binary), so that no generator state is shared.
// Threads of one process (or processes) finding a damaged entry at once, and a prune removing entries others
// are finding or verifying: an entry gone meanwhile was removed by a peer, not an error (it once failed the
// lookups, and verify() called it damaged: "kernel.so is missing").
TEST_F(CacheTest, EntriesRemovedByPeersMeanwhileAreNotErrors) {
  const std::string library = fake_library(1 << 20);  // hashing it keeps the window open
  std::atomic<int> errors{0};
  std::string first;
  std::mutex first_mutex;
  for (int round = 0; round < 40; ++round) {
    publish(cache, kKey, kName, library);
    const bool damaged = round % 2 == 0;
    if (damaged) std::ofstream(entry_dir() / "kernel.so", std::ios::binary | std::ios::app) << "damage";
    std::atomic<bool> go{false}, pruned{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        while (!go) std::this_thread::yield();
        try {
          if (!damaged && t == 0) {
            cache.prune(0);
            pruned = true;
          } else if (!damaged && t == 1) {
            do {  // until the prune is done, so that some verify overlaps it
              for (const auto& check : cache.verify())
                if (!check.problem.empty()) throw std::runtime_error("verify: " + check.key + ": " + check.problem);
            } while (!pruned);
          } else {
            cache.find(kKey);
          }
        } catch (const std::exception& e) {
          std::lock_guard lock(first_mutex);
          if (errors++ == 0) first = e.what();
        }
      });
    go = true;
    for (auto& t : threads) t.join();
  }
  EXPECT_EQ(errors, 0) << first;
}

// A build begun while another thread clears the cache: its staging directory is made under the cache's lock,
// after the clear (which once removed the directory between the build's making it and using it).
TEST_F(CacheTest, ABuildBegunDuringAClearStages) {
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 50; ++i) publish(cache, fmt::format("{:032x}", 1000 + i), kName, fake_library(20000));
    std::thread clearer([&] { cache.clear(); });
    std::this_thread::sleep_for(std::chrono::microseconds(100 * (round % 10)));
    EXPECT_NO_THROW({
      auto build = cache.begin_build(kKey);
      EXPECT_TRUE(fs::is_directory(build->staging()));
    });
    clearer.join();
  }
}

TEST_F(CacheTest, ConcurrentPublishersLeaveOneGoodEntry) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::string wrong = concurrent_publishers(cache);
        std::fprintf(stderr, "%s\n", wrong.empty() ? "one good entry" : wrong.c_str());
        std::fflush(stderr);
        std::error_code ec;
        fs::remove_all(tmp.path(), ec);  // this process's own directory: _Exit skips destructors
        std::_Exit(wrong.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "one good entry");
}

// The same from processes forked after the parent had used the cache (as Python multiprocessing
// does): each child must still draw its own staging-directory name.
TEST_F(CacheTest, ConcurrentPublishersForkedAfterUse) {
  const std::string other = "fedcba9876543210fedcba9876543210";
  publish(cache, other, "earlier", fake_library());
  TempDir tmp2;
  EXPECT_EQ(concurrent_publishers(KernelCache(tmp2.path())), "");
}

}  // namespace
}  // namespace cuforge
