#include "options.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "words.hpp"

namespace warmup {
namespace {

constexpr unsigned kMaxJobs = 9999;

std::string joined(const std::vector<std::string>& values, std::string_view separator = ", ") {
    std::string out;
    for (const auto& v : values) out += (out.empty() ? "" : std::string(separator)) + v;
    return out;
}

// A checker for CLI11 that accepts one of `choices`, naming them all otherwise.
std::function<std::string(const std::string&)> one_of(std::string what, std::vector<std::string> choices) {
    return [what = std::move(what), choices = std::move(choices)](const std::string& v) -> std::string {
        if (std::find(choices.begin(), choices.end(), v) != choices.end()) return {};
        return fmt::format("unknown {} {}: choose from {}", what, in_quotes(v), joined(choices));
    };
}

// "sm_90" or "90" -> 90; "all" -> 0 (every architecture NVRTC knows); nothing for anything else.
std::optional<int> parse_arch(std::string_view text) {
    if (text == "all") return 0;
    if (text.starts_with("sm_")) text.remove_prefix(3);
    if (text.size() < 2 || text.size() > 4) return std::nullopt;
    int arch = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        arch = arch * 10 + (c - '0');
    }
    return arch >= 10 ? std::optional(arch) : std::nullopt;
}

std::string check_arch(const std::string& text) {
    if (parse_arch(text)) return {};
    return fmt::format(
        "{} is not an architecture: write sm_XY as in sm_80 or sm_90 (XY: the compute capability), "
        "or all",
        in_quotes(text));
}

// "500M", "2G", "1.5GiB", "10000" -> bytes (K, M, G, T are powers of 1024).
std::optional<std::uintmax_t> parse_size(std::string_view text) {
    std::size_t digits = 0;
    while (digits < text.size() && ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.')) ++digits;
    if (digits == 0) return std::nullopt;
    double number = 0;
    try {
        std::size_t used = 0;
        number = std::stod(std::string(text.substr(0, digits)), &used);
        if (used != digits) return std::nullopt;
    } catch (const std::exception&) {
        return std::nullopt;
    }
    std::string unit(text.substr(digits));
    std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::toupper(c); });
    static const std::map<std::string, double> scale = {{"", 1},
                                                        {"B", 1},
                                                        {"K", 1024.0},
                                                        {"KB", 1024.0},
                                                        {"KIB", 1024.0},
                                                        {"M", 1048576.0},
                                                        {"MB", 1048576.0},
                                                        {"MIB", 1048576.0},
                                                        {"G", 1073741824.0},
                                                        {"GB", 1073741824.0},
                                                        {"GIB", 1073741824.0},
                                                        {"T", 1099511627776.0},
                                                        {"TB", 1099511627776.0},
                                                        {"TIB", 1099511627776.0}};
    const auto it = scale.find(unit);
    if (it == scale.end() || number < 0 || number * it->second > 9e18) return std::nullopt;
    return static_cast<std::uintmax_t>(number * it->second);
}

// A whole number from 1 to kMaxJobs, and nothing else: no sign, no space, no empty text.
std::optional<unsigned> parse_jobs(std::string_view text) {
    unsigned jobs = 0;
    const char* end = text.data() + text.size();
    const auto [stop, error] = std::from_chars(text.data(), end, jobs);
    if (text.empty() || error != std::errc() || stop != end || jobs < 1 || jobs > kMaxJobs) return std::nullopt;
    return jobs;
}

std::string check_size(const std::string& text) {
    if (parse_size(text)) return {};
    return fmt::format("{} is not a size: write e.g. 500M, 2G or 1000000", in_quotes(text));
}

std::string check_jobs(const std::string& text) {
    if (parse_jobs(text)) return {};
    return fmt::format("{} is not a number of jobs: write a whole number from 1 to {}", in_quotes(text), kMaxJobs);
}

// An empty folder name is refused rather than read as "the default": a script whose variable came
// out empty would otherwise list, trim or clear the user's real cache. A path that no system call
// takes (longer than PATH_MAX, or with a name longer than NAME_MAX) is refused here too, in a short
// message, rather than echoed in full by every warning and error about the folder.
std::string check_cache_dir(const std::string& text) {
    if (text.empty())
        return "an empty folder name is refused: name the cache folder, or leave --cache-dir out to use the default "
               "one";
    if (text.size() >= PATH_MAX)
        return fmt::format("{} is too long to be a folder's path: a path has at most {} bytes", in_quotes(text),
                           PATH_MAX - 1);
    for (std::size_t start = 0; start < text.size();) {
        const std::size_t end = std::min(text.find('/', start), text.size());
        if (end - start > NAME_MAX)
            return fmt::format("{} holds a name, {}, longer than a file name can be ({} bytes)", in_quotes(text),
                               in_quotes(std::string_view(text).substr(start, end - start)), NAME_MAX);
        start = end + 1;
    }
    return {};
}

