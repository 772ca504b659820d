// Highway's run-time library (libhwy), opened on the first use of the CPU kernels rather than with
// this library. libhwy 1.0 runs an initialiser when it is loaded that calibrates a timer for its
// benchmarking helpers: 4.3 ms of every process start on the 2-core CI machine (perf: the time is
// in hwy::platform::TimerResolution), paid by every program and every `import tropical_gemm`, GPU
// users included, although the CPU kernels need only its target detection. So the library does not
// link libhwy; it defines here the three functions of libhwy that its code calls (the declarations
// are Highway's own, in hwy/targets.h, compiled without HWY_SHARED_DEFINE so that these definitions
// stay hidden in this library) and forwards each to libhwy, opened once, the first time.
#include <hwy/targets.h>

#include <fmt/format.h>

#include <tropical/error.hpp>
#include "cpu/targets.hpp"
#include "util/dynamic_library.hpp"

namespace tropical::cpu {
namespace {

struct Highway {
    std::int64_t (*supported_targets)() = nullptr;
    hwy::ChosenTarget& (*chosen_target)() = nullptr;
    void (*set_supported_targets_for_test)(std::int64_t) = nullptr;
};

// Where libhwy is looked for, in order: its soname, as the dynamic linker would find a linked
// library (this library's RUNPATH, which for the Python package is its own folder, where the wheel
// puts libhwy; LD_LIBRARY_PATH; the system's folders), then the file this library was built against.
std::vector<detail::LibraryCandidate> highway_candidates() {
    return {{TROPICAL_HWY_SONAME, "the system loader"},
            {TROPICAL_HWY_LIBRARY, "the libhwy this library was built with"}};
}

template <class F>
F symbol(const detail::DynamicLibrary& library, const char* name) {
    void* found = library.symbol(name);
    if (found == nullptr)
        throw Unsupported(
            fmt::format("{} has no {}: the CPU kernels need Highway 1.0 or newer (libhwy.so.1)", library.path(), name));
    return reinterpret_cast<F>(found);
}

Highway open_highway() {
    const auto library = detail::DynamicLibrary::open_first(highway_candidates());
    if (!library.loaded())
        throw Unsupported(
            fmt::format("the CPU kernels need Google Highway's run-time library, which did not load:\n{}"
                        "Install it (Debian: apt-get install libhwy1) or put its folder in "
                        "LD_LIBRARY_PATH.",
                        detail::describe_failures(library.failures())));
    Highway h;
    h.supported_targets = symbol<decltype(h.supported_targets)>(library, "_ZN3hwy16SupportedTargetsEv");
    h.chosen_target = symbol<decltype(h.chosen_target)>(library, "_ZN3hwy15GetChosenTargetEv");
    h.set_supported_targets_for_test =
        symbol<decltype(h.set_supported_targets_for_test)>(library, "_ZN3hwy26SetSupportedTargetsForTestEl");
    return h;
}

const Highway& highway() {
    static const Highway h = open_highway();  // a failure is thrown again at the next call
    return h;
}

}  // namespace

void load_highway() { (void)highway(); }

}  // namespace tropical::cpu

namespace hwy {

int64_t SupportedTargets() { return tropical::cpu::highway().supported_targets(); }
ChosenTarget& GetChosenTarget() { return tropical::cpu::highway().chosen_target(); }
void SetSupportedTargetsForTest(int64_t targets) { tropical::cpu::highway().set_supported_targets_for_test(targets); }

}  // namespace hwy
