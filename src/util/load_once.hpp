#pragma once
// A library loaded at most once per process (the CUDA driver, NVRTC): the first call runs `load`;
// every call returns its result, or rethrows its failure, so that the message stays the same on
// every call. Each call site (each lambda type) has its own once.
#include <exception>
#include <mutex>

namespace tropical::detail {

template <class Load>
const auto& load_once(Load load) {
    using Loaded = decltype(load());
    static std::once_flag once;
    static Loaded loaded;
    static std::exception_ptr failure;
    std::call_once(once, [&] {
        try {
            loaded = load();
        } catch (...) {
            failure = std::current_exception();
        }
    });
    if (failure) std::rethrow_exception(failure);
    return loaded;
}

}  // namespace tropical::detail
