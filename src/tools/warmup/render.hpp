#pragma once
// How each command's result is shown: in words (render_text.cpp) or as one JSON document on
// standard output (render_json.cpp), whose fields scripts rely on.
#include <string_view>

#include "commands.hpp"
#include "options.hpp"

namespace warmup {

// In words; `mode` is Bar, Lines or Quiet (Quiet prints what must be seen even so, if anything).
void print_text(const WarmReport& report, OutputMode mode);
void print_text(const ListReport& report, OutputMode mode);
void print_text(const VerifyReport& report, OutputMode mode);
void print_text(const ClearReport& report, OutputMode mode);
void print_text(const TrimReport& report, OutputMode mode);

void print_json(const WarmReport& report);
void print_json(const ListReport& report);
void print_json(const VerifyReport& report);
void print_json(const ClearReport& report);
void print_json(const TrimReport& report);

// The document of a command that ended in an error before it had a result.
void print_json_error(Command command, int code, std::string_view message);

}  // namespace warmup
