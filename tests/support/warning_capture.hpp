#pragma once
// Captures the library's warnings for the life of the object, forgetting earlier ones, so that a
// test can count the warnings one scenario gives.
#include <string>
#include <string_view>
#include <vector>

#include <tropical/diagnostics.hpp>
#include "util/warnings.hpp"

namespace tropical::testing {

struct WarningCapture {
    std::vector<std::string> messages;
    WarningCapture() {
        detail::reset_warnings_for_testing();
        set_warning_handler([this](std::string_view m) { messages.emplace_back(m); });
    }
    ~WarningCapture() { set_warning_handler(nullptr); }
    WarningCapture(const WarningCapture&) = delete;
    WarningCapture& operator=(const WarningCapture&) = delete;
};

}  // namespace tropical::testing
