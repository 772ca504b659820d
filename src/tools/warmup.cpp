// tropical-gemm-warmup: compiles tropical-gemm's kernels ahead of time into its disk cache, and
// lists, verifies, bounds and clears that cache.
//
// A thin program over the public API (tropical/cache.hpp, tropical/kernels.hpp): it includes no
// header from src/ and links only what the shared library exports, so that it proves the public
// API is enough to administer the cache.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <tropical/cache.hpp>
#include <tropical/diagnostics.hpp>
#include <tropical/error.hpp>
#include <tropical/kernels.hpp>

namespace {

using namespace tropical;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kProgram = "tropical-gemm-warmup";

// The exit codes, as --help documents them.
enum ExitCode : int {
    kSuccess = 0,
    kFailed = 1,       // a kernel failed to compile, or a cache entry failed verification
    kUsage = 2,        // unknown option, kernel, group, type, semiring or architecture
    kEnvironment = 3,  // no NVRTC, cache not writable, no GPU and no --arch
};

const char* exit_kind(int code) {
    switch (code) {
    case kFailed: return "failed";
    case kUsage: return "usage";
    case kEnvironment: return "environment";
    default: return "success";
    }
}

// An error that ends the program with `code` and `message`.
struct Fatal {
    int code;
    std::string message;
};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// --- a tiny JSON writer: one document, commas placed automatically ------------------------------

std::string json_quote(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
            else out += c;
        }
    }
    return out + "\"";
}

class Json {
public:
    Json& object() { return open('{'); }
    Json& end_object() { return close('}'); }
    Json& array() { return open('['); }
    Json& end_array() { return close(']'); }
    Json& key(std::string_view name) {
        separate();
        text_ += json_quote(name) + ":";
        after_key_ = true;
        return *this;
    }
    Json& value(std::string_view v) { return raw(json_quote(v)); }
    Json& value(const char* v) { return raw(json_quote(v)); }
    Json& value(const std::string& v) { return raw(json_quote(v)); }
    Json& value(bool v) { return raw(v ? "true" : "false"); }
    Json& value(int v) { return raw(std::to_string(v)); }
    Json& value(std::size_t v) { return raw(std::to_string(v)); }
    Json& value(std::int64_t v) { return raw(std::to_string(v)); }
    Json& value(double v) { return raw(std::isfinite(v) ? fmt::format("{:.4f}", v) : "null"); }
    Json& null() { return raw("null"); }
    template <class T>
    Json& field(std::string_view name, const T& v) {
        key(name);
        return value(v);
    }
    Json& null_field(std::string_view name) {
        key(name);
        return null();
    }
    const std::string& text() const { return text_; }

private:
    void separate() {
        if (after_key_) {
            after_key_ = false;
            return;
        }
        if (!first_.empty()) {
            if (!first_.back()) text_ += ',';
            first_.back() = false;
        }
    }
    Json& raw(std::string_view token) {
        separate();
        text_ += token;
        return *this;
    }
    Json& open(char bracket) {
        separate();
        text_ += bracket;
        first_.push_back(true);
        return *this;
    }
    Json& close(char bracket) {
        text_ += bracket;
        first_.pop_back();
        return *this;
    }

    std::string text_;
    std::vector<bool> first_;
    bool after_key_ = false;
};

// --- words -------------------------------------------------------------------------------------

// "1 entry", "2 entries".
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

std::string_view semiring_name(const KernelInfo& k) { return k.semiring ? to_string(*k.semiring) : "any"; }

// Edit distance, for "did you mean".
std::size_t distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// --- options -----------------------------------------------------------------------------------

const std::vector<std::string> kGroups = {"gemm", "gemm_argmax", "batched", "backward_a", "backward_b", "backward"};
const std::vector<std::string> kTypes = {"f32", "f64", "i32", "i64"};
const std::vector<std::string> kSemirings = {"maxplus", "minplus", "maxmul"};

struct Options {
    std::vector<std::string> groups, types, semirings, kernels, archs;
    unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
    bool list = false, verify = false, clear = false, json = false, quiet = false;
    std::string max_size, cache_dir;
};

// A checker for CLI11 that accepts one of `choices`, naming them all otherwise.
std::function<std::string(const std::string&)> one_of(std::string what, std::vector<std::string> choices) {
    return [what = std::move(what), choices = std::move(choices)](const std::string& v) -> std::string {
        if (std::find(choices.begin(), choices.end(), v) != choices.end()) return {};
        std::string all;
        for (const auto& c : choices) all += (all.empty() ? "" : ", ") + c;
        return fmt::format("unknown {} '{}': choose from {}", what, v, all);
    };
}

