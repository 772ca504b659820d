// tropical-gemm-warmup's command line and environment, run as a user runs it: usage errors (exit
// 2), environment errors (exit 3), --help, and arguments that are empty, huge or not UTF-8.
#include "support/warmup_tool.hpp"

#include <sstream>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace tropical::testing::warmup;
using tropical::testing::TempDir;

namespace {

bool is_hex_digit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Undoes the tool's escape of text that is not UTF-8 (its --help): every \xNN is the byte NN.
std::string unescape(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        if (text[i] == '\\' && i + 3 < text.size() && text[i + 1] == 'x' && is_hex_digit(text[i + 2]) &&
            is_hex_digit(text[i + 3])) {
            out += static_cast<char>(std::stoi(std::string(text.substr(i + 2, 2)), nullptr, 16));
            i += 4;
        } else {
            out += text[i++];
        }
    }
    return out;
}

// The environment of a user whose HOME is `home`, and who sets no other cache variable.
Environment home_only(const fs::path& home) {
    return {{"HOME", home.string()},
            {"XDG_CACHE_HOME", std::nullopt},
            {"TROPICAL_GEMM_CACHE_DIR", std::nullopt},
            {"TROPICAL_GEMM_CACHE", std::nullopt}};
}

// That user's default cache, holding one kernel for sm_90.
fs::path fill_default_cache(const fs::path& home) {
    const fs::path cache = home / ".cache" / "tropical-gemm";
    const ToolRun run =
        warmup({"--cache-dir", cache.string(), "--arch", "sm_90", "--kernel", "tropical_backward_a_f32", "-q"});
    EXPECT_EQ(run.code, 0) << describe(run);
    return cache;
}

}  // namespace

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
        {{"--type", "f8", "--arch", "sm_90"}, "unknown type 'f8'"},
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

    const ToolRun disabled =
        warmup({"--arch", "sm_90", "--kernel", kernel},
               {{"TROPICAL_GEMM_CACHE", "off"}, {"TROPICAL_GEMM_CACHE_DIR", (dir.path() / "c").string()}});
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