// The example lines of --help that name a selection say how many kernels it selects, counted from
// the registry, so that they stay true when the catalogue grows.
std::string kernels_in(const Selection& selection) {
    return count_of(select_kernels(selection).size(), "kernel", "kernels");
}

std::string footer() {
    Selection gemm_f32, splitk;
    gemm_f32.groups = {"gemm"};
    gemm_f32.types = {"f32"};
    splitk.variants = {"splitk"};
    std::set<tropical::KernelVariant> variants;
    for (const auto* k : select_kernels(gemm_f32)) variants.insert(k->variant);
    std::vector<std::string> variant_names;
    for (const auto v : variants) variant_names.emplace_back(tropical::to_string(v));
    return fmt::format(
        R"(Examples:
  tropical-gemm-warmup                           all {all} kernels, for this machine's GPUs
  tropical-gemm-warmup --arch sm_80,sm_90        every kernel for A100 and H100/H200 GPUs; no GPU needed
  tropical-gemm-warmup --group gemm --type f32   the f32 products of the gemm group ({gemm_f32}: {variants})
  tropical-gemm-warmup --variant splitk          the split-K products ({splitk})
  tropical-gemm-warmup --list                    the kernels, and which are cached for which GPUs
  tropical-gemm-warmup --verify                  check every entry (and, on a GPU, load its CUBIN)
  tropical-gemm-warmup --max-size 500M           drop least recently used entries beyond 500 MiB

Selection: without --kernel, --group, --variant, --type or --semiring, every kernel. Several options
select the kernels that match all of them; several values of one option (comma-separated or
repeated) match any. Backward kernels serve every semiring but counting and orand (which have no
backward), so only a --semiring of those alone excludes them.

Cache folder: --cache-dir, else $TROPICAL_GEMM_CACHE_DIR, else $XDG_CACHE_HOME/tropical-gemm, else
~/.cache/tropical-gemm. Entries live in its v1/sm_XY/ folders; anything else there is left alone.
Where the environment leaves the cache off (TROPICAL_GEMM_CACHE=off, an empty TROPICAL_GEMM_CACHE_DIR,
no HOME), every command needs --cache-dir: none falls back to another folder.
NVRTC, needed only when a kernel must be compiled (a warm cache works without it): $TROPICAL_GEMM_NVRTC,
else libnvrtc.so.13 or .12, else $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64.
Output: a progress bar on a terminal, one line per kernel otherwise; --json prints one JSON document
(with per-kernel compile seconds) and nothing else on standard output. Errors go to standard error.
JSON strings are UTF-8. Where a text is not (a file name is bytes), each byte outside a UTF-8
character is written as the four characters \xNN (NN: two hex digits), and a backslash that would
read as such an escape as \x5c, so that replacing every \xNN by the byte NN gives back the text.

Exit codes:
  0  success
  1  a kernel failed to compile, or a cache entry failed verification
  2  usage error: unknown option, kernel, group, variant, type, semiring or architecture, or a bad
     value (an empty or overlong --cache-dir, a --jobs that is not a number from 1 to {max_jobs})
  3  environment error: NVRTC not found, cache folder not writable, the environment leaves the cache
     off and there is no --cache-dir, no GPU here and no --arch)",
        fmt::arg("all", tropical::kernel_registry().size()), fmt::arg("gemm_f32", kernels_in(gemm_f32)),
        fmt::arg("variants", joined(variant_names, " and ")), fmt::arg("splitk", kernels_in(splitk)),
        fmt::arg("max_jobs", kMaxJobs));
}

constexpr const char* kDescription =
    R"(tropical-gemm-warmup: compile tropical-gemm's GPU kernels ahead of time into its kernel cache, so
that programs using the library start without compiling anything.

The library compiles each kernel with NVRTC the first time a process needs it, and keeps the result
in a disk cache. This tool fills that cache in advance, in parallel: for the GPUs of this machine,
or with --arch for other machines' GPUs with no GPU here at all (e.g. while building a container
image or a cluster's shared cache). It also lists, verifies, bounds and clears the cache.
)";

OutputMode output_mode(bool json, bool quiet) {
    if (json) return OutputMode::Json;
    if (quiet) return OutputMode::Quiet;
    return ::isatty(STDOUT_FILENO) ? OutputMode::Bar : OutputMode::Lines;
}

}  // namespace

std::string_view command_name(Command command) {
    switch (command) {
    case Command::Warm: return "warm";
    case Command::List: return "list";
    case Command::Verify: return "verify";
    case Command::Clear: return "clear";
    case Command::Trim: return "trim";
    }
    return "warm";
}

