#pragma once
// Where the library's warnings go. Warnings report degraded service that is not an error (an
// unwritable kernel cache, for one); each distinct problem is reported once per process.
#include <functional>
#include <string_view>

#include <tropical/export.hpp>

namespace tropical {

using WarningHandler = std::function<void(std::string_view message)>;

// Replaces the handler (the default writes "tropical-gemm: warning: ..." to stderr) and returns the
// previous one. Pass nullptr to restore the default.
TROPICAL_GEMM_EXPORT WarningHandler set_warning_handler(WarningHandler handler);

}  // namespace tropical