std::string check_kernel(const std::string& name) {
    if (find_kernel(name)) return {};
    std::string_view best;
    std::size_t best_distance = SIZE_MAX;
    for (const auto& k : kernel_registry())
        if (const auto d = distance(name, k.name); d < best_distance) best = k.name, best_distance = d;
    return fmt::format("unknown kernel '{}'{}; `{} --list` shows every kernel", name,
                       best_distance <= 4 ? fmt::format(" (did you mean {}?)", best) : "", kProgram);
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
    return fmt::format("'{}' is not an architecture: write sm_XY as in sm_80 or sm_90 (XY: the compute capability), "
                       "or all",
                       text);
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
    static const std::map<std::string, double> scale = {
        {"", 1}, {"B", 1}, {"K", 1024.0}, {"KB", 1024.0}, {"KIB", 1024.0}, {"M", 1048576.0}, {"MB", 1048576.0},
        {"MIB", 1048576.0}, {"G", 1073741824.0}, {"GB", 1073741824.0}, {"GIB", 1073741824.0},
        {"T", 1099511627776.0}, {"TB", 1099511627776.0}, {"TIB", 1099511627776.0}};
    const auto it = scale.find(unit);
    if (it == scale.end() || number < 0 || number * it->second > 9e18) return std::nullopt;
    return static_cast<std::uintmax_t>(number * it->second);
}

// The kernels the selection options name: all of them without any; otherwise those that match
// every option given (several values of one option: any of them).
std::vector<const KernelInfo*> select_kernels(const Options& o) {
    auto wanted = [](const std::vector<std::string>& values, std::string_view v) {
        return values.empty() || std::find(values.begin(), values.end(), v) != values.end();
    };
    std::vector<const KernelInfo*> out;
    for (const auto& k : kernel_registry()) {
        const std::string_view group = to_string(k.group);
        const bool backward = k.group == KernelGroup::BackwardA || k.group == KernelGroup::BackwardB;
        const bool group_ok = o.groups.empty() || wanted(o.groups, group) ||
                              (backward && std::find(o.groups.begin(), o.groups.end(), "backward") != o.groups.end());
        // Backward kernels take the semiring at launch: every semiring selects them.
        const bool semiring_ok = !k.semiring || wanted(o.semirings, to_string(*k.semiring));
        if (group_ok && semiring_ok && wanted(o.types, to_string(k.dtype)) && wanted(o.kernels, k.name))
            out.push_back(&k);
    }
    return out;
}

bool has_selection(const Options& o) {
    return !o.groups.empty() || !o.types.empty() || !o.semirings.empty() || !o.kernels.empty();
}

CacheSettings resolve_settings(const Options& o) {
    if (!o.cache_dir.empty()) return CacheSettings{true, o.cache_dir};
    CacheSettings settings = cache_settings_from_environment();
    if (settings.root.empty())
        throw Fatal{kEnvironment,
                    "there is no kernel cache folder: HOME, XDG_CACHE_HOME and TROPICAL_GEMM_CACHE_DIR are all unset. "
                    "Pass --cache-dir."};
    return settings;
}

// --- output ------------------------------------------------------------------------------------

enum class Mode { Json, Bar, Lines, Quiet };

Mode output_mode(const Options& o) {
    if (o.json) return Mode::Json;
    if (o.quiet) return Mode::Quiet;
    return ::isatty(STDOUT_FILENO) ? Mode::Bar : Mode::Lines;
}

struct Warnings {
    std::mutex mutex;
    std::vector<std::string> messages;
};

Warnings& warnings() {
    static Warnings w;
    return w;
}

void print_error(std::string_view message) {
    std::fprintf(stderr, "%s: error: %.*s\n", kProgram, static_cast<int>(message.size()), message.data());
}

void write_warnings(Json& json) {
    json.key("warnings").array();
    std::lock_guard lock(warnings().mutex);
    for (const auto& w : warnings().messages) json.value(w);
    json.end_array();
}

// The JSON document of a command that ended in an error before producing anything.
void print_json_error(std::string_view command, int code, std::string_view message) {
    Json json;
    json.object().field("command", command).field("exit_code", code);
    json.key("error").object().field("kind", exit_kind(code)).field("message", message).end_object();
    write_warnings(json);
    json.end_object();
    std::printf("%s\n", json.text().c_str());
}

void write_entry(Json& json, const CacheEntry& e) {
    json.field("kernel", e.kernel).field("known", e.info != nullptr).field("arch", arch_name(e.arch));
    json.field("kind", to_string(e.kind)).field("key", e.key).field("path", e.path.string());
    json.field("bytes", static_cast<std::int64_t>(e.bytes));
    json.field("last_used", utc_time(e.last_used)).field("last_used_unix", unix_seconds(e.last_used));
    json.field("valid", e.valid);
    if (e.valid) json.null_field("problem");
    else json.field("problem", e.problem);
    if (e.current) json.field("current", *e.current);
    else json.null_field("current");
}

// "key": [ {entry}, ... ]
void write_entries(Json& json, const char* key, const std::vector<CacheEntry>& entries) {
    json.key(key).array();
    for (const auto& e : entries) {
        json.object();
        write_entry(json, e);
        json.end_object();
    }
    json.end_array();
}

// --- warm ----------------------------------------------------------------------------------------