std::optional<Options> parse_command_line(int argc, char** argv) {
    Options o;
    Selection& s = o.selection;
    std::vector<std::string> archs;
    const unsigned default_jobs = std::clamp(std::thread::hardware_concurrency(), 1u, kMaxJobs);
    std::string jobs = std::to_string(default_jobs), cache_dir, max_size;
    bool list = false, verify = false, clear = false, json = false, quiet = false;

    CLI::App app(kDescription, kProgram);
    app.footer(footer());
    app.get_formatter()->column_width(34);
    app.set_version_flag("--version", std::string(TROPICAL_GEMM_VERSION));

    const std::string selection = "Which kernels (default: all)";
    app.add_option("-k,--kernel", s.kernels, "By name, e.g. tropical_gemm_f32_maxplus (--list names them)")
        ->delimiter(',')
        ->check(check_kernel_name, "", "KERNEL")
        ->type_name("NAME")
        ->group(selection);
    std::vector<std::string> groups = group_choices();
    groups.back() = "or " + groups.back() + " (both)";  // "backward", which group_choices() puts last
    app.add_option("-g,--group", s.groups, joined(groups))
        ->delimiter(',')
        ->check(one_of("group", group_choices()), "", "GROUP")
        ->type_name("GROUP")
        ->group(selection);
    app.add_option("--variant", s.variants, fmt::format("How a kernel computes: {}", joined(variant_choices())))
        ->delimiter(',')
        ->check(one_of("variant", variant_choices()), "", "VARIANT")
        ->type_name("VARIANT")
        ->group(selection);
    app.add_option("-t,--type", s.types, joined(type_choices()))
        ->delimiter(',')
        ->check(one_of("type", type_choices()), "", "TYPE")
        ->type_name("TYPE")
        ->group(selection);
    app.add_option("-s,--semiring", s.semirings, joined(semiring_choices()))
        ->delimiter(',')
        ->check(one_of("semiring", semiring_choices()), "", "SEMIRING")
        ->type_name("SEMIRING")
        ->group(selection);
    app.add_option("-a,--arch", archs, "GPUs to compile for, e.g. sm_80,sm_90, or all (default: this machine's)")
        ->delimiter(',')
        ->check(check_arch, "", "ARCH")
        ->type_name("ARCHS")
        ->group(selection);

    const std::string actions = "What to do (default: warm the cache)";
    app.add_flag("-l,--list", list, "Show the kernels, and for which GPUs each is cached")->group(actions);
    app.add_flag("--verify", verify, "Check each entry's header and checksum (on a GPU: load each CUBIN)")
        ->group(actions);
    app.add_flag("--clear", clear, "Remove every entry of the cache, and nothing else")->group(actions);
    CLI::Option* max_size_option = app.add_option(
        "--max-size", max_size, "Remove least recently used entries beyond SIZE (500M, 2G: powers of 1024)");
    max_size_option->type_name("SIZE")->check(check_size, "", "SIZE")->group(actions);

    const std::string general = "General";
    CLI::Option* cache_dir_option = app.add_option("-C,--cache-dir", cache_dir, "The cache folder (default: see below)")
                                        ->type_name("DIR")
                                        ->check(check_cache_dir, "", "DIR")
                                        ->group(general);
    const std::string jobs_help = fmt::format("Kernels compiled at once (default: {}, the cores here)", default_jobs);
    app.add_option("-j,--jobs", jobs, jobs_help)->check(check_jobs, "", "JOBS")->type_name("N")->group(general);
    app.add_flag("--json", json, "Print one JSON document (and nothing else) on standard output")->group(general);
    app.add_flag("-q,--quiet", quiet, "Print only errors")->group(general);

    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {
        app.exit(e);  // --help, --version
        return std::nullopt;
    } catch (const CLI::ParseError& e) {
        throw Fatal{kUsage, fmt::format("{}\nRun with --help for the options.", e.what())};
    }

    const bool trim = max_size_option->count() > 0;
    if (int(list) + int(verify) + int(clear) + int(trim) > 1)
        throw Fatal{kUsage, "--list, --verify, --clear and --max-size are separate commands: give one at a time"};
    if ((clear || trim) && !s.everything())
        throw Fatal{kUsage, "--clear and --max-size act on the whole cache: they take no kernel selection"};
    o.command = list     ? Command::List
                : verify ? Command::Verify
                : clear  ? Command::Clear
                : trim   ? Command::Trim
                         : Command::Warm;
    if (trim) o.max_bytes = *parse_size(max_size);  // the checks above have accepted each value
    o.jobs = *parse_jobs(jobs);
    if (cache_dir_option->count() > 0) o.cache_dir = cache_dir;
    std::set<int> named;
    for (const auto& text : archs) {
        const int arch = *parse_arch(text);
        if (arch == 0) o.all_archs = true;
        else named.insert(arch);
    }
    o.archs.assign(named.begin(), named.end());
    o.output = output_mode(json, quiet);
    return o;
}

Command command_named_in(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--list" || a == "-l") return Command::List;
        if (a == "--verify") return Command::Verify;
        if (a == "--clear") return Command::Clear;
        if (a.starts_with("--max-size")) return Command::Trim;
    }
    return Command::Warm;
}

bool json_asked_in(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) == "--json") return true;
    return false;
}

}  // namespace warmup
