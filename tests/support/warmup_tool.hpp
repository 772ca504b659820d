#pragma once
// Running tropical-gemm-warmup (WARMUP_TOOL) as a user runs it, a separate process, and checking
// what it prints against what is on disk: shared by the warmup_*_test files.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <tropical/cache.hpp>
#include <tropical/kernels.hpp>
#include "cache/entry_format.hpp"
#include "support/checked_calls.hpp"
#include "support/temp_dir.hpp"

extern char** environ;

namespace tropical::testing::warmup {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// --- the tool's JSON documents ------------------------------------------------------------------

// A JSON value, read by a strict parser (nlohmann-json: it refuses text that is not UTF-8), in a
// shape that keeps the checks short: doc["compiled"].integer(), e["path"].text.
struct Json {
    enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
    bool boolean = false;
    double number = 0;
    std::string text;
    std::vector<Json> items;        // array elements, or object values
    std::vector<std::string> keys;  // object keys, parallel to items

    static Json parse(std::string_view document) { return from(nlohmann::json::parse(document)); }

    static Json from(const nlohmann::json& value) {
        Json out;
        if (value.is_boolean()) {
            out.kind = Kind::Bool;
            out.boolean = value.get<bool>();
        } else if (value.is_number()) {
            out.kind = Kind::Number;
            out.number = value.get<double>();
        } else if (value.is_string()) {
            out.kind = Kind::String;
            out.text = value.get<std::string>();
        } else if (value.is_array()) {
            out.kind = Kind::Array;
            for (const auto& item : value) out.items.push_back(from(item));
        } else if (value.is_object()) {
            out.kind = Kind::Object;
            for (const auto& [key, item] : value.items()) {
                out.keys.push_back(key);
                out.items.push_back(from(item));
            }
        }
        return out;
    }

    bool has(std::string_view key) const {
        for (const auto& k : keys)
            if (k == key) return true;
        return false;
    }
    const Json& operator[](std::string_view key) const {
        for (std::size_t i = 0; i < keys.size(); ++i)
            if (keys[i] == key) return items[i];
        throw std::runtime_error("JSON object has no key " + std::string(key));
    }
    const Json& operator[](std::size_t i) const { return items.at(i); }
    std::size_t size() const { return items.size(); }
    long long integer() const { return static_cast<long long>(number); }
};

// --- running the tool -----------------------------------------------------------------------------

struct ToolRun {
    int code = -1;
    std::string out, err;
    double seconds = 0;
    bool killed = false;   // ran past the time bound it was given, and was killed
    long max_rss_kib = 0;  // its peak resident memory
    // stdout as one JSON document: --json must print that and nothing else.
    Json json() const { return Json::parse(out); }
};

inline std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// Variables to set for the tool: a value (possibly empty), or nothing to unset the variable.
using Environment = std::map<std::string, std::optional<std::string>>;

// Runs the tool with `args` and `env` changed from this process's environment; with a `bound`, a
// run still going after it is killed (`killed`).
inline ToolRun warmup(const std::vector<std::string>& args, const Environment& env = {},
                      std::optional<std::chrono::seconds> bound = std::nullopt) {
    TempDir io;
    std::vector<std::string> argv_text = {WARMUP_TOOL};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);

    std::vector<std::string> env_text;
    for (char** e = environ; *e; ++e) {
        const std::string entry = *e;
        if (!env.count(entry.substr(0, entry.find('=')))) env_text.push_back(entry);
    }
    for (const auto& [name, value] : env)
        if (value) env_text.push_back(name + "=" + *value);
    std::vector<char*> envp;
    for (auto& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);

