#include "provkit/util/log.hpp"

#include <atomic>
#include <mutex>

namespace provkit::util::log {

namespace {
std::atomic<bool> g_on{false};
std::mutex g_mutex;  // one line at a time, and the sink's replacement
Sink g_sink;
}  // namespace

void set_sink(Sink sink) {
  std::lock_guard lock(g_mutex);
  g_sink = std::move(sink);
  g_on.store(static_cast<bool>(g_sink), std::memory_order_relaxed);
}

bool enabled() { return g_on.load(std::memory_order_relaxed); }

void write(std::string_view domain, std::string_view message) {
  std::lock_guard lock(g_mutex);
  if (g_sink) g_sink(domain, message);
}

}  // namespace provkit::util::log