struct Task {
    const KernelInfo* kernel = nullptr;
    int arch = 0;
    enum class Status { Pending, Compiled, Cached, Failed, Skipped } status = Status::Pending;
    double seconds = 0;
    bool ptx_for_jit = false;
    std::string error;
};

const char* status_name(Task::Status s) {
    switch (s) {
    case Task::Status::Compiled: return "compiled";
    case Task::Status::Cached: return "cached";
    case Task::Status::Failed: return "failed";
    case Task::Status::Skipped: return "skipped";
    case Task::Status::Pending: break;
    }
    return "pending";
}

// Progress: a bar redrawn in place on a terminal, one line per kernel otherwise.
class Progress {
public:
    Progress(Mode mode, std::size_t total) : mode_(mode), total_(total), start_(Clock::now()) {
        winsize size{};
        if (mode_ == Mode::Bar && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20)
            width_ = size.ws_col;
    }

    void started(const Task& task) {
        std::lock_guard lock(mutex_);
        current_ = fmt::format("{} {}", arch_name(task.arch), task.kernel->name);
        if (mode_ == Mode::Bar) draw();
    }

    void finished(const Task& task) {
        std::lock_guard lock(mutex_);
        ++done_;
        if (task.status == Task::Status::Compiled) ++compiled_;
        if (task.status == Task::Status::Failed) ++failed_;
        if (task.status == Task::Status::Failed && mode_ != Mode::Json) {
            if (mode_ == Mode::Bar) clear_line();
            print_error(fmt::format("{} for {}: {}", task.kernel->name, arch_name(task.arch), task.error));
        }
        if (mode_ == Mode::Lines && task.status != Task::Status::Failed) {
            std::printf("%-8s %-6s %-32s %6.2f s%s\n", status_name(task.status), arch_name(task.arch).c_str(),
                        std::string(task.kernel->name).c_str(), task.seconds,
                        task.ptx_for_jit ? "  (PTX, for the driver to finish)" : "");
            std::fflush(stdout);
        }
        if (mode_ == Mode::Bar) draw();
    }

    void end() {
        std::lock_guard lock(mutex_);
        if (mode_ == Mode::Bar) clear_line();
    }

private:
    void clear_line() {
        std::printf("\r\x1b[K");
        std::fflush(stdout);
    }

    void draw() {
        constexpr std::size_t kBar = 30;
        const std::size_t filled = total_ ? done_ * kBar / total_ : kBar;
        std::string line = "[" + std::string(filled, '#') + std::string(kBar - filled, '.') + "]";
        line += fmt::format(" {}/{}  {} compiled{}  {:.1f} s  {}", done_, total_, compiled_,
                            failed_ ? fmt::format(", {} FAILED", failed_) : "", seconds_since(start_), current_);
        if (line.size() >= width_) line.resize(width_ - 1);
        std::printf("\r\x1b[K%s", line.c_str());
        std::fflush(stdout);
    }

    Mode mode_;
    std::size_t total_, done_ = 0, compiled_ = 0, failed_ = 0;
    std::size_t width_ = 80;
    Clock::time_point start_;
    std::string current_;
    std::mutex mutex_;
};

// The architectures to warm: those named (checked against what NVRTC can target, when it can be
// loaded), else those of this machine's GPUs.
std::vector<int> target_architectures(const Options& o, std::string& note) {
    if (o.archs.empty()) {
        std::vector<int> local;
        try {
            local = device_architectures();
        } catch (const Error& e) {
            throw Fatal{kEnvironment, fmt::format("no CUDA GPU here to warm the cache for, and no --arch. To warm the "
                                                  "cache for other machines, name their architectures: --arch "
                                                  "sm_80,sm_90\nWhy no GPU: {}",
                                                  e.what())};
        }
        if (local.empty())
            throw Fatal{kEnvironment, "this machine has no CUDA GPU. To warm the cache for other machines, name their "
                                      "architectures: --arch sm_80,sm_90"};
        std::sort(local.begin(), local.end());
        local.erase(std::unique(local.begin(), local.end()), local.end());
        return local;
    }

    std::set<int> named;
    bool all = false;
    for (const auto& text : o.archs) {
        const int arch = *parse_arch(text);  // CLI11 checked the syntax
        if (arch == 0) all = true;
        else named.insert(arch);
    }
    std::vector<int> known;
    try {
        known = supported_architectures();
    } catch (const NoCompiler& e) {
        // A warm cache needs no NVRTC: go on unchecked; a kernel that must be compiled reports it.
        if (all)
            throw Fatal{kEnvironment, fmt::format("--arch all needs NVRTC to know the architectures: {}", e.what())};
        note = "NVRTC could not be loaded, so the architectures were not checked";
        return {named.begin(), named.end()};
    }
    if (all) return known;
    for (int arch : named)
        if (!std::binary_search(known.begin(), known.end(), arch))
            throw Fatal{kUsage,
                        fmt::format("NVRTC cannot compile for {}: it knows {}", arch_name(arch), arch_list(known))};
    return {named.begin(), named.end()};
}

