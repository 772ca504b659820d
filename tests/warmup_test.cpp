// tropical-gemm-warmup, run as a user runs it: a separate process, on a temporary cache folder,
// with the real NVRTC and no GPU (--arch). What it prints is checked against what is on disk.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cache/entry_format.hpp"
#include "support/temp_dir.hpp"
#include <tropical/cache.hpp>
#include <tropical/kernels.hpp>

extern char** environ;

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using tropical::testing::TempDir;

namespace {

// --- a small JSON reader, enough to check the tool's documents ---------------------------------

struct Json {
    enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
    bool boolean = false;
    double number = 0;
    std::string text;
    std::vector<Json> items;        // array elements, or object values
    std::vector<std::string> keys;  // object keys, parallel to items

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

class JsonReader {
public:
    explicit JsonReader(std::string_view text) : text_(text) {}

    Json document() {
        Json value = parse();
        skip_space();
        if (at_ != text_.size()) fail("text after the JSON document");
        return value;
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw std::runtime_error("bad JSON at offset " + std::to_string(at_) + ": " + why);
    }
    void skip_space() {
        while (at_ < text_.size() && std::strchr(" \t\r\n", text_[at_])) ++at_;
    }
    bool take(char c) {
        skip_space();
        if (at_ < text_.size() && text_[at_] == c) {
            ++at_;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!take(c)) fail(std::string("expected '") + c + "'");
    }
    bool take_word(std::string_view word) {
        if (text_.substr(at_, word.size()) != word) return false;
        at_ += word.size();
        return true;
    }
    std::string string() {
        expect('"');
        std::string out;
        while (at_ < text_.size() && text_[at_] != '"') {
            char c = text_[at_++];
            if (static_cast<unsigned char>(c) < 0x20) fail("raw control character in a string");
            if (c == '\\') {
                if (at_ >= text_.size()) fail("unfinished escape");
                const char e = text_[at_++];
                switch (e) {
                case 'n': c = '\n'; break;
                case 't': c = '\t'; break;
                case 'r': c = '\r'; break;
                case 'b': c = '\b'; break;
                case 'f': c = '\f'; break;
                case 'u':
                    c = static_cast<char>(std::stoi(std::string(text_.substr(at_, 4)), nullptr, 16));
                    at_ += 4;
                    break;
                case '"': case '\\': case '/': c = e; break;
                default: fail("unknown escape");
                }
            }
            out += c;
        }
        expect('"');
        return out;
    }
    Json parse() {
        skip_space();
        Json v;
        if (at_ >= text_.size()) fail("unexpected end");
        const char c = text_[at_];
        if (c == '{') {
            v.kind = Json::Kind::Object;
            ++at_;
            if (take('}')) return v;
            do {
                skip_space();
                v.keys.push_back(string());
                expect(':');
                v.items.push_back(parse());
            } while (take(','));
            expect('}');
        } else if (c == '[') {
            v.kind = Json::Kind::Array;
            ++at_;
            if (take(']')) return v;
            do v.items.push_back(parse());
            while (take(','));
            expect(']');
        } else if (c == '"') {
            v.kind = Json::Kind::String;
            v.text = string();
        } else if (take_word("true")) {
            v.kind = Json::Kind::Bool;
            v.boolean = true;
        } else if (take_word("false")) {
            v.kind = Json::Kind::Bool;
        } else if (take_word("null")) {
            v.kind = Json::Kind::Null;
        } else {
            const std::string rest(text_.substr(at_, 40));
            std::size_t used = 0;
            try {
                v.number = std::stod(rest, &used);
            } catch (const std::exception&) {
                fail("not a value");
            }
            v.kind = Json::Kind::Number;
            at_ += used;
        }
        return v;
    }

