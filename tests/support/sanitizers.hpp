#pragma once
// Whether this test program runs under AddressSanitizer (GCC defines __SANITIZE_ADDRESS__, Clang
// answers __has_feature). Under ASan every load is instrumented and every process starts slower:
// the slowest tests take fewer cases there (what ASan adds, bounds and lifetimes, depends on sizes
// and layouts, not on how many times a loop goes round); the plain build runs them in full.

namespace tropical::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool under_address_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool under_address_sanitizer = true;
#else
inline constexpr bool under_address_sanitizer = false;
#endif
#else
inline constexpr bool under_address_sanitizer = false;
#endif

}  // namespace tropical::testing
