// The C ABI's registry, cache and NVRTC functions and the options' device hint (tropical/c_api.h),
// which other languages (the Python package) use instead of anything private. Needs no GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <tropical/c_api.h>
#include <tropical/error.hpp>
#include <tropical/kernels.hpp>
#include <tropical/types.hpp>
#include "support/checked_calls.hpp"
#include "support/temp_dir.hpp"

namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string last_message() { return tropical_last_error_message(); }

TEST(CApiStatus, NamesAreTheCppEnumeratorsAndEndAtNull) {
    EXPECT_STREQ(tropical_status_name(TROPICAL_SUCCESS), "Success");
    EXPECT_STREQ(tropical_status_name(TROPICAL_INVALID_ARGUMENT), "InvalidArgument");
    EXPECT_STREQ(tropical_status_name(TROPICAL_INTERNAL_ERROR), "Internal");
    int count = 0;
    while (tropical_status_name(static_cast<tropical_status>(count))) ++count;
    EXPECT_EQ(count, TROPICAL_INTERNAL_ERROR + 1);
    EXPECT_EQ(tropical_status_name(static_cast<tropical_status>(-1)), nullptr);
    EXPECT_STREQ(tropical_status_string(static_cast<tropical_status>(count)), "unknown status");
}

TEST(CApiKernels, EveryRegistryKernelInWords) {
    const auto registry = tropical::kernel_registry();
    ASSERT_EQ(tropical_kernel_count(), static_cast<int64_t>(registry.size()));
    for (const auto& k : registry) {
        tropical_kernel_info info{};
        ASSERT_EQ(tropical_kernel_info_at(static_cast<int64_t>(k.index), &info), TROPICAL_SUCCESS) << last_message();
        EXPECT_EQ(info.name, k.name);
        EXPECT_EQ(info.group, to_string(k.group));
        EXPECT_EQ(info.operation, to_string(k.operation));
        EXPECT_EQ(info.variant, to_string(k.variant));
        EXPECT_EQ(info.dtype, to_string(k.dtype));
        EXPECT_EQ(std::string(info.semiring), k.semiring ? std::string(to_string(*k.semiring)) : "any");
    }
}

