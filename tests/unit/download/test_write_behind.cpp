// The background flush of a file being written (issue 14).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "download/write_behind.hpp"
#include "support/temp_dir.hpp"

using provkit::download::WriteBehind;

namespace {
void wait_for_flush(WriteBehind& wb, std::uint64_t bytes) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (wb.flushed() < bytes && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(wb.flushed() >= bytes);
}
}  // namespace

TEST_CASE("write-behind: flushes a file and finishes cleanly", "[write_behind]") {
  provkit::test::TempDir dir("write-behind");
  std::string path = (dir / "f").string();
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  WriteBehind wb;
  wb.start(fd);
  std::string block(1 << 20, 'x');
  for (int i = 0; i < 3; ++i) {
    REQUIRE(::write(fd, block.data(), block.size()) == static_cast<ssize_t>(block.size()));
    wb.wrote(WriteBehind::kEvery);  // as if that much: a flush per call
    wait_for_flush(wb, (i + 1) * WriteBehind::kEvery);
  }
  CHECK(wb.finish() == 0);
  ::close(fd);
}

TEST_CASE("write-behind: a flush that fails is reported by finish()", "[write_behind]") {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  WriteBehind wb;
  wb.start(pipe_fds[1]);  // fdatasync on a pipe fails (EINVAL): a stand-in for a disk's write error
  wb.wrote(WriteBehind::kEvery);
  wait_for_flush(wb, WriteBehind::kEvery);
  int err = wb.finish();
  CHECK(err == EINVAL);
  CHECK(wb.finish() == err);  // stays reported
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}