    const fs::path out = io.path() / "out", err = io.path() / "err";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ToolRun run;
    if (rc != 0) {
        run.err = std::string("posix_spawn failed: ") + std::strerror(rc);
        return run;
    }
    int status = 0;
    rusage usage{};
    while (true) {
        const pid_t done = ::wait4(pid, &status, bound ? WNOHANG : 0, &usage);
        if (done == pid) break;
        if (done < 0 && errno != EINTR) break;
        if (bound && !run.killed && std::chrono::steady_clock::now() - start > *bound) {
            EXPECT_TRUE(send_signal(pid, SIGKILL));  // not yet reaped: there to be killed
            run.killed = true;
        }
        if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    run.max_rss_kib = usage.ru_maxrss;
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    run.out = read_text(out);
    run.err = read_text(err);
    return run;
}

inline std::string describe(const ToolRun& r) {
    return (r.killed ? "KILLED after its time bound; " : "") + std::string("exit ") + std::to_string(r.code) +
           ", peak " + std::to_string(r.max_rss_kib / 1024) + " MiB\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

// --- the cache on disk ----------------------------------------------------------------------------

// Every regular file under `dir`, relative to it.
inline std::set<std::string> files_under(const fs::path& dir) {
    std::set<std::string> out;
    if (!fs::exists(dir)) return out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file()) out.insert(fs::relative(e.path(), dir).string());
    return out;
}

inline tropical::detail::DecodedEntry decode(const fs::path& path, std::vector<std::byte>& storage) {
    const std::string raw = read_text(path);
    const auto* bytes = reinterpret_cast<const std::byte*>(raw.data());
    storage.assign(bytes, bytes + raw.size());
    return tropical::detail::decode_entry(storage);
}

// The entry file of `kernel` for `arch` with `suffix` (".cubin", ".ptx"); empty if none.
inline fs::path entry_path(const fs::path& cache, std::string_view kernel, int arch, std::string_view suffix) {
    const fs::path folder = tropical::cache_format_directory(cache) / ("sm_" + std::to_string(arch));
    if (!fs::exists(folder)) return {};
    for (const auto& e : fs::directory_iterator(folder)) {
        const std::string name = e.path().filename().string();
        // "<kernel>-<32 hex digits><suffix>": not the entry of a kernel whose name extends this one's.
        const bool exact = name.size() == kernel.size() + 1 + 32 + suffix.size();
        if (exact && name.starts_with(std::string(kernel) + "-") && name.ends_with(suffix)) return e.path();
    }
    return {};
}

// Checks that the cache holds exactly a valid CUBIN and PTX for each kernel and architecture, and
// the compiler record.
inline void expect_cache_holds(const fs::path& cache, const std::vector<std::string>& kernels,
                               const std::vector<int>& archs) {
    const fs::path dir = tropical::cache_format_directory(cache);
    std::set<std::string> expected = {"nvrtc-identity"};
    for (const auto& k : kernels)
        for (int arch : archs)
            for (const char* suffix : {".cubin", ".ptx"}) {
                const fs::path path = entry_path(cache, k, arch, suffix);
                ASSERT_FALSE(path.empty()) << k << " sm_" << arch << suffix << " is not in the cache";
                std::vector<std::byte> storage;
                EXPECT_EQ(decode(path, storage).check, tropical::detail::EntryCheck::Valid) << path;
                expected.insert(fs::relative(path, dir).string());
            }
    EXPECT_EQ(files_under(dir), expected);
}

inline std::vector<std::string> all_kernel_names() {
    std::vector<std::string> out;
    for (const auto& k : tropical::kernel_registry()) out.emplace_back(k.name);
    return out;
}

inline void set_mtime(const fs::path& path, std::chrono::seconds ago) {
    const auto when = std::chrono::system_clock::now() - ago;
    const auto since_epoch = when.time_since_epoch();
    timespec times[2];
    times[0].tv_sec = times[1].tv_sec = std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
    times[0].tv_nsec = times[1].tv_nsec = 0;
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

inline std::chrono::system_clock::time_point mtime(const fs::path& path) {
    struct stat info {};
    ::stat(path.c_str(), &info);
    return std::chrono::system_clock::time_point{std::chrono::duration_cast<std::chrono::system_clock::duration>(
        std::chrono::seconds(info.st_mtim.tv_sec) + std::chrono::nanoseconds(info.st_mtim.tv_nsec))};
}

// The f32 gemm group: the tiled products of every semiring and their split-K twins (counting has none).
inline const std::vector<std::string> kGemmF32 = {
    "tropical_gemm_f32_maxplus",   "tropical_gemm_f32_minplus",  "tropical_gemm_f32_maxmul",
    "tropical_gemm_f32_maxmin",    "tropical_gemm_f32_minmax",   "tropical_splitk_f32_maxplus",
    "tropical_splitk_f32_minplus", "tropical_splitk_f32_maxmul", "tropical_splitk_f32_maxmin",
    "tropical_splitk_f32_minmax",  "tropical_gemm_f32_counting", "tropical_gemm_f32_logplus"};
inline const std::string kTwo = "tropical_gemm_f32_maxplus,tropical_backward_a_f32";

// The tool's --list --json agrees with the disk: the same files, sizes and verdicts.
inline void expect_listing_matches_disk(const fs::path& cache) {
    const ToolRun list = warmup({"--cache-dir", cache.string(), "--list", "--json"});
    ASSERT_EQ(list.code, 0) << describe(list);
    const Json doc = list.json();
    EXPECT_EQ(doc["command"].text, "list");
    EXPECT_EQ(doc["format_dir"].text, tropical::cache_format_directory(cache).string());
    std::set<std::string> listed;
    long long total = 0;
    for (const auto& e : doc["entries"].items) {
        const fs::path path = e["path"].text;
        listed.insert(fs::relative(path, tropical::cache_format_directory(cache)).string());
        EXPECT_EQ(e["bytes"].integer(), static_cast<long long>(fs::file_size(path))) << path;
        EXPECT_TRUE(e["valid"].boolean) << path;
        EXPECT_TRUE(e["current"].boolean) << path;
        EXPECT_THAT(path.filename().string(), HasSubstr(e["kernel"].text + "-" + e["key"].text + "."));
        EXPECT_EQ(path.parent_path().filename().string(), e["arch"].text);
        total += e["bytes"].integer();
    }
    auto on_disk = files_under(tropical::cache_format_directory(cache));
    on_disk.erase("nvrtc-identity");
    EXPECT_EQ(listed, on_disk);
    EXPECT_EQ(doc["entry_bytes"].integer(), total);
    EXPECT_EQ(doc["kernels"].size(), tropical::kernel_registry().size());
    // A kernel is cached for an architecture exactly when its CUBIN is on disk.
    for (const auto& k : doc["kernels"].items) {
        std::set<std::string> cached;
        for (const auto& a : k["cached"].items) cached.insert(a.text);
        std::set<std::string> expected;
        for (int arch : {75, 80, 86, 89, 90, 100, 120})
            if (!entry_path(cache, k["name"].text, arch, ".cubin").empty())
                expected.insert("sm_" + std::to_string(arch));
        EXPECT_EQ(cached, expected) << k["name"].text;
    }
}

}  // namespace tropical::testing::warmup