int run_warm(const Options& o, Mode mode) {
    const auto start = Clock::now();
    const CacheSettings settings = resolve_settings(o);
    if (!settings.enabled && o.cache_dir.empty())
        throw Fatal{kEnvironment, "the kernel cache is disabled (TROPICAL_GEMM_CACHE=off): there is nothing to warm. "
                                  "Unset TROPICAL_GEMM_CACHE, or pass --cache-dir."};
    const auto kernels = select_kernels(o);
    if (kernels.empty()) throw Fatal{kUsage, "no kernel matches the selection; `--list` shows every kernel"};
    std::string note;
    const std::vector<int> archs = target_architectures(o, note);

    std::vector<Task> tasks;
    for (const KernelInfo* k : kernels)
        for (int arch : archs) {
            Task& task = tasks.emplace_back();
            task.kernel = k;
            task.arch = arch;
        }

    Progress progress(mode, tasks.size());
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stop{false};
    std::mutex fatal_mutex;
    std::optional<Fatal> fatal;
    auto stop_with = [&](int code, std::string message) {
        std::lock_guard lock(fatal_mutex);
        if (!fatal) fatal = Fatal{code, std::move(message)};
        stop = true;
    };
    auto work = [&] {
        for (std::size_t i; !stop && (i = next++) < tasks.size();) {
            Task& task = tasks[i];
            progress.started(task);
            const auto task_start = Clock::now();
            try {
                const WarmResult r = warm_kernel(settings, *task.kernel, task.arch);
                task.status = r.compiled ? Task::Status::Compiled : Task::Status::Cached;
                task.ptx_for_jit = r.ptx_for_jit;
                task.seconds = r.seconds;
            } catch (const NoCompiler& e) {
                task.status = Task::Status::Skipped;
                stop_with(kEnvironment, e.what());
            } catch (const CacheNotWritable& e) {
                task.status = Task::Status::Skipped;
                stop_with(kEnvironment, std::string(e.what()) + " With this tool: --cache-dir DIR.");
            } catch (const Unsupported& e) {
                task.status = Task::Status::Skipped;
                stop_with(kUsage, e.what());
            } catch (const std::exception& e) {
                task.status = Task::Status::Failed;
                task.error = e.what();
                task.seconds = seconds_since(task_start);
            }
            if (task.status != Task::Status::Skipped) progress.finished(task);
        }
    };
    const std::size_t threads = std::min<std::size_t>(o.jobs, tasks.size());
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    progress.end();
    for (auto& task : tasks)
        if (task.status == Task::Status::Pending) task.status = Task::Status::Skipped;

    std::map<Task::Status, std::size_t> count;
    struct GroupTime {
        std::size_t kernels = 0, compiled = 0;
        double seconds = 0;
    };
    std::map<std::pair<int, KernelGroup>, GroupTime> by_group;  // by architecture, then in registry order
    for (const auto& task : tasks) {
        ++count[task.status];
        auto& g = by_group[{task.arch, task.kernel->group}];
        ++g.kernels;
        if (task.status == Task::Status::Compiled) {
            ++g.compiled;
            g.seconds += task.seconds;
        }
    }
    const int code = fatal ? fatal->code : count[Task::Status::Failed] ? kFailed : kSuccess;
    const double total_seconds = seconds_since(start);

    if (fatal) print_error(fatal->message);  // on standard error in every mode
    if (mode == Mode::Json) {
        Json json;
        json.object().field("command", "warm").field("exit_code", code);
        json.field("cache_dir", settings.root.string());
        json.field("format_dir", cache_format_directory(settings.root).string());
        json.key("architectures").array();
        for (int a : archs) json.value(arch_name(a));
        json.end_array();
        json.field("jobs", static_cast<std::size_t>(o.jobs)).field("kernels_selected", kernels.size());
        json.field("tasks", tasks.size());
        json.field("compiled", count[Task::Status::Compiled]).field("cached", count[Task::Status::Cached]);
        json.field("failed", count[Task::Status::Failed]).field("skipped", count[Task::Status::Skipped]);
        json.field("seconds", total_seconds);
        json.key("compile_seconds_by_group").array();
        for (const auto& [id, g] : by_group) {
            json.object().field("arch", arch_name(id.first)).field("group", to_string(id.second));
            json.field("kernels", g.kernels).field("compiled", g.compiled).field("seconds", g.seconds).end_object();
        }
        json.end_array();
        json.key("results").array();
        for (const auto& t : tasks) {
            json.object().field("kernel", t.kernel->name).field("group", to_string(t.kernel->group));
            json.field("type", to_string(t.kernel->dtype)).field("semiring", semiring_name(*t.kernel));
            json.field("arch", arch_name(t.arch)).field("status", status_name(t.status)).field("seconds", t.seconds);
            json.field("ptx_for_jit", t.ptx_for_jit);
            if (t.status == Task::Status::Failed) json.field("error", t.error);
            json.end_object();
        }
        json.end_array();
        if (fatal)
            json.key("error").object().field("kind", exit_kind(fatal->code)).field("message", fatal->message)
                .end_object();
        else
            json.null_field("error");
        if (!note.empty()) json.field("note", note);
        write_warnings(json);
        json.end_object();
        std::printf("%s\n", json.text().c_str());
        return code;
    }

    if (mode == Mode::Quiet) return code;
    if (!note.empty()) std::printf("note: %s\n", note.c_str());
    std::printf("%s: %s x %s: %zu compiled, %zu already cached%s%s in %.2f s\n",
                cache_format_directory(settings.root).string().c_str(),
                count_of(kernels.size(), "kernel", "kernels").c_str(), arch_list(archs).c_str(),
                count[Task::Status::Compiled], count[Task::Status::Cached],
                count[Task::Status::Failed] ? fmt::format(", {} FAILED", count[Task::Status::Failed]).c_str() : "",
                count[Task::Status::Skipped] ? fmt::format(", {} skipped", count[Task::Status::Skipped]).c_str() : "",
                total_seconds);
    if (count[Task::Status::Compiled] > 0) {
        std::string line;
        for (const auto& [id, g] : by_group)
            if (g.compiled)
                line += fmt::format("{}{} {} {:.1f} s", line.empty() ? "" : ", ", arch_name(id.first),
                                    to_string(id.second), g.seconds);
        std::printf("compile time by group, summed over its kernels (%u jobs): %s\n", o.jobs, line.c_str());
    }
    return code;
}

