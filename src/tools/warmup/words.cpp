#include "words.hpp"

#include <ctime>

#include <fmt/format.h>

namespace warmup {

std::string count_of(std::size_t n, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string first_line(std::string_view text) { return std::string(text.substr(0, text.find('\n'))); }

std::string arch_name(int arch) { return fmt::format("sm_{}", arch); }

std::string arch_list(const std::vector<int>& archs) {
    std::string out;
    for (int a : archs) out += (out.empty() ? "" : ", ") + arch_name(a);
    return out;
}

std::string human_bytes(std::uintmax_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024 && unit < 4) {
        value /= 1024;
        ++unit;
    }
    return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

std::string utc_time(std::chrono::system_clock::time_point when) {
    const std::time_t t = std::chrono::system_clock::to_time_t(when);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

std::int64_t unix_seconds(std::chrono::system_clock::time_point when) {
    return std::chrono::duration_cast<std::chrono::seconds>(when.time_since_epoch()).count();
}

std::string_view semiring_name(const tropical::KernelInfo& kernel) {
    return kernel.semiring ? tropical::to_string(*kernel.semiring) : "any";
}

std::string in_quotes(std::string_view value) {
    constexpr std::size_t kShown = 60;
    if (value.size() <= kShown) return fmt::format("'{}'", value);
    return fmt::format("'{}...' ({} bytes)", value.substr(0, kShown), value.size());
}

}  // namespace warmup
