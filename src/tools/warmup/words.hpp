#pragma once
// The words and numbers the tool prints: counts, architectures, sizes, times.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <tropical/kernels.hpp>

namespace warmup {

// "1 entry", "2 entries".
std::string count_of(std::size_t n, std::string_view one, std::string_view many);

std::string first_line(std::string_view text);

// 90 -> "sm_90"; {80, 90} -> "sm_80, sm_90".
std::string arch_name(int arch);
std::string arch_list(const std::vector<int>& archs);

// 1536 -> "1.5 KiB".
std::string human_bytes(std::uintmax_t bytes);

// "2026-11-23T10:00:00Z", and seconds since 1970 for scripts.
std::string utc_time(std::chrono::system_clock::time_point when);
std::int64_t unix_seconds(std::chrono::system_clock::time_point when);

// A kernel's semiring, or "any" for a kernel that takes it at launch.
std::string_view semiring_name(const tropical::KernelInfo& kernel);

// A value the user gave, quoted for a message: long values are cut (a 100 kB argument must not
// turn an error message into 100 kB).
std::string in_quotes(std::string_view value);

}  // namespace warmup