// --- list and verify -------------------------------------------------------------------------

std::vector<CacheEntry> selected_entries(const Options& o, const CacheListing& listing) {
    std::set<std::size_t> kernels;
    for (const KernelInfo* k : select_kernels(o)) kernels.insert(k->index);
    std::set<int> archs;
    for (const auto& text : o.archs)
        if (const int a = *parse_arch(text); a != 0) archs.insert(a);
    std::vector<CacheEntry> out;
    for (const auto& e : listing.entries) {
        if (has_selection(o) && (!e.info || !kernels.count(e.info->index))) continue;
        if (!archs.empty() && !archs.count(e.arch)) continue;
        out.push_back(e);
    }
    return out;
}

// Whether an entry is what a process on a device of its architecture would load.
bool usable(const CacheEntry& e) {
    return e.valid && e.current != false && e.kind != CacheEntryKind::Ptx;
}

void write_listing_header(Json& json, const CacheSettings& settings, const CacheListing& listing) {
    json.field("cache_dir", settings.root.string()).field("format_dir", listing.directory.string());
    if (listing.compiler) {
        json.key("compiler").object();
        json.field("nvrtc", fmt::format("{}.{}", listing.compiler->major, listing.compiler->minor));
        json.field("library", listing.compiler->library_path).end_object();
    } else {
        json.null_field("compiler");
    }
    json.field("entry_bytes", static_cast<std::int64_t>(listing.entry_bytes)).field("temp_files", listing.temp_files);
}

std::string compiler_words(const CacheListing& listing) {
    return listing.compiler ? fmt::format("filled by NVRTC {}.{}, {}", listing.compiler->major, listing.compiler->minor,
                                          listing.compiler->library_path)
                            : "no compiler recorded";
}

int run_list(const Options& o, Mode mode) {
    const CacheSettings settings = resolve_settings(o);
    const CacheListing listing = list_cache(settings);
    const auto entries = selected_entries(o, listing);
    const auto kernels = select_kernels(o);
    std::map<std::size_t, std::set<int>> cached;  // registry index -> archs
    std::set<int> archs;
    std::uintmax_t bytes = 0;
    std::size_t invalid = 0, stale = 0;
    for (const auto& e : entries) {
        bytes += e.bytes;
        archs.insert(e.arch);
        if (!e.valid) ++invalid;
        else if (e.current == false) ++stale;
        if (usable(e) && e.info) cached[e.info->index].insert(e.arch);
    }

    if (mode == Mode::Json) {
        Json json;
        json.object().field("command", "list").field("exit_code", static_cast<int>(kSuccess));
        write_listing_header(json, settings, listing);
        json.key("kernels").array();
        for (const KernelInfo* k : kernels) {
            json.object().field("name", k->name).field("index", k->index).field("group", to_string(k->group));
            json.field("type", to_string(k->dtype)).field("semiring", semiring_name(*k));
            json.key("cached").array();
            for (int a : cached[k->index]) json.value(arch_name(a));
            json.end_array().end_object();
        }
        json.end_array();
        write_entries(json, "entries", entries);
        write_warnings(json);
        json.end_object();
        std::printf("%s\n", json.text().c_str());
        return kSuccess;
    }

    std::printf("Kernel cache %s (%s)\n", listing.directory.string().c_str(), compiler_words(listing).c_str());
    std::printf("%s, %s%s\n\n", count_of(entries.size(), "entry", "entries").c_str(), human_bytes(bytes).c_str(),
                archs.empty() ? "" : fmt::format(", for {}", arch_list({archs.begin(), archs.end()})).c_str());
    std::printf("%-34s %-12s %-5s %-8s %s\n", "kernel", "group", "type", "semiring", "cached for");
    for (const KernelInfo* k : kernels) {
        std::vector<int> on(cached[k->index].begin(), cached[k->index].end());
        std::printf("%-34s %-12s %-5s %-8s %s\n", std::string(k->name).c_str(),
                    std::string(to_string(k->group)).c_str(), std::string(to_string(k->dtype)).c_str(),
                    std::string(semiring_name(*k)).c_str(), on.empty() ? "-" : arch_list(on).c_str());
    }
    if (stale)
        std::printf("\n%s for another kernel source or NVRTC version, no longer used: --max-size removes them "
                    "first, --clear removes everything.\n",
                    count_of(stale, "valid entry is", "valid entries are").c_str());
    if (invalid)
        std::printf("\n%s verification; --verify names them.\n",
                    count_of(invalid, "entry fails", "entries fail").c_str());
    if (listing.temp_files)
        std::printf("\n%s (temp files) in the cache.\n",
                    count_of(listing.temp_files, "unfinished write", "unfinished writes").c_str());
    return kSuccess;
}

