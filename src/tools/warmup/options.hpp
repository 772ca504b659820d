#pragma once
// The command line: what it asks for, checked; --help's text.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "selection.hpp"
#include "tool.hpp"

namespace warmup {

enum class Command { Warm, List, Verify, Clear, Trim };

// "warm", "list", "verify", "clear", "trim": the "command" of the JSON documents.
std::string_view command_name(Command command);

struct Options {
    Command command = Command::Warm;
    Selection selection;
    std::vector<int> archs;  // --arch: XY of each sm_XY named, ascending
    bool all_archs = false;  // --arch all: every architecture NVRTC knows
    unsigned jobs = 1;       // --jobs
    // --cache-dir; empty: the folder the environment names (never an empty --cache-dir, refused).
    std::optional<std::filesystem::path> cache_dir;
    std::uintmax_t max_bytes = 0;  // --max-size, for Command::Trim
    OutputMode output = OutputMode::Lines;
};

// The options of the command line, checked; nothing where it asked for --help or --version, which
// have then been printed. Throws Fatal (kUsage) for anything it cannot take, naming what is wrong.
std::optional<Options> parse_command_line(int argc, char** argv);

// What the command line asks for, read without parsing it: the JSON document of an error in the
// command line itself still names the command and is still JSON.
Command command_named_in(int argc, char** argv);
bool json_asked_in(int argc, char** argv);

}  // namespace warmup
