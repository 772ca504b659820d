#pragma once
// The fuzz targets. Each takes arbitrary bytes and must neither crash, nor trip a sanitizer, nor
// break the invariant it checks (a broken invariant aborts, which the fuzzer reports as a crash).
// The libFuzzer programs (fuzz_main.cpp) and the regression test (tests/fuzz_regression_test.cpp)
// call the same functions.
#include <cstddef>
#include <cstdint>

namespace tropical::fuzz {

// A cache entry as read from disk (detail::decode_entry), and the compiler-identity record.
int cache_entry(const std::uint8_t* data, std::size_t size);
// A product request: detail::validate, and the same request through the C ABI.
int request(const std::uint8_t* data, std::size_t size);

// Reports a broken invariant and aborts.
[[noreturn]] void fail(const char* what);

}  // namespace tropical::fuzz