// Values that scripts produce by mistake (an empty variable, a runaway number, a huge string) are
// usage errors that say what is wrong, never a crash of the option parser or a fallback.
TEST(Warmup, EmptyAndHugeValuesAreUsageErrorsThatSayWhatIsWrong) {
    TempDir dir;
    const std::string cache = (dir.path() / "cache").string();
    const std::string huge_name(100'000, 'k');
    // A path no system call takes: 100 kB in all, or one name longer than a file name can be.
    const std::string huge_dir = (dir.path() / std::string(100'000, 'd')).string();
    const std::string long_name_dir = (dir.path() / std::string(300, 'n') / "cache").string();
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const std::vector<Case> cases = {
        {{"--cache-dir", cache, "--jobs", "", "--arch", "sm_90"}, "'' is not a number of jobs"},
        {{"--cache-dir", cache, "--jobs", "99999999999999999999", "--arch", "sm_90"},
         "'99999999999999999999' is not a number of jobs"},
        {{"--cache-dir", cache, "--jobs", "-4", "--arch", "sm_90"}, "'-4' is not a number of jobs"},
        {{"--cache-dir", cache, "--jobs", "4x", "--arch", "sm_90"}, "'4x' is not a number of jobs"},
        {{"--cache-dir", "", "--list"}, "an empty folder name is refused"},
        {{"--cache-dir", "", "--clear"}, "an empty folder name is refused"},
        {{"--cache-dir", cache, "--kernel", huge_name, "--arch", "sm_90"}, "unknown kernel 'kkkkkkkkkk"},
        {{"--cache-dir", cache, "--kernel", "", "--arch", "sm_90"}, "unknown kernel ''"},
        {{"--cache-dir", cache, "--group", "", "--arch", "sm_90"}, "unknown group ''"},
        {{"--cache-dir", cache, "--variant", "fast", "--arch", "sm_90"}, "unknown variant 'fast'"},
        {{"--cache-dir", cache, "--arch", ""}, "'' is not an architecture"},
        {{"--cache-dir", cache, "--arch", "99999999999999999999"}, "is not an architecture"},
        {{"--cache-dir", cache, "--max-size", ""}, "'' is not a size"},
        {{"--cache-dir", cache, "--max-size", "99999999999999999999"}, "is not a size"},
        {{"--cache-dir", cache, "--clear", "--variant", "splitk"}, "take no kernel selection"},
        {{"--cache-dir", huge_dir, "--list"},
         fmt::format("({} bytes) is too long to be a folder's path", huge_dir.size())},
        {{"--cache-dir", huge_dir, "--verify"}, "is too long to be a folder's path"},
        {{"--cache-dir", huge_dir, "--clear"}, "is too long to be a folder's path"},
        {{"--cache-dir", huge_dir, "--max-size", "0"}, "is too long to be a folder's path"},
        {{"--cache-dir", huge_dir, "--arch", "sm_90", "--kernel", "tropical_backward_a_f32"},
         "is too long to be a folder's path: a path has at most 4095 bytes"},
        {{"--cache-dir", long_name_dir, "--clear"}, "(300 bytes), longer than a file name can be (255 bytes)"},
        {{"--cache-dir", long_name_dir, "--arch", "sm_90", "--kernel", "tropical_backward_a_f32"},
         "longer than a file name can be"},
    };
    for (const auto& c : cases)
        for (const bool json : {false, true}) {
            std::vector<std::string> args = c.args;
            if (json) args.emplace_back("--json");
            const ToolRun run = warmup(args);
            EXPECT_EQ(run.code, 2) << c.says << (json ? " (--json)\n" : "\n") << describe(run);
            EXPECT_THAT(run.err, HasSubstr(c.says));
            EXPECT_THAT(run.err, Not(HasSubstr("stoi")));
            EXPECT_LT(run.err.size(), 1000u) << c.says << ": an error message must not repeat a huge value";
            if (!json) continue;
            const Json doc = run.json();
            EXPECT_EQ(doc["exit_code"].integer(), 2) << c.says;
            EXPECT_EQ(doc["error"]["kind"].text, "usage") << c.says;
            EXPECT_THAT(doc["error"]["message"].text, HasSubstr(c.says));
        }
    EXPECT_TRUE(files_under(dir.path()).empty()) << "a usage error must not touch the cache";
}

TEST(Warmup, AnEmptyCacheDirOptionLeavesTheDefaultCacheAlone) {
    TempDir home;
    const fs::path cache = fill_default_cache(home.path());
    const auto before = files_under(cache);
    ASSERT_FALSE(before.empty());
    const ToolRun run = warmup({"--cache-dir", "", "--clear"}, home_only(home.path()));
    EXPECT_EQ(run.code, 2) << describe(run);
    EXPECT_THAT(run.err, HasSubstr("an empty folder name is refused"));
    EXPECT_EQ(files_under(cache), before);
}

// Where the environment leaves the disk cache off, no command falls back on another folder: each
// says why, and what to do (exit 3). An empty TROPICAL_GEMM_CACHE_DIR must never mean the default.
TEST(Warmup, WhereTheEnvironmentTurnsTheCacheOffEveryCommandSaysWhyAndTouchesNothing) {
    TempDir home;
    const fs::path cache = fill_default_cache(home.path());
    const auto before = files_under(cache);
    ASSERT_FALSE(before.empty());
    // The user's default cache is that one: these commands would reach it.
    const ToolRun listed = warmup({"--list", "--json"}, home_only(home.path()));
    ASSERT_EQ(listed.code, 0) << describe(listed);
    EXPECT_EQ(listed.json()["cache_dir"].text, cache.string());

    const std::vector<std::pair<std::string, std::string>> settings = {{"TROPICAL_GEMM_CACHE_DIR", ""},
                                                                       {"TROPICAL_GEMM_CACHE", "off"}};
    for (const auto& [name, value] : settings) {
        Environment env = home_only(home.path());
        env[name] = value;
        const std::string why = value.empty() ? name : name + "=" + value;
        const std::vector<std::vector<std::string>> commands = {
            {"--clear"},
            {"--max-size", "0"},
            {"--arch", "sm_90", "--kernel", "tropical_gemm_f32_maxplus"},
            {"--list"},
            {"--verify"}};
        for (const auto& args : commands) {
            const ToolRun run = warmup(args, env);
            EXPECT_EQ(run.code, 3) << why << " " << ::testing::PrintToString(args) << "\n" << describe(run);
            EXPECT_THAT(run.err, HasSubstr(why)) << ::testing::PrintToString(args);
            EXPECT_THAT(run.err, HasSubstr("--cache-dir")) << ::testing::PrintToString(args);
        }
        const ToolRun json = warmup({"--clear", "--json"}, env);
        EXPECT_EQ(json.code, 3) << describe(json);
        const Json doc = json.json();
        EXPECT_EQ(doc["command"].text, "clear");
        EXPECT_EQ(doc["error"]["kind"].text, "environment");
        EXPECT_THAT(doc["error"]["message"].text, HasSubstr(why));
        EXPECT_EQ(files_under(cache), before) << why;
    }
}

// --json prints JSON that a strict parser accepts whatever the bytes of a path, and loses nothing.
TEST(Warmup, JsonStaysValidAndLosslessForACacheFolderWhoseNameIsNotUtf8) {
    TempDir dir;
    // A Latin-1 e acute (not UTF-8), a UTF-8 one, and a backslash that reads like the tool's escape.
    const fs::path cache = dir.path() / "caf\xe9-caf\xc3\xa9-\\x41";
    const ToolRun run =
        warmup({"--cache-dir", cache.string(), "--arch", "sm_90", "--kernel", "tropical_backward_a_f32", "--json"});
    ASSERT_EQ(run.code, 0) << describe(run);
    const Json doc = run.json();
    EXPECT_EQ(doc["cache_dir"].text, (dir.path() / "caf\\xe9-caf\xc3\xa9-\\x5cx41").string());
    EXPECT_EQ(unescape(doc["cache_dir"].text), cache.string());
    EXPECT_EQ(unescape(doc["format_dir"].text), tropical::cache_format_directory(cache).string());

    const ToolRun list = warmup({"--cache-dir", cache.string(), "--list", "--json"});
    ASSERT_EQ(list.code, 0) << describe(list);
    const Json listing = list.json();
    ASSERT_EQ(listing["entries"].size(), 2u);  // the CUBIN and the PTX
    for (const auto& e : listing["entries"].items)
        EXPECT_TRUE(fs::is_regular_file(unescape(e["path"].text))) << e["path"].text;
    // In words, for people, the bytes are printed as they are.
    const ToolRun words = warmup({"--cache-dir", cache.string(), "--list"});
    EXPECT_THAT(words.out, HasSubstr(tropical::cache_format_directory(cache).string()));

    // An error that names such a path is valid JSON too.
    const fs::path file = dir.path() / "file\xff";
    std::ofstream(file) << "not a folder";
    const ToolRun error =
        warmup({"--cache-dir", file.string(), "--arch", "sm_90", "--kernel", "tropical_backward_a_f32", "--json"});
    EXPECT_EQ(error.code, 3) << describe(error);
    EXPECT_THAT(error.json()["error"]["message"].text, HasSubstr((dir.path() / "file\\xff").string()));
}

// A value that is not UTF-8 (a byte string from a script, a Latin-1 name) is named in the usage
// error, and with --json that error is still valid JSON, the bytes escaped as \xNN.
TEST(Warmup, ValuesThatAreNotUtf8GiveValidJsonErrors) {
    TempDir dir;
    const std::string cache = (dir.path() / "cache").string();
    struct Case {
        std::vector<std::string> args;
        std::string value;  // as given, in the message
        std::string says;
    };
    const std::vector<Case> cases = {
        {{"--kernel", "tropical_gemm_f32_maxplus\xff\xfe", "--arch", "sm_90"},
         "tropical_gemm_f32_maxplus\xff\xfe",
         "unknown kernel"},
        {{"--kernel", "tropical_backward_a_f32,caf\xe9", "--arch", "sm_90"}, "caf\xe9", "unknown kernel"},
        {{"--kernel", "\xc3\x28", "--arch", "sm_90"}, "\xc3\x28", "unknown kernel"},  // a broken 2-byte character
        {{"--arch", "sm_9\xff"}, "sm_9\xff", "is not an architecture"},
        {{"--arch", "sm_90,\xed\xa0\x80"}, "\xed\xa0\x80", "is not an architecture"},  // a UTF-16 surrogate
    };
    for (const auto& c : cases) {
        std::vector<std::string> args = {"--cache-dir", cache, "--json"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const ToolRun run = warmup(args);
        EXPECT_EQ(run.code, 2) << c.says << "\n" << describe(run);
        EXPECT_THAT(run.err, HasSubstr("'" + c.value + "'")) << "the bytes as they are, for people";
        const Json doc = run.json();  // a strict parser: text that is not UTF-8 is refused
        EXPECT_EQ(doc["exit_code"].integer(), 2);
        EXPECT_EQ(doc["error"]["kind"].text, "usage");
        EXPECT_THAT(doc["error"]["message"].text, HasSubstr(c.says));
        EXPECT_THAT(doc["error"]["message"].text, Not(HasSubstr("'" + c.value + "'")));
        EXPECT_THAT(unescape(doc["error"]["message"].text), HasSubstr("'" + c.value + "'")) << "lossless";
    }
    EXPECT_TRUE(files_under(dir.path()).empty()) << "a usage error must not touch the cache";
}

// The examples of --help count what they select from the registry, so that they stay true.
TEST(Warmup, HelpExamplesCountTheirKernelsFromTheRegistry) {
    const ToolRun help = warmup({"--help"});
    ASSERT_EQ(help.code, 0);
    auto line_with = [&](std::string_view text) {
        std::istringstream lines(help.out);
        for (std::string line; std::getline(lines, line);)
            if (line.find(text) != std::string::npos) return line;
        return std::string();
    };
    std::size_t gemm_f32 = 0, splitk = 0;
    for (const auto& k : tropical::kernel_registry()) {
        gemm_f32 += k.group == tropical::KernelGroup::Gemm && k.dtype == tropical::DType::F32;
        splitk += k.variant == tropical::KernelVariant::SplitK;
    }
    EXPECT_THAT(line_with("--group gemm --type f32 "), HasSubstr(fmt::format("({} kernels", gemm_f32)));
    EXPECT_THAT(line_with("--variant splitk "), HasSubstr(fmt::format("({} kernels", splitk)));
    EXPECT_THAT(line_with("--variant VARIANT"), HasSubstr("tiled, splitk, batched, small, scatter"));
    EXPECT_THAT(help.out, HasSubstr("\\xNN"));  // how JSON writes text that is not UTF-8
}
