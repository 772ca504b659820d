#include "tool.hpp"

#include <cstdio>
#include <mutex>

#include <tropical/diagnostics.hpp>

namespace warmup {
namespace {

struct Warnings {
    std::mutex mutex;
    std::vector<std::string> messages;
};

Warnings& warnings() {
    static Warnings w;
    return w;
}

}  // namespace

const char* exit_kind(int code) {
    switch (code) {
    case kFailed: return "failed";
    case kUsage: return "usage";
    case kEnvironment: return "environment";
    default: return "success";
    }
}

void print_error(std::string_view message) {
    std::fprintf(stderr, "%s: error: %.*s\n", kProgram, static_cast<int>(message.size()), message.data());
}

void install_warning_handler() {
    tropical::set_warning_handler([](std::string_view message) {
        {
            std::lock_guard lock(warnings().mutex);
            warnings().messages.emplace_back(message);
        }
        std::fprintf(stderr, "%s: warning: %.*s\n", kProgram, static_cast<int>(message.size()), message.data());
    });
}

std::vector<std::string> warnings_so_far() {
    std::lock_guard lock(warnings().mutex);
    return warnings().messages;
}

}  // namespace warmup
