#pragma once
// dlopen with a search list, remembering every place tried so that a failure can say exactly where
// it looked and how to point it elsewhere.
#include <memory>
#include <string>
#include <vector>

namespace tropical::detail {

struct LibraryCandidate {
    std::string path;  // a soname ("libcuda.so.1") or an absolute path
    std::string why;   // where the candidate came from, for the error message
};

class DynamicLibrary {
public:
    DynamicLibrary() = default;
    // Tries each candidate in order; returns an empty library (loaded() == false) if none loads,
    // with failures() listing every attempt.
    static DynamicLibrary open_first(const std::vector<LibraryCandidate>& candidates);

    bool loaded() const { return handle_ != nullptr; }
    void* symbol(const char* name) const;
    const std::string& path() const { return path_; }
    const std::vector<std::string>& failures() const { return failures_; }

private:
    struct Closer {
        void operator()(void* handle) const noexcept;
    };
    std::unique_ptr<void, Closer> handle_;
    std::string path_;
    std::vector<std::string> failures_;
};

// "  - libcuda.so.1 (the system loader): <dlerror>\n" per attempt, for error messages.
std::string describe_failures(const std::vector<std::string>& failures);

}  // namespace tropical::detail
