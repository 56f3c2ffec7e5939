// The access log's lines as a test reads them: the sink runs on server threads, the test
// waits on its own, with a bound.
#pragma once

#include <waypoint/app/middleware.hpp>
#include <waypoint/app/operations/access_log.hpp>

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace waypoint::app::testing {

class access_log_capture {
 public:
  // The access_log layer that writes here; the capture outlives the application.
  middleware layer() {
    return access_log({.sink = [this](std::string_view line) {
      std::lock_guard lock(mutex_);
      lines_.emplace_back(line);
    }});
  }
  // The lines written since the last call, waiting up to `patience` for one at least.
  std::vector<std::string> take(std::chrono::milliseconds patience = std::chrono::seconds(3)) {
    auto end = std::chrono::steady_clock::now() + patience;
    for (;;) {
      {
        std::lock_guard lock(mutex_);
        if (!lines_.empty() || std::chrono::steady_clock::now() >= end)
          return std::exchange(lines_, {});
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;  // guarded by mutex_
};

}  // namespace waypoint::app::testing
