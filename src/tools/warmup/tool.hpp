#pragma once
// What every part of tropical-gemm-warmup shares: its name, its exit codes, the error that ends it,
// how it reports errors, and the library's warnings it collects for the JSON documents.
#include <string>
#include <string_view>
#include <vector>

namespace warmup {

inline constexpr const char* kProgram = "tropical-gemm-warmup";

// The exit codes, as --help documents them.
enum ExitCode : int {
    kSuccess = 0,
    kFailed = 1,       // a kernel failed to compile, or a cache entry failed verification
    kUsage = 2,        // unknown option, kernel, group, variant, type, semiring or architecture; a bad value
    kEnvironment = 3,  // no NVRTC, cache not writable or disabled, no GPU and no --arch
};

// "failed", "usage", "environment" (or "success"): an error's kind in the JSON documents.
const char* exit_kind(int code);

// An error that ends the program with `code` and `message`.
struct Fatal {
    int code;
    std::string message;
};

// How results are shown: one JSON document, a progress bar redrawn on a terminal, one line per
// kernel otherwise, or nothing but errors.
enum class OutputMode { Json, Bar, Lines, Quiet };

// "tropical-gemm-warmup: error: <message>" on standard error.
void print_error(std::string_view message);

// The library's warnings go to standard error as they come; the JSON documents repeat them, since a
// script reading standard output would otherwise never see them.
void install_warning_handler();
std::vector<std::string> warnings_so_far();

}  // namespace warmup
