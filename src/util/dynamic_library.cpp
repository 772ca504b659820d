#include "util/dynamic_library.hpp"

#include <dlfcn.h>

namespace tropical::detail {

void DynamicLibrary::Closer::operator()(void* handle) const noexcept {
    // Driver and compiler stay loaded for the life of the process: unloading them while other
    // static objects may still call in at exit is a classic shutdown crash.
    (void)handle;
}

DynamicLibrary DynamicLibrary::open_first(const std::vector<LibraryCandidate>& candidates) {
    DynamicLibrary library;
    for (const auto& candidate : candidates) {
        if (void* handle = dlopen(candidate.path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            library.handle_.reset(handle);
            library.path_ = candidate.path;
            return library;
        }
        const char* reason = dlerror();
        library.failures_.push_back(candidate.path + " (" + candidate.why + "): " + (reason ? reason : "not found"));
    }
    return library;
}

void* DynamicLibrary::symbol(const char* name) const { return handle_ ? dlsym(handle_.get(), name) : nullptr; }

std::string describe_failures(const std::vector<std::string>& failures) {
    std::string text;
    for (const auto& failure : failures) text += "  - " + failure + "\n";
    return text;
}

}  // namespace tropical::detail
