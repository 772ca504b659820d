// tropical-gemm-warmup: compiles tropical-gemm's kernels ahead of time into its disk cache, and
// lists, verifies, bounds and clears that cache.
//
// A thin program over the public API (tropical/cache.hpp, tropical/kernels.hpp): it includes no
// header from src/ and links only what the shared library exports, so that it proves the public
// API is enough to administer the cache.
//
// Each command (warm.cpp, list.cpp, verify.cpp, clear.cpp, trim.cpp) returns a result, which
// render_text.cpp or render_json.cpp shows; options.cpp reads the command line.
#include <exception>
#include <string_view>

#include <tropical/error.hpp>

#include "commands.hpp"
#include "options.hpp"
#include "render.hpp"
#include "tool.hpp"

namespace {

using namespace warmup;

template <class Report>
int show(const Report& report, OutputMode mode, int exit_code = kSuccess) {
    if (mode == OutputMode::Json) print_json(report);
    else print_text(report, mode);
    return exit_code;
}

int run(const Options& o) {
    switch (o.command) {
    case Command::List: return show(list(o), o.output);
    case Command::Verify: {
        const VerifyReport report = verify(o);
        return show(report, o.output, report.exit_code);
    }
    case Command::Clear: return show(clear(o), o.output);
    case Command::Trim: return show(trim(o), o.output);
    case Command::Warm: break;
    }
    const WarmReport report = warm(o);
    if (report.error) print_error(report.error->message);  // on standard error in every mode
    return show(report, o.output, report.exit_code);
}

// Ends the program on an error that left no result: said on standard error, and with --json as
// the document too, so that a script always reads JSON.
int fail(int argc, char** argv, int code, std::string_view message) {
    if (json_asked_in(argc, argv)) print_json_error(command_named_in(argc, argv), code, message);
    print_error(message);
    return code;
}

}  // namespace

int main(int argc, char** argv) {
    install_warning_handler();
    try {
        const auto options = parse_command_line(argc, argv);
        return options ? run(*options) : kSuccess;  // nothing: --help or --version, printed
    } catch (const Fatal& f) {
        return fail(argc, argv, f.code, f.message);
    } catch (const tropical::NoCompiler& e) {
        return fail(argc, argv, kEnvironment, e.what());
    } catch (const std::exception& e) {
        return fail(argc, argv, kFailed, e.what());
    }
}
