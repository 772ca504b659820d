#include "util/warnings.hpp"

#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include <tropical/diagnostics.hpp>

namespace tropical {
namespace {

struct WarningState {
    std::mutex mutex;
    WarningHandler handler;
    std::set<std::string, std::less<>> reported;
};

WarningState& state() {
    static WarningState instance;
    return instance;
}

void default_handler(std::string_view message) {
    std::fprintf(stderr, "tropical-gemm: warning: %.*s\n", static_cast<int>(message.size()), message.data());
}

}  // namespace

WarningHandler set_warning_handler(WarningHandler handler) {
    auto& s = state();
    std::lock_guard lock(s.mutex);
    return std::exchange(s.handler, std::move(handler));
}

namespace detail {

void warn_once(std::string_view topic, std::string_view message) {
    auto& s = state();
    WarningHandler handler;
    {
        std::lock_guard lock(s.mutex);
        if (!s.reported.emplace(topic).second) return;
        handler = s.handler;
    }
    // Called outside the lock: a handler may itself log through the library.
    if (handler) handler(message);
    else default_handler(message);
}

#ifndef NDEBUG
void report_dropped_failure(std::string_view message) noexcept {
    std::fprintf(stderr, "tropical-gemm: debug: dropped in a destructor: %.*s\n", static_cast<int>(message.size()),
                 message.data());
}
#endif

void reset_warnings_for_testing() {
    auto& s = state();
    std::lock_guard lock(s.mutex);
    s.reported.clear();
}

}  // namespace detail
}  // namespace tropical
