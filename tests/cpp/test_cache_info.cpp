// compile/cache's accounting: what info() counts (the cache's own files only; the PyTorch modules apart) and
// what prune() removes (least recently used entries, dead builds' staging), with staged builds that hold a fake
// kernel.so (no nvcc).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cache_fixture.hpp"
#include "cuforge/core/error.hpp"

namespace cuforge {
namespace {

using namespace test;

void set_mtime(const fs::path& p, time_t seconds_ago) {
  struct timeval now {};
  ::gettimeofday(&now, nullptr);
  struct timeval times[2] = {{now.tv_sec - seconds_ago, 0}, {now.tv_sec - seconds_ago, 0}};
  ASSERT_EQ(::utimes(p.c_str(), times), 0);
}

TEST_F(CacheTest, PruneRemovesLeastRecentlyUsedEntries) {
  const std::vector<std::string> keys = {std::string(32, 'a'), std::string(32, 'b'), std::string(32, 'c')};
  for (const auto& k : keys) publish(cache, k, "kernel_" + k.substr(0, 1), fake_library(10000));
  // Used 300 s, 200 s and 100 s ago; then a hit on the oldest makes it the most recent.
  set_mtime(cache.root() / "kernels" / keys[0], 300);
  set_mtime(cache.root() / "kernels" / keys[1], 200);
  set_mtime(cache.root() / "kernels" / keys[2], 100);
  ASSERT_TRUE(cache.find(keys[0]).has_value());

  const uint64_t total = cache.info().bytes;
  EXPECT_EQ(cache.prune(total), 0u) << "nothing to remove under the cap";
  EXPECT_EQ(cache.info().entries, 3u);

  EXPECT_EQ(cache.prune(total - 1), 1u);
  EXPECT_TRUE(fs::exists(cache.root() / "kernels" / keys[0])) << "a recently used entry was pruned";
  EXPECT_FALSE(fs::exists(cache.root() / "kernels" / keys[1])) << "the least recently used entry was kept";
  EXPECT_TRUE(fs::exists(cache.root() / "kernels" / keys[2]));

  EXPECT_EQ(cache.prune(cache.info().bytes / 2 + 1), 1u);
  EXPECT_TRUE(fs::exists(cache.root() / "kernels" / keys[0]));
  EXPECT_FALSE(fs::exists(cache.root() / "kernels" / keys[2]));

  EXPECT_EQ(cache.prune(0), 1u);
  EXPECT_EQ(cache.info().entries, 0u);
  EXPECT_TRUE(children(cache.root() / "kernels").empty()) << "no leftovers (trash) after pruning";
}

// A prune before any build made locks/ still reclaims a dead build's staging (it creates locks/, private).
TEST_F(CacheTest, PruneReclaimsDeadStagingBeforeAnyLockDirectoryExists) {
  dead_staging(cache, kKey);
  ASSERT_FALSE(fs::exists(cache.root() / "locks"));
  EXPECT_EQ(cache.prune(0), 0u);
  EXPECT_TRUE(children(cache.root() / "staging").empty()) << "the dead build's staging was kept";
  EXPECT_EQ(test::mode_of(cache.root() / "locks"), 0700u);
}

// A staging/ that is a symbolic link (planted, or left by a tool) is refused, and what it points at is left alone:
// reclaiming dead builds removed every entry there whose lock was free, a user's own files among them.
TEST_F(CacheTest, AStagingDirectoryThatIsALinkIsRefusedAndItsTargetKept) {
  TempDir outside;
  test::write_file(outside / "notes.txt", "precious");
  fs::create_directories(outside / "project");
  cache.check_root();
  fs::create_directory_symlink(outside.path(), cache.root() / "staging");
  const std::string prune = test::message_of<CacheError>([&] { cache.prune(0); });
  EXPECT_TRUE(test::contains(prune, "staging is a symbolic link")) << prune;
  const std::string build = test::message_of<CacheError>([&] { cache.begin_build(kKey); });
  EXPECT_TRUE(test::contains(build, "staging is a symbolic link")) << build;
  const std::string info = test::message_of<CacheError>([&] { cache.info(); });  // not left uncounted, unsaid
  EXPECT_TRUE(test::contains(info, "staging is a symbolic link")) << info;
  EXPECT_EQ(test::read_file(outside / "notes.txt"), "precious");
  EXPECT_TRUE(fs::is_directory(outside / "project"));
}

// info() sizes the cache's own files: a link counts as itself, never as what it points at, and a
// directory that cannot be read is skipped, not an error.
TEST_F(CacheTest, InfoSizesOnlyTheCachesOwnFiles) {
  TempDir outside;
  test::write_file(outside / "big", std::string(1 << 20, 'x'));
  publish(cache, kKey, kName, fake_library());
  const uint64_t entry_bytes = cache.info().bytes;
  fs::create_symlink(outside / "big", entry_dir() / "linked.so");
  fs::create_directories(cache.root() / "staging");
  fs::create_symlink(outside.path(), cache.root() / "staging" / (kKey + ".linked"));
  fs::create_directories(cache.root() / "failed" / kKey / "closed");
  fs::create_symlink("/", cache.root() / "failed" / "root");
  test::write_file(cache.root() / "failed" / kKey / "closed" / "nvcc.log", std::string(1 << 20, 'x'));
  ASSERT_EQ(::chmod((cache.root() / "failed" / kKey / "closed").c_str(), 0), 0);
  if (::geteuid() == 0) {  // as another user, whom the mode keeps out (root reads anything)
    for (const auto& e : fs::recursive_directory_iterator(tmp.path()))
      ASSERT_EQ(::lchown(e.path().c_str(), kOtherUid, kOtherUid), 0) << e.path();
    ASSERT_EQ(::chown(tmp.path().c_str(), kOtherUid, kOtherUid), 0);
  }
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_EXIT(
      {
        if (::geteuid() == 0 && (::setgid(kOtherUid) != 0 || ::setuid(kOtherUid) != 0)) std::_Exit(3);
        try {
          auto info = cache.info();
          std::fprintf(stderr, "entries %zu (%llu bytes), staging %zu (%llu bytes), failed %zu (%llu bytes)\n",
                       info.entries, (unsigned long long)info.bytes, info.staging,
                       (unsigned long long)info.staging_bytes, info.failed, (unsigned long long)info.failed_bytes);
          const bool own = info.entries == 1 && info.bytes < entry_bytes + 4096 && info.staging == 1 &&
                           info.staging_bytes < 4096 && info.failed == 2 && info.failed_bytes < 4096;
          std::_Exit(own ? 0 : 1);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "error: %s\n", e.what());
          std::_Exit(2);
        }
      },
      ::testing::ExitedWithCode(0), "");
}

// The PyTorch modules emit.pytorch(jit=True) built are counted apart from the kernels.
TEST_F(CacheTest, InfoCountsThePyTorchModules) {
  publish(cache, kKey, kName, fake_library());
  EXPECT_EQ(cache.info().torch_modules, 0u);
  test::write_file(cache.directory("torch") / ("gemm-" + kKey) / "gemm.so", std::string(5000, 'x'));
  auto info = cache.info();
  EXPECT_EQ(info.entries, 1u);
  EXPECT_EQ(info.torch_modules, 1u);
  EXPECT_GE(info.torch_bytes, 5000u);
}

// Every entry the cache makes is a directory: a file put among them is none (info() counted it, prune() removed it).
TEST_F(CacheTest, AStrayFileAmongTheEntriesIsNoEntry) {
  publish(cache, kKey, kName, fake_library());
  const fs::path stray = cache.root() / "kernels" / "notes.txt";
  test::write_file(stray, std::string(100000, 'x'));
  EXPECT_EQ(cache.info().entries, 1u);
  EXPECT_EQ(cache.verify().size(), 1u);
  EXPECT_EQ(cache.prune(0), 1u);
  EXPECT_TRUE(fs::exists(stray)) << "prune removed a file that is not the cache's";
  EXPECT_EQ(cache.info().entries, 0u);
}

}  // namespace
}  // namespace cuforge
