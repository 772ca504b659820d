#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cache/cache_key.hpp"
#include "nvrtc/compile_options.hpp"

using tropical::detail::cache_key;
using tropical::detail::KeyInputs;

namespace {

struct Inputs {
    std::string source = "extern \"C\" __global__ void k() {}";
    std::vector<std::string> options = tropical::detail::compile_options(90, false);
    int major = 13, minor = 0, arch = 90;
    std::uint32_t format = tropical::detail::kCacheFormatVersion;
    tropical::detail::CacheKey key() const { return cache_key({source, &options, major, minor, arch, format}); }
};

}  // namespace

TEST(CacheKey, IsStableForTheSameInputs) {
    Inputs a, b;
    EXPECT_EQ(a.key(), b.key());
    EXPECT_EQ(a.key().hex().size(), 32u);
}

TEST(CacheKey, ChangesWithTheSource) {
    Inputs a, b;
    b.source += " ";
    EXPECT_NE(a.key(), b.key());
}

TEST(CacheKey, ChangesWithAnOption) {
    Inputs a, b;
    b.options.push_back("-lineinfo");
    EXPECT_NE(a.key(), b.key());
    Inputs c;
    c.options[0] = "--std=c++20";
    EXPECT_NE(a.key(), c.key());
}

TEST(CacheKey, ChangesWithTheNvrtcVersion) {
    Inputs a, b, c;
    b.minor = 1;
    c.major = 12;
    EXPECT_NE(a.key(), b.key());
    EXPECT_NE(a.key(), c.key());
}

TEST(CacheKey, ChangesWithTheArchitecture) {
    Inputs a, b;
    b.arch = 80;
    EXPECT_NE(a.key(), b.key());
}

TEST(CacheKey, ChangesWithTheFormatVersion) {
    Inputs a, b;
    b.format = a.format + 1;
    EXPECT_NE(a.key(), b.key());
}

TEST(CacheKey, FieldBoundariesMatter) {
    // The same characters split differently between option and source must not collide.
    Inputs a, b;
    a.options.back() += "x";
    b.source = "x" + b.source;
    EXPECT_NE(a.key(), b.key());
}