    std::string_view text_;
    std::size_t at_ = 0;
};

// --- running the tool -----------------------------------------------------------------------------

struct ToolRun {
    int code = -1;
    std::string out, err;
    double seconds = 0;
    // stdout as one JSON document: --json must print that and nothing else.
    Json json() const { return JsonReader(out).document(); }
};

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// Runs the tool with `args`, with `env` set (an empty value unsets the variable).
ToolRun warmup(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
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
        if (!value.empty()) env_text.push_back(name + "=" + value);
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
    ::waitpid(pid, &status, 0);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    run.out = read_text(out);
    run.err = read_text(err);
    return run;
}

std::string describe(const ToolRun& r) {
    return "exit " + std::to_string(r.code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

// --- the cache on disk ----------------------------------------------------------------------------

// Every regular file under `dir`, relative to it.
std::set<std::string> files_under(const fs::path& dir) {
    std::set<std::string> out;
    if (!fs::exists(dir)) return out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file()) out.insert(fs::relative(e.path(), dir).string());
    return out;
}

tropical::detail::DecodedEntry decode(const fs::path& path, std::vector<std::byte>& storage) {
    const std::string raw = read_text(path);
    const auto* bytes = reinterpret_cast<const std::byte*>(raw.data());
    storage.assign(bytes, bytes + raw.size());
    return tropical::detail::decode_entry(storage);
}

// The entry file of `kernel` for `arch` with `suffix` (".cubin", ".ptx"); empty if none.
fs::path entry_path(const fs::path& cache, std::string_view kernel, int arch, std::string_view suffix) {
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
void expect_cache_holds(const fs::path& cache, const std::vector<std::string>& kernels, const std::vector<int>& archs) {
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

std::vector<std::string> all_kernel_names() {
    std::vector<std::string> out;
    for (const auto& k : tropical::kernel_registry()) out.emplace_back(k.name);
    return out;
}

void set_mtime(const fs::path& path, std::chrono::seconds ago) {
    const auto when = std::chrono::system_clock::now() - ago;
    const auto since_epoch = when.time_since_epoch();
    timespec times[2];
    times[0].tv_sec = times[1].tv_sec = std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
    times[0].tv_nsec = times[1].tv_nsec = 0;
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

std::chrono::system_clock::time_point mtime(const fs::path& path) {
    struct stat info {};
    ::stat(path.c_str(), &info);
    return std::chrono::system_clock::time_point{std::chrono::duration_cast<std::chrono::system_clock::duration>(
        std::chrono::seconds(info.st_mtim.tv_sec) + std::chrono::nanoseconds(info.st_mtim.tv_nsec))};
}

const std::vector<std::string> kGemmF32 = {"tropical_gemm_f32_maxplus",   "tropical_gemm_f32_minplus",
                                           "tropical_gemm_f32_maxmul",    "tropical_splitk_f32_maxplus",
                                           "tropical_splitk_f32_minplus", "tropical_splitk_f32_maxmul"};
const std::string kTwo = "tropical_gemm_f32_maxplus,tropical_backward_a_f32";

// The tool's --list --json agrees with the disk: the same files, sizes and verdicts.
void expect_listing_matches_disk(const fs::path& cache) {
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

}  // namespace

TEST(Warmup, ArchModeFillsATemporaryCacheForSm80AndSm90) {
    TempDir dir;
    const ToolRun run = warmup(
        {"--cache-dir", dir.path().string(), "--arch", "sm_80,sm_90", "--group", "gemm", "--type", "f32", "--json"});
    ASSERT_EQ(run.code, 0) << describe(run);
    const Json doc = run.json();
    EXPECT_EQ(doc["command"].text, "warm");
    EXPECT_EQ(doc["exit_code"].integer(), 0);
    // The f32 gemm group: 3 semirings, each with its split-K twin, for 2 architectures.
    EXPECT_EQ(doc["compiled"].integer(), 12);
    EXPECT_EQ(doc["cached"].integer(), 0);
    EXPECT_EQ(doc["failed"].integer(), 0);
    ASSERT_EQ(doc["results"].size(), 12u);
    for (const auto& r : doc["results"].items) {
        EXPECT_EQ(r["status"].text, "compiled");
        EXPECT_GT(r["seconds"].number, 0.0);
        EXPECT_EQ(r["group"].text, "gemm");
    }
    expect_cache_holds(dir.path(), kGemmF32, {80, 90});
    expect_listing_matches_disk(dir.path());
}

TEST(Warmup, ListInWordsShowsWhichArchitecturesHoldEachKernel) {
    TempDir dir;
    ASSERT_EQ(warmup({"--cache-dir", dir.path().string(), "--arch", "sm_80,sm_90", "--kernel", kTwo, "-q"}).code, 0);
    const ToolRun list = warmup({"--cache-dir", dir.path().string(), "--list"});
    ASSERT_EQ(list.code, 0) << describe(list);
    EXPECT_THAT(list.out, HasSubstr(tropical::cache_format_directory(dir.path()).string()));
    EXPECT_THAT(list.out, ::testing::ContainsRegex("tropical_gemm_f32_maxplus +gemm +f32 +maxplus +sm_80, sm_90"));
    EXPECT_THAT(list.out, ::testing::ContainsRegex("tropical_backward_a_f32 +backward_a +f32 +any +sm_80, sm_90"));
    EXPECT_THAT(list.out, ::testing::ContainsRegex("tropical_gemm_f64_maxplus +gemm +f64 +maxplus +-"));
}

TEST(Warmup, SecondRunCompilesNothingInUnderASecondAndNeedsNoNvrtc) {
    TempDir dir;
    const std::vector<std::string> args = {"--cache-dir", dir.path().string(), "--arch", "sm_90",
                                           "--kernel",    kTwo,                "--json"};
    ASSERT_EQ(warmup(args).code, 0);
    // An entry not used for an hour is touched by the hit: least-recently-used trimming sees the use.
    const fs::path cubin = entry_path(dir.path(), "tropical_gemm_f32_maxplus", 90, ".cubin");
    set_mtime(cubin, std::chrono::hours(1));

    const ToolRun again = warmup(args);
    ASSERT_EQ(again.code, 0) << describe(again);
    const Json doc = again.json();
    EXPECT_EQ(doc["compiled"].integer(), 0);
    EXPECT_EQ(doc["cached"].integer(), 2);
    EXPECT_LT(again.seconds, 1.0);
    EXPECT_GT(mtime(cubin), std::chrono::system_clock::now() - std::chrono::minutes(5));

    // A warm cache shipped to a machine without the toolkit.
    const ToolRun without_nvrtc = warmup(args, {{"TROPICAL_GEMM_NVRTC", "/nonexistent/libnvrtc.so.13"}});
    ASSERT_EQ(without_nvrtc.code, 0) << describe(without_nvrtc);
    EXPECT_EQ(without_nvrtc.json()["cached"].integer(), 2);
}

TEST(Warmup, PlainLinesWhenOutputIsNotATerminal) {
    TempDir dir;
    const ToolRun run = warmup({"--cache-dir", dir.path().string(), "--arch", "sm_90", "--kernel", kTwo});
    ASSERT_EQ(run.code, 0) << describe(run);
    EXPECT_THAT(run.out, Not(HasSubstr("\r")));
    EXPECT_THAT(run.out, ::testing::ContainsRegex("compiled +sm_90 +tropical_gemm_f32_maxplus"));
    EXPECT_THAT(run.out, ::testing::ContainsRegex("compiled +sm_90 +tropical_backward_a_f32"));
    EXPECT_THAT(run.out, HasSubstr("2 compiled, 0 already cached"));
    const ToolRun quiet = warmup({"--cache-dir", dir.path().string(), "--arch", "sm_90", "--kernel", kTwo, "--quiet"});
    EXPECT_EQ(quiet.code, 0);
    EXPECT_EQ(quiet.out, "");
}

TEST(Warmup, VerifyNamesEachCorruptedEntryAndAWarmUpRepairsThem) {
    TempDir dir;
    ASSERT_EQ(warmup({"--cache-dir", dir.path().string(), "--arch", "sm_90", "--kernel", kTwo, "-q"}).code, 0);
    const ToolRun clean = warmup({"--cache-dir", dir.path().string(), "--verify"});
    EXPECT_EQ(clean.code, 0) << describe(clean);

    const fs::path flipped = entry_path(dir.path(), "tropical_gemm_f32_maxplus", 90, ".cubin");
    const fs::path truncated = entry_path(dir.path(), "tropical_backward_a_f32", 90, ".ptx");
    {
        std::string bytes = read_text(flipped);
        bytes[bytes.size() / 2] ^= 0x10;
        std::ofstream(flipped, std::ios::binary | std::ios::trunc) << bytes;
        bytes = read_text(truncated);
        bytes.resize(bytes.size() - 100);
        std::ofstream(truncated, std::ios::binary | std::ios::trunc) << bytes;
    }
    const ToolRun verify = warmup({"--cache-dir", dir.path().string(), "--verify"});
    EXPECT_EQ(verify.code, 1) << describe(verify);
    EXPECT_THAT(verify.out, HasSubstr(flipped.string() + ": corrupted (checksum mismatch)"));
    EXPECT_THAT(verify.out, HasSubstr(truncated.string() + ": truncated"));

    const ToolRun json = warmup({"--cache-dir", dir.path().string(), "--verify", "--json"});
    EXPECT_EQ(json.code, 1);
    const Json doc = json.json();
    EXPECT_EQ(doc["exit_code"].integer(), 1);
    EXPECT_EQ(doc["invalid"].integer(), 2);
    std::map<std::string, std::string> problems;
    for (const auto& e : doc["entries"].items)
        if (!e["valid"].boolean) problems[e["path"].text] = e["problem"].text;
    EXPECT_EQ(problems, (std::map<std::string, std::string>{
                            {flipped.string(), "corrupted (checksum mismatch)"},
                            {truncated.string(), "truncated or padded (length does not match its header)"}}));

    // Warming again rewrites both: the bad CUBIN, and the CUBIN whose PTX twin was bad.
    const ToolRun repair = warmup({"--cache-dir", dir.path().string(), "--arch", "sm_90", "--kernel", kTwo, "--json"});
    ASSERT_EQ(repair.code, 0) << describe(repair);
    EXPECT_EQ(repair.json()["compiled"].integer(), 2);
    const ToolRun after = warmup({"--cache-dir", dir.path().string(), "--verify"});
    EXPECT_EQ(after.code, 0) << describe(after);
    expect_cache_holds(dir.path(), {"tropical_gemm_f32_maxplus", "tropical_backward_a_f32"}, {90});
}

TEST(Warmup, ClearRemovesEntriesAndLeftoversButNothingItDidNotCreate) {
    TempDir dir;
    ASSERT_EQ(warmup({"--cache-dir", dir.path().string(), "--arch", "sm_90", "--kernel", kTwo, "-q"}).code, 0);
    const fs::path v1 = tropical::cache_format_directory(dir.path());
    const fs::path cubin = entry_path(dir.path(), "tropical_gemm_f32_maxplus", 90, ".cubin");
    const fs::path leftover = cubin.string() + ".tmp-4242-deadbeef";
    const fs::path in_flight = cubin.string() + ".tmp-4243-cafe";
    std::ofstream(leftover) << "a write killed half-way";
    set_mtime(leftover, std::chrono::hours(1));
    std::ofstream(in_flight) << "a write under way in another process";
    std::ofstream(dir.path() / "keep-root.txt") << "mine";
    std::ofstream(v1 / "README") << "mine";
    std::ofstream(v1 / "sm_90" / "notes.cubin") << "mine, and no key in the name";

    const ToolRun clear = warmup({"--cache-dir", dir.path().string(), "--clear", "--json"});
    ASSERT_EQ(clear.code, 0) << describe(clear);
    const Json doc = clear.json();
    EXPECT_EQ(doc["removed_entries"].integer(), 4);
    EXPECT_EQ(doc["removed_files"].integer(), 6);  // and the leftover temp file and the compiler record
    EXPECT_EQ(files_under(dir.path()),
              (std::set<std::string>{"keep-root.txt", "v1/README", "v1/sm_90/notes.cubin",
                                     fs::relative(in_flight, dir.path()).string()}));
    // An empty cache clears again without complaint.
    EXPECT_EQ(warmup({"--cache-dir", (dir.path() / "never-used").string(), "--clear"}).code, 0);
}

TEST(Warmup, MaxSizeRemovesTheLeastRecentlyUsedCubinTogetherWithItsPtx) {
    TempDir dir;
    ASSERT_EQ(
        warmup({"--cache-dir", dir.path().string(), "--arch", "sm_90", "--group", "gemm", "--type", "f32", "-q"}).code,
        0);
    auto files_of = [&](const std::string& k) {
        return std::pair{entry_path(dir.path(), k, 90, ".cubin"), entry_path(dir.path(), k, 90, ".ptx")};
    };
    // gemm maxplus: used a minute ago (its PTX, never read, is older than the other gemm entries);
    // minplus 2 h, maxmul 1 h; the split-K kernels 4 to 6 h.
    const auto [maxplus_cubin, maxplus_ptx] = files_of("tropical_gemm_f32_maxplus");
    set_mtime(maxplus_cubin, std::chrono::minutes(1));
    set_mtime(maxplus_ptx, std::chrono::hours(3));
    for (const auto& [k, age] : {std::pair{"tropical_gemm_f32_minplus", 2}, std::pair{"tropical_gemm_f32_maxmul", 1},
                                 std::pair{"tropical_splitk_f32_maxplus", 4}, std::pair{"tropical_splitk_f32_minplus", 5},
                                 std::pair{"tropical_splitk_f32_maxmul", 6}}) {
        const auto [c, p] = files_of(k);
        set_mtime(c, std::chrono::hours(age));
        set_mtime(p, std::chrono::hours(age));
    }
    const auto keep = fs::file_size(maxplus_cubin) + fs::file_size(maxplus_ptx);
    const ToolRun trim =
        warmup({"--cache-dir", dir.path().string(), "--max-size", std::to_string(keep + 10), "--json"});
    ASSERT_EQ(trim.code, 0) << describe(trim);
    const Json doc = trim.json();
    EXPECT_EQ(doc["command"].text, "trim");
    EXPECT_EQ(doc["bytes_after"].integer(), static_cast<long long>(keep));
    std::vector<std::string> removed;
    for (const auto& e : doc["removed"].items) removed.push_back(e["kernel"].text + "." + e["kind"].text);
    EXPECT_EQ(removed, (std::vector<std::string>{"tropical_splitk_f32_maxmul.cubin", "tropical_splitk_f32_maxmul.ptx",
                                                 "tropical_splitk_f32_minplus.cubin", "tropical_splitk_f32_minplus.ptx",
                                                 "tropical_splitk_f32_maxplus.cubin", "tropical_splitk_f32_maxplus.ptx",
                                                 "tropical_gemm_f32_minplus.cubin", "tropical_gemm_f32_minplus.ptx",
                                                 "tropical_gemm_f32_maxmul.cubin", "tropical_gemm_f32_maxmul.ptx"}));
    expect_cache_holds(dir.path(), {"tropical_gemm_f32_maxplus"}, {90});

    // Within the bound already: nothing to do.
    const ToolRun again = warmup({"--cache-dir", dir.path().string(), "--max-size", "1G", "--json"});
    EXPECT_EQ(again.code, 0);
    EXPECT_EQ(again.json()["removed"].size(), 0u);
}

TEST(Warmup, UsageErrorsExitWith2AndSayWhatIsWrong) {
    TempDir dir;
    const std::string cache = dir.path().string();
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const std::vector<Case> cases = {
        {{"--kernel", "tropical_gemm_f32_maxplu", "--arch", "sm_90"},
         "unknown kernel 'tropical_gemm_f32_maxplu' (did you mean tropical_gemm_f32_maxplus?)"},
        {{"--arch", "sm_9x"}, "'sm_9x' is not an architecture"},
        {{"--arch", "sm_20"}, "NVRTC cannot compile for sm_20"},
        {{"--group", "gemmm", "--arch", "sm_90"}, "unknown group 'gemmm'"},
        {{"--type", "f16", "--arch", "sm_90"}, "unknown type 'f16'"},
        {{"--semiring", "plus", "--arch", "sm_90"}, "unknown semiring 'plus'"},
        {{"--frobnicate"}, "--frobnicate"},
        {{"--jobs", "0", "--arch", "sm_90"}, "'0' is not a number of jobs"},
        {{"--max-size", "lots"}, "'lots' is not a size"},
        {{"--list", "--clear"}, "one at a time"},
        {{"--clear", "--type", "f32"}, "take no kernel selection"},
    };
    for (const auto& c : cases) {
        std::vector<std::string> args = {"--cache-dir", cache};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const ToolRun run = warmup(args);
        EXPECT_EQ(run.code, 2) << ::testing::PrintToString(c.args) << "\n" << describe(run);
        EXPECT_THAT(run.err, HasSubstr(c.says)) << ::testing::PrintToString(c.args);
    }
    EXPECT_TRUE(files_under(dir.path()).empty()) << "a usage error must not touch the cache";

    // With --json, the error is the document.
    const ToolRun json = warmup({"--cache-dir", cache, "--json", "--kernel", "nope"});
    EXPECT_EQ(json.code, 2);
    const Json doc = json.json();
    EXPECT_EQ(doc["exit_code"].integer(), 2);
    EXPECT_EQ(doc["error"]["kind"].text, "usage");
    EXPECT_THAT(doc["error"]["message"].text, HasSubstr("unknown kernel 'nope'"));
}

TEST(Warmup, EnvironmentErrorsExitWith3AndSayWhatToDo) {
    TempDir dir;
    const std::string kernel = "tropical_gemm_f32_maxplus";

    const ToolRun no_nvrtc = warmup({"--cache-dir", (dir.path() / "a").string(), "--arch", "sm_90", "--kernel", kernel},
                                    {{"TROPICAL_GEMM_NVRTC", "/nonexistent/libnvrtc.so.13"}});
    EXPECT_EQ(no_nvrtc.code, 3) << describe(no_nvrtc);
    EXPECT_THAT(no_nvrtc.err, HasSubstr("NVRTC"));
    EXPECT_THAT(no_nvrtc.err, HasSubstr("/nonexistent/libnvrtc.so.13"));

    const fs::path file = dir.path() / "a-file";
    std::ofstream(file) << "not a folder";
    const ToolRun unwritable = warmup({"--cache-dir", file.string(), "--arch", "sm_90", "--kernel", kernel, "--json"});
    EXPECT_EQ(unwritable.code, 3) << describe(unwritable);
    EXPECT_THAT(unwritable.err, HasSubstr(file.string() + " is not a folder"));
    const Json doc = unwritable.json();
    EXPECT_EQ(doc["error"]["kind"].text, "environment");
    EXPECT_EQ(doc["compiled"].integer(), 0);

    const ToolRun no_gpu = warmup({"--cache-dir", (dir.path() / "b").string(), "--kernel", kernel},
                                  {{"TROPICAL_GEMM_CUDA_DRIVER", "/nonexistent/libcuda.so.1"}});
    EXPECT_EQ(no_gpu.code, 3) << describe(no_gpu);
    EXPECT_THAT(no_gpu.err, HasSubstr("--arch sm_80,sm_90"));

    const ToolRun disabled = warmup({"--arch", "sm_90", "--kernel", kernel},
                                    {{"TROPICAL_GEMM_CACHE", "off"},
                                     {"TROPICAL_GEMM_CACHE_DIR", (dir.path() / "c").string()}});
    EXPECT_EQ(disabled.code, 3) << describe(disabled);
    EXPECT_THAT(disabled.err, HasSubstr("TROPICAL_GEMM_CACHE=off"));
    EXPECT_FALSE(fs::exists(dir.path() / "c"));
}

TEST(Warmup, HelpExplainsTheToolAndDocumentsTheExitCodes) {
    const ToolRun help = warmup({"--help"});
    EXPECT_EQ(help.code, 0);
    for (const char* text : {"--arch", "--list", "--verify", "--clear", "--max-size", "--json", "--jobs", "--cache-dir",
                             "TROPICAL_GEMM_CACHE_DIR", "Exit codes:", "0  success", "1  a kernel failed to compile",
                             "2  usage error", "3  environment error"})
        EXPECT_THAT(help.out, HasSubstr(text));
}

// Every kernel of the registry, for two architectures, then again from the warm cache.
TEST(Warmup, FullRunOfEveryKernelForSm80AndSm90ThenAWarmRun) {
    TempDir dir;
    const std::vector<std::string> args = {"--cache-dir", dir.path().string(), "--arch", "sm_80,sm_90", "--json"};
    const ToolRun cold = warmup(args);
    ASSERT_EQ(cold.code, 0) << describe(cold);
    const Json doc = cold.json();
    const auto n = static_cast<long long>(tropical::kernel_registry().size());
    EXPECT_EQ(doc["compiled"].integer(), 2 * n);
    EXPECT_EQ(doc["failed"].integer(), 0);
    for (const auto& g : doc["compile_seconds_by_group"].items)
        std::printf("%s %-12s %2lld kernels, NVRTC seconds summed: %.2f\n", g["arch"].text.c_str(),
                    g["group"].text.c_str(), g["kernels"].integer(), g["seconds"].number);
    std::printf("cold warm-up of %lld kernels x 2 architectures: %.1f s\n", n, cold.seconds);
    expect_cache_holds(dir.path(), all_kernel_names(), {80, 90});
    expect_listing_matches_disk(dir.path());

    const ToolRun warm = warmup(args);
    ASSERT_EQ(warm.code, 0) << describe(warm);
    EXPECT_EQ(warm.json()["compiled"].integer(), 0);
    EXPECT_EQ(warm.json()["cached"].integer(), 2 * n);
    std::printf("warm run: %.3f s\n", warm.seconds);
    EXPECT_LT(warm.seconds, 1.0);

    const ToolRun verify = warmup({"--cache-dir", dir.path().string(), "--verify", "--json"});
    EXPECT_EQ(verify.code, 0) << describe(verify);
    EXPECT_EQ(verify.json()["checked"].integer(), 4 * n);
}
