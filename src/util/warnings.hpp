#pragma once
#include <string_view>

namespace tropical::detail {

// Sends a warning to the user's handler, at most once per process for each `topic`.
void warn_once(std::string_view topic, std::string_view message);

// A failure that a destructor or deleter had to drop (it may not throw): a failed free, context pop,
// module unload. Debug builds (NDEBUG not defined) print it on stderr, as RMM's debug builds assert
// on one; release builds say nothing. Straight to stderr, not through the warning handler: it may
// run at process exit, after the handler's state is gone.
#ifdef NDEBUG
inline void report_dropped_failure(std::string_view) noexcept {}
#else
void report_dropped_failure(std::string_view message) noexcept;
#endif

// Forgets which topics were reported (tests only).
void reset_warnings_for_testing();

}  // namespace tropical::detail