TEST(CApiKernels, BadIndexOrNullIsAnInvalidArgument) {
    tropical_kernel_info info{};
    EXPECT_EQ(tropical_kernel_info_at(-1, &info), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("there is no kernel -1"));
    EXPECT_EQ(tropical_kernel_info_at(tropical_kernel_count(), &info), TROPICAL_INVALID_ARGUMENT);
    EXPECT_EQ(tropical_kernel_info_at(0, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("info is NULL"));
}

TEST(CApiCache, DirectoryFromTheEnvironmentAndTooSmallBuffers) {
    tropical::testing::TempDir dir;
    ASSERT_TRUE(tropical::testing::set_env("TROPICAL_GEMM_CACHE_DIR", dir.path().c_str()));
    char path[4096];
    int32_t enabled = -1;
    ASSERT_EQ(tropical_cache_directory(path, sizeof path, &enabled), TROPICAL_SUCCESS) << last_message();
    EXPECT_EQ(std::string(path), dir.path().string());
    EXPECT_EQ(enabled, 1);
    char small[4];
    EXPECT_EQ(tropical_cache_directory(small, sizeof small, &enabled), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("are needed"));
    EXPECT_TRUE(tropical::testing::unset_env("TROPICAL_GEMM_CACHE_DIR"));
}

TEST(CApiCache, WarmingAnUnknownKernelNamesIt) {
    tropical_warm_result result{};
    EXPECT_EQ(tropical_warm_kernel("tropical_gemm_f8_maxplus", 90, &result), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("no kernel named 'tropical_gemm_f8_maxplus'"));
    EXPECT_EQ(tropical_warm_kernel(nullptr, 90, &result), TROPICAL_INVALID_ARGUMENT);
}

// The architectures to warm, by the rule the warm-up tool shares (NVRTC is there on CI, no GPU).
TEST(CApiCache, WarmTargetsAreCheckedAgainstNvrtcOrTheLocalGpus) {
    int32_t archs[8] = {};
    int64_t found = -1;
    const int32_t wanted[] = {90, 80, 90};
    ASSERT_EQ(tropical_warm_targets(wanted, 3, archs, 8, &found), TROPICAL_SUCCESS) << last_message();
    ASSERT_EQ(found, 2);
    EXPECT_EQ(archs[0], 80);
    EXPECT_EQ(archs[1], 90);
    const int32_t unknown[] = {999};
    EXPECT_EQ(tropical_warm_targets(unknown, 1, archs, 8, &found), TROPICAL_UNSUPPORTED);
    EXPECT_THAT(last_message(), HasSubstr("NVRTC cannot compile for sm_999: it knows"));
    const int32_t nonsense[] = {7};
    EXPECT_EQ(tropical_warm_targets(nonsense, 1, archs, 8, &found), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("7 is not an architecture"));
    // None named: this machine's GPUs; without one, the error says to name them.
    const tropical_status local = tropical_warm_targets(nullptr, 0, archs, 8, &found);
    if (local != TROPICAL_SUCCESS) {
        EXPECT_TRUE(local == TROPICAL_NO_DRIVER || local == TROPICAL_NO_DEVICE) << local;
        EXPECT_THAT(last_message(), HasSubstr("name the architectures"));
    }
}

TEST(CApiNvrtc, FallbacksComeAfterTheLibrarysOwnPlacesOnce) {
    EXPECT_TRUE(tropical::testing::unset_env("TROPICAL_GEMM_NVRTC"));
    ASSERT_EQ(tropical_add_nvrtc_fallback("/opt/site-packages/nvidia/cu13/lib/libnvrtc.so.13"), TROPICAL_SUCCESS);
    ASSERT_EQ(tropical_add_nvrtc_fallback("/opt/site-packages/nvidia/cu13/lib/libnvrtc.so.13"), TROPICAL_SUCCESS);
    char text[8192];
    ASSERT_EQ(tropical_nvrtc_search_path(text, sizeof text), TROPICAL_SUCCESS) << last_message();
    const std::string search = text;
    EXPECT_THAT(search, StartsWith("libnvrtc.so.13\nlibnvrtc.so.12\n"));
    EXPECT_THAT(search,
                HasSubstr("/usr/local/cuda/lib64/libnvrtc.so\n/opt/site-packages/nvidia/cu13/lib/libnvrtc.so.13\n"));
    EXPECT_THAT(search, EndsWith("/opt/site-packages/nvidia/cu13/lib/libnvrtc.so.13\n"));
    // An explicit choice is the only place looked at.
    ASSERT_TRUE(tropical::testing::set_env("TROPICAL_GEMM_NVRTC", "/x/libnvrtc.so"));
    ASSERT_EQ(tropical_nvrtc_search_path(text, sizeof text), TROPICAL_SUCCESS);
    EXPECT_STREQ(text, "/x/libnvrtc.so\n");
    EXPECT_TRUE(tropical::testing::unset_env("TROPICAL_GEMM_NVRTC"));
    EXPECT_EQ(tropical_add_nvrtc_fallback(""), TROPICAL_INVALID_ARGUMENT);
    EXPECT_EQ(tropical_add_nvrtc_fallback(nullptr), TROPICAL_INVALID_ARGUMENT);
}

// pip's NVRTC wheels under site-packages folders: found by the library (sonames only, each folder
// once), ordered (the preferred major version first, then the newest) and added after the other places.
TEST(CApiNvrtc, PipWheelsInSitePackagesFoldersAreFoundOrderedAndAdded) {
    EXPECT_TRUE(tropical::testing::unset_env("TROPICAL_GEMM_NVRTC"));
    tropical::testing::TempDir site;
    const auto touch = [&](const std::string& relative) {
        const auto file = site.path() / relative;
        std::filesystem::create_directories(file.parent_path());
        std::ofstream{file};
        return file.string();
    };
    const std::string cu13 = touch("nvidia/cu13/lib/libnvrtc.so.13");
    const std::string cu12 = touch("nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
    touch("nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.8");
    touch("nvidia/cu13/lib/libnvrtc.so.13.0");
    touch("nvidia/cublas/lib/libcublas.so.13");
    const std::string root = site.path().string();
    const std::string folders = "/nonexistent\n" + root + "\n\n" + root + "\n";
    char text[8192];
    ASSERT_EQ(tropical_nvrtc_site_libraries(folders.c_str(), 0, text, sizeof text), TROPICAL_SUCCESS) << last_message();
    EXPECT_EQ(std::string(text), cu13 + "\n" + cu12 + "\n");  // newest first
    ASSERT_EQ(tropical_nvrtc_site_libraries(folders.c_str(), 12, text, sizeof text), TROPICAL_SUCCESS);
    EXPECT_EQ(std::string(text), cu12 + "\n" + cu13 + "\n");  // the application's CUDA 12 first
    char small[8];
    EXPECT_EQ(tropical_nvrtc_site_libraries(folders.c_str(), 0, small, sizeof small), TROPICAL_INVALID_ARGUMENT);
    EXPECT_EQ(tropical_nvrtc_site_libraries(nullptr, 0, text, sizeof text), TROPICAL_INVALID_ARGUMENT);
    EXPECT_EQ(tropical_add_nvrtc_site_folders(nullptr, 0), TROPICAL_INVALID_ARGUMENT);

    ASSERT_EQ(tropical_add_nvrtc_site_folders(folders.c_str(), 12), TROPICAL_SUCCESS) << last_message();
    ASSERT_EQ(tropical_add_nvrtc_site_folders(folders.c_str(), 12), TROPICAL_SUCCESS);
    ASSERT_EQ(tropical_nvrtc_search_path(text, sizeof text), TROPICAL_SUCCESS);
    const std::string search = text;  // after the library's own places (and earlier tests' fallbacks)
    EXPECT_THAT(search, EndsWith("\n" + cu12 + "\n" + cu13 + "\n"));
    EXPECT_LT(search.find("/usr/local/cuda/lib64/libnvrtc.so\n"), search.find(cu12));
    ASSERT_EQ(tropical_nvrtc_search_places(text, sizeof text), TROPICAL_SUCCESS);
    EXPECT_THAT(std::string(text), StartsWith("libnvrtc.so.13\tthe system library path\n"));
    EXPECT_THAT(std::string(text), EndsWith(cu12 + "\tpip's NVRTC wheel in " + root + "\n" + cu13 +
                                            "\tpip's NVRTC wheel in " + root + "\n"));
    ASSERT_TRUE(tropical::testing::set_env("TROPICAL_GEMM_NVRTC", "/x/libnvrtc.so"));
    ASSERT_EQ(tropical_nvrtc_search_places(text, sizeof text), TROPICAL_SUCCESS);
    EXPECT_STREQ(text, "/x/libnvrtc.so\tfrom $TROPICAL_GEMM_NVRTC, the only place looked at while it is set\n");
    EXPECT_TRUE(tropical::testing::unset_env("TROPICAL_GEMM_NVRTC"));
}

TEST(CApiSemirings, GradientsAsTheLibrarySays) {
    int32_t count = 0;
    for (; tropical_semiring_name(static_cast<tropical_semiring>(count)); ++count)
        EXPECT_EQ(tropical_semiring_has_gradient(static_cast<tropical_semiring>(count)),
                  tropical::has_gradient(static_cast<tropical::Semiring>(count)) ? 1 : 0);
    EXPECT_EQ(tropical_semiring_has_gradient(TROPICAL_MAXPLUS), 1);
    EXPECT_EQ(tropical_semiring_has_gradient(TROPICAL_MINMAX), 1);
    EXPECT_EQ(tropical_semiring_has_gradient(TROPICAL_COUNTING), 0);
    EXPECT_EQ(tropical_semiring_has_gradient(TROPICAL_ORAND), 0);
    EXPECT_EQ(tropical_semiring_has_gradient(static_cast<tropical_semiring>(count)), -1);
    EXPECT_EQ(tropical_semiring_has_gradient(static_cast<tropical_semiring>(-1)), -1);
}

// A negative device hint is refused before anything is looked up; a hint names the device of the
// operands, so a valid request with one never asks the driver about the pointers.
TEST(CApiOptions, DeviceHintIsCheckedAndSpelledPlusOne) {
    static_assert(TROPICAL_DEVICE_HINT(0) == 1 && TROPICAL_DEVICE_HINT(3) == 4);
    const tropical_matrix a{reinterpret_cast<const void*>(uintptr_t{1} << 40), 4, 3, 3, TROPICAL_ROW_MAJOR, 0};
    const tropical_matrix b{reinterpret_cast<const void*>(uintptr_t{2} << 40), 3, 5, 5, TROPICAL_ROW_MAJOR, 0};
    const tropical_matrix c{reinterpret_cast<const void*>(uintptr_t{3} << 40), 4, 5, 5, TROPICAL_ROW_MAJOR, 0};
    const tropical_options bad{nullptr, 0, -2};
    EXPECT_EQ(tropical_gemm(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &c, 1, &bad), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("device_hint is -2"));
    // An empty batch needs no device, hint or not.
    const tropical_options hinted{nullptr, 0, TROPICAL_DEVICE_HINT(0)};
    EXPECT_EQ(tropical_gemm(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &c, 0, &hinted), TROPICAL_SUCCESS)
        << last_message();
}

}  // namespace