struct Loaded {
    std::optional<bool> ok;  // empty: not loaded
    std::string error;
};

int run_verify(const Options& o, Mode mode) {
    const CacheSettings settings = resolve_settings(o);
    const CacheListing listing = list_cache(settings);
    const auto entries = selected_entries(o, listing);

    // With a GPU, every valid CUBIN of a local device's architecture is loaded by the driver.
    std::map<int, int> device_of_arch;
    std::string no_gpu;
    try {
        const auto archs = device_architectures();
        for (int ordinal = static_cast<int>(archs.size()) - 1; ordinal >= 0; --ordinal)
            device_of_arch[archs[static_cast<std::size_t>(ordinal)]] = ordinal;
        if (archs.empty()) no_gpu = "this machine has no CUDA GPU";
    } catch (const Error& e) {
        no_gpu = first_line(e.what());
    }
    std::vector<Loaded> loaded(entries.size());
    std::size_t invalid = 0, load_failures = 0, loads = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& e = entries[i];
        if (!e.valid) {
            ++invalid;
            continue;
        }
        const auto device = device_of_arch.find(e.arch);
        if (e.kind != CacheEntryKind::Cubin || device == device_of_arch.end()) continue;
        try {
            if (!load_cache_entry(e, device->second)) continue;  // removed meanwhile: nothing to check
            ++loads;
            loaded[i].ok = true;
        } catch (const Error& error) {
            loaded[i] = {false, error.what()};
            ++loads;
            ++load_failures;
        }
    }
    const int code = invalid + load_failures ? kFailed : kSuccess;

    if (mode == Mode::Json) {
        Json json;
        json.object().field("command", "verify").field("exit_code", code);
        write_listing_header(json, settings, listing);
        json.field("checked", entries.size()).field("invalid", invalid).field("loaded", loads);
        json.field("load_failures", load_failures);
        if (no_gpu.empty()) json.null_field("not_loaded_because");
        else json.field("not_loaded_because", no_gpu);
        json.key("entries").array();
        for (std::size_t i = 0; i < entries.size(); ++i) {
            json.object();
            write_entry(json, entries[i]);
            if (loaded[i].ok) json.field("loads", *loaded[i].ok);
            else json.null_field("loads");
            if (!loaded[i].error.empty()) json.field("load_error", loaded[i].error);
            json.end_object();
        }
        json.end_array();
        write_warnings(json);
        json.end_object();
        std::printf("%s\n", json.text().c_str());
        return code;
    }

    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& e = entries[i];
        if (!e.valid)
            std::printf("BAD     %s: %s\n", e.path.string().c_str(), e.problem.c_str());
        else if (loaded[i].ok == false)
            std::printf("NO LOAD %s: %s\n", e.path.string().c_str(), loaded[i].error.c_str());
    }
    if (mode == Mode::Quiet) return code;
    std::printf("%s: %s checked, %zu %s verification", listing.directory.string().c_str(),
                count_of(entries.size(), "entry", "entries").c_str(), invalid, invalid == 1 ? "fails" : "fail");
    if (no_gpu.empty()) std::printf("; %zu CUBINs loaded on this machine's GPU, %zu refused", loads, load_failures);
    std::printf("\n");
    if (!no_gpu.empty()) std::printf("CUBINs not loaded on a GPU: %s\n", no_gpu.c_str());
    if (invalid)
        std::printf("Bad entries are recompiled and overwritten when next used; run the warm-up again to repair them "
                    "now, or --clear to start afresh.\n");
    return code;
}

// --- clear and trim ------------------------------------------------------------------------------

