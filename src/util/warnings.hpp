#pragma once
#include <string_view>

namespace tropical::detail {

// Sends a warning to the user's handler, at most once per process for each `topic`.
void warn_once(std::string_view topic, std::string_view message);

// Forgets which topics were reported (tests only).
void reset_warnings_for_testing();

}  // namespace tropical::detail