int run_clear(const Options& o, Mode mode) {
    const CacheSettings settings = resolve_settings(o);
    RemovedFiles removed;
    try {
        removed = clear_cache(settings);
    } catch (const CacheNotWritable& e) {
        throw Fatal{kEnvironment, e.what()};
    }
    if (mode == Mode::Json) {
        Json json;
        json.object().field("command", "clear").field("exit_code", static_cast<int>(kSuccess));
        json.field("format_dir", cache_format_directory(settings.root).string());
        json.field("removed_files", removed.files).field("removed_entries", removed.entries.size());
        json.field("removed_bytes", static_cast<std::int64_t>(removed.bytes));
        write_warnings(json);
        json.end_object();
        std::printf("%s\n", json.text().c_str());
    } else if (mode != Mode::Quiet) {
        std::printf("%s: removed %zu files (%zu entries), %s\n", cache_format_directory(settings.root).string().c_str(),
                    removed.files, removed.entries.size(), human_bytes(removed.bytes).c_str());
    }
    return kSuccess;
}

int run_trim(const Options& o, Mode mode) {
    const CacheSettings settings = resolve_settings(o);
    const std::uintmax_t limit = *parse_size(o.max_size);  // CLI11 checked it
    const std::uintmax_t before = list_cache(settings).entry_bytes;
    RemovedFiles removed;
    try {
        removed = trim_cache(settings, limit);
    } catch (const CacheNotWritable& e) {
        throw Fatal{kEnvironment, e.what()};
    }
    const std::uintmax_t after = before - std::min(before, removed.bytes);
    if (mode == Mode::Json) {
        Json json;
        json.object().field("command", "trim").field("exit_code", static_cast<int>(kSuccess));
        json.field("format_dir", cache_format_directory(settings.root).string());
        json.field("max_bytes", static_cast<std::int64_t>(limit));
        json.field("bytes_before", static_cast<std::int64_t>(before));
        json.field("bytes_after", static_cast<std::int64_t>(after));
        write_entries(json, "removed", removed.entries);
        write_warnings(json);
        json.end_object();
        std::printf("%s\n", json.text().c_str());
    } else if (mode != Mode::Quiet) {
        if (mode == Mode::Lines || mode == Mode::Bar)
            for (const auto& e : removed.entries)
                std::printf("removed %-6s %-34s %-7s last used %s\n", arch_name(e.arch).c_str(), e.kernel.c_str(),
                            std::string(to_string(e.kind)).c_str(), utc_time(e.last_used).c_str());
        std::printf("%s: %s of entries, limit %s: removed %zu entries (%s)\n",
                    cache_format_directory(settings.root).string().c_str(), human_bytes(before).c_str(),
                    human_bytes(limit).c_str(), removed.entries.size(), human_bytes(removed.bytes).c_str());
    }
    return kSuccess;
}

// --- the command line ------------------------------------------------------------------------------

constexpr const char* kDescription =
    R"(tropical-gemm-warmup: compile tropical-gemm's GPU kernels ahead of time into its kernel cache, so
that programs using the library start without compiling anything.

The library compiles each kernel with NVRTC the first time a process needs it, and keeps the result
in a disk cache. This tool fills that cache in advance, in parallel: for the GPUs of this machine,
or with --arch for other machines' GPUs with no GPU here at all (e.g. while building a container
image or a cluster's shared cache). It also lists, verifies, bounds and clears the cache.
)";

constexpr const char* kFooter = R"(Examples:
  tropical-gemm-warmup                           every kernel, for this machine's GPUs
  tropical-gemm-warmup --arch sm_80,sm_90        every kernel for A100 and H100/H200 GPUs; no GPU needed
  tropical-gemm-warmup --group gemm --type f32   only the plain f32 products (3 kernels)
  tropical-gemm-warmup --list                    the kernels, and which are cached for which GPUs
  tropical-gemm-warmup --verify                  check every entry (and, on a GPU, load its CUBIN)
  tropical-gemm-warmup --max-size 500M           drop least recently used entries beyond 500 MiB

Selection: without --kernel, --group, --type or --semiring, every kernel. Several options select the
kernels that match all of them; several values of one option (comma-separated or repeated) match any.
Backward kernels serve every semiring, so --semiring never excludes them.

Cache folder: --cache-dir, else $TROPICAL_GEMM_CACHE_DIR, else $XDG_CACHE_HOME/tropical-gemm, else
~/.cache/tropical-gemm. Entries live in its v1/sm_XY/ folders; anything else there is left alone.
NVRTC, needed only when a kernel must be compiled (a warm cache works without it): $TROPICAL_GEMM_NVRTC,
else libnvrtc.so.13 or .12, else $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64.
Output: a progress bar on a terminal, one line per kernel otherwise; --json prints one JSON document
(with per-kernel compile seconds) and nothing else on standard output. Errors go to standard error.

Exit codes:
  0  success
  1  a kernel failed to compile, or a cache entry failed verification
  2  usage error: unknown option, kernel, group, type, semiring or architecture
  3  environment error: NVRTC not found, cache folder not writable, no GPU here and no --arch)";

int run(int argc, char** argv) {
    Options o;
    CLI::App app(kDescription, kProgram);
    app.footer(kFooter);
    app.get_formatter()->column_width(34);
    app.set_version_flag("--version", std::string(TROPICAL_GEMM_VERSION));

    const std::string selection = "Which kernels (default: all)";
    app.add_option("-k,--kernel", o.kernels, "By name, e.g. tropical_gemm_f32_maxplus (--list names them)")
        ->delimiter(',')->check(check_kernel, "", "KERNEL")->type_name("NAME")->group(selection);
    app.add_option("-g,--group", o.groups, "gemm, gemm_argmax, batched, backward_a, backward_b, or backward (both)")
        ->delimiter(',')->check(one_of("group", kGroups), "", "GROUP")->type_name("GROUP")->group(selection);
    app.add_option("-t,--type", o.types, "f32, f64, i32, i64")
        ->delimiter(',')->check(one_of("type", kTypes), "", "TYPE")->type_name("TYPE")->group(selection);
    app.add_option("-s,--semiring", o.semirings, "maxplus, minplus, maxmul")
        ->delimiter(',')
        ->check(one_of("semiring", kSemirings), "", "SEMIRING")
        ->type_name("SEMIRING")
        ->group(selection);
    app.add_option("-a,--arch", o.archs,
                   "GPUs to compile for, e.g. sm_80,sm_90, or all (default: this machine's)")
        ->delimiter(',')->check(check_arch, "", "ARCH")->type_name("ARCHS")->group(selection);

    const std::string actions = "What to do (default: warm the cache)";
    app.add_flag("-l,--list", o.list, "Show the kernels, and for which GPUs each is cached")->group(actions);
    app.add_flag("--verify", o.verify,
                                "Check each entry's header and checksum (on a GPU: load each CUBIN)")->group(actions);
    app.add_flag("--clear", o.clear, "Remove every entry of the cache, and nothing else")->group(actions);
    app.add_option("--max-size", o.max_size,
                                "Remove least recently used entries beyond SIZE (500M, 2G: powers of 1024)")
        ->type_name("SIZE")
        ->check([](const std::string& v) -> std::string {
            return parse_size(v) ? "" : fmt::format("'{}' is not a size: write e.g. 500M, 2G or 1000000", v);
        }, "", "SIZE")
        ->group(actions);

    const std::string general = "General";
    app.add_option("-C,--cache-dir", o.cache_dir, "The cache folder (default: see below)")
        ->type_name("DIR")
        ->group(general);
    app.add_option("-j,--jobs", o.jobs, fmt::format("Kernels compiled at once (default: {}, the cores here)", o.jobs))
        ->check([](const std::string& v) -> std::string {
            return v.find_first_not_of("0123456789") == std::string::npos && v.size() <= 4 && std::stoi(v) >= 1
                       ? ""
                       : fmt::format("'{}' is not a number of jobs: write a whole number from 1 to 9999", v);
        }, "", "JOBS")
        ->type_name("N")->group(general);
    app.add_flag("--json", o.json, "Print one JSON document (and nothing else) on standard output")->group(general);
    app.add_flag("-q,--quiet", o.quiet, "Print only errors")->group(general);

    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {
        return app.exit(e);  // --help, --version
    } catch (const CLI::ParseError& e) {
        throw Fatal{kUsage, fmt::format("{}\nRun with --help for the options.", e.what())};
    }
    if (int(o.list) + int(o.verify) + int(o.clear) + int(!o.max_size.empty()) > 1)
        throw Fatal{kUsage, "--list, --verify, --clear and --max-size are separate commands: give one at a time"};
    if ((o.clear || !o.max_size.empty()) && has_selection(o))
        throw Fatal{kUsage, "--clear and --max-size act on the whole cache: they take no kernel selection"};

    const Mode mode = output_mode(o);
    if (o.list) return run_list(o, mode);
    if (o.verify) return run_verify(o, mode);
    if (o.clear) return run_clear(o, mode);
    if (!o.max_size.empty()) return run_trim(o, mode);
    return run_warm(o, mode);
}

// The command named on the command line, for JSON error documents written before parsing ends.
std::string command_of(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--list" || a == "-l") return "list";
        if (a == "--verify") return "verify";
        if (a == "--clear") return "clear";
        if (a.starts_with("--max-size")) return "trim";
    }
    return "warm";
}

}  // namespace

int main(int argc, char** argv) {
    bool json = false;
    for (int i = 1; i < argc; ++i) json = json || std::string_view(argv[i]) == "--json";
    tropical::set_warning_handler([](std::string_view message) {
        {
            std::lock_guard lock(warnings().mutex);
            warnings().messages.emplace_back(message);
        }
        std::fprintf(stderr, "%s: warning: %.*s\n", kProgram, static_cast<int>(message.size()), message.data());
    });
    try {
        return run(argc, argv);
    } catch (const Fatal& f) {
        if (json) print_json_error(command_of(argc, argv), f.code, f.message);
        print_error(f.message);
        return f.code;
    } catch (const NoCompiler& e) {
        if (json) print_json_error(command_of(argc, argv), kEnvironment, e.what());
        print_error(e.what());
        return kEnvironment;
    } catch (const std::exception& e) {
        if (json) print_json_error(command_of(argc, argv), kFailed, e.what());
        print_error(e.what());
        return kFailed;
    }
}
