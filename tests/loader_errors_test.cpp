// What a user sees when the driver or NVRTC is missing, or a kernel does not compile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tropical/error.hpp>
#include "driver/cuda_driver.hpp"
#include "driver/dropped_result.hpp"
#include "nvrtc/compile_options.hpp"
#include "nvrtc/compiler.hpp"
#include "nvrtc/nvrtc_library.hpp"
#include "support/checked_calls.hpp"

using namespace tropical;
using namespace tropical::detail;
using ::testing::HasSubstr;

TEST(LoaderErrors, NoDriverNamesTheLibraryThePlacesTriedAndTheVariable) {
    try {
        load_driver("/nonexistent/libcuda.so.1");
        FAIL() << "expected NoDriver";
    } catch (const NoDriver& e) {
        const std::string message = e.what();
        EXPECT_THAT(message, HasSubstr("libcuda.so.1"));
        EXPECT_THAT(message, HasSubstr("/nonexistent/libcuda.so.1"));
        EXPECT_THAT(message, HasSubstr("TROPICAL_GEMM_CUDA_DRIVER"));
        EXPECT_EQ(e.status(), Status::NoDriver);
    }
}

TEST(LoaderErrors, NoNvrtcNamesThePlacesTriedAndTheVariable) {
    try {
        load_nvrtc("/nonexistent/libnvrtc.so.13");
        FAIL() << "expected NoCompiler";
    } catch (const NoCompiler& e) {
        const std::string message = e.what();
        EXPECT_THAT(message, HasSubstr("/nonexistent/libnvrtc.so.13"));
        EXPECT_THAT(message, HasSubstr("TROPICAL_GEMM_NVRTC"));
        EXPECT_EQ(e.status(), Status::NoCompiler);
    }
}

TEST(LoaderErrors, NvrtcSearchOrderIsAsDocumented) {
    ASSERT_TRUE(tropical::testing::set_env("CUDA_HOME", "/opt/toolkit"));
    const auto candidates = nvrtc_candidates("");
    EXPECT_TRUE(tropical::testing::unset_env("CUDA_HOME"));
    ASSERT_GE(candidates.size(), 4u);
    EXPECT_EQ(candidates[0].path, "libnvrtc.so.13");
    EXPECT_EQ(candidates[1].path, "libnvrtc.so.12");
    EXPECT_EQ(candidates[2].path, "/opt/toolkit/lib64/libnvrtc.so.13");
    EXPECT_EQ(candidates.back().path, "/usr/local/cuda/lib64/libnvrtc.so");
    const auto explicit_only = nvrtc_candidates("/x/libnvrtc.so");
    ASSERT_EQ(explicit_only.size(), 1u);
    EXPECT_EQ(explicit_only[0].path, "/x/libnvrtc.so");
}

TEST(LoaderErrors, CompileErrorCarriesKernelOptionsAndLog) {
    const auto compiler = make_nvrtc_compiler();
    const auto options = compile_options(90, false);
    try {
        compiler->compile("broken_kernel", "extern \"C\" __global__ void broken_kernel() { undeclared_name = 1; }",
                          options);
        FAIL() << "expected CompileError";
    } catch (const CompileError& e) {
        EXPECT_EQ(e.kernel(), "broken_kernel");
        EXPECT_THAT(e.options(), HasSubstr("--gpu-architecture=sm_90"));
        EXPECT_THAT(e.log(), HasSubstr("undeclared_name"));
        EXPECT_THAT(std::string(e.what()), HasSubstr("undeclared_name"));
        EXPECT_EQ(e.status(), Status::CompileError);
        EXPECT_NE(e.code(), 0);
    }
}

TEST(ErrorMacros, DriverFailuresNameFileLineCallAndError) {
    try {
        throw_cuda_error(CUDA_ERROR_INVALID_IMAGE, "cuModuleLoadData(&module, image)", "src/x.cpp", 88);
        FAIL();
    } catch (const CudaError& e) {
        const std::string message = e.what();
        EXPECT_THAT(message, HasSubstr("src/x.cpp:88: cuModuleLoadData(&module, image) failed"));
        EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_IMAGE);
    }
    EXPECT_THROW(throw_cuda_error(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc", "f", 1), OutOfMemory);
    EXPECT_THROW(throw_cuda_error(CUDA_ERROR_NO_DEVICE, "cuInit", "f", 1), NoDevice);
}

TEST(ErrorMacros, MachineConditionsSayWhatToDo) {
    // A device held by another process in exclusive-process mode: the message names the cause and
    // the way out, not only the driver's one-liner.
    try {
        throw_cuda_error(CUDA_ERROR_DEVICE_UNAVAILABLE, "cuDevicePrimaryCtxRetain(&primary, device)", "f", 1);
        FAIL();
    } catch (const CudaError& e) {
        EXPECT_THAT(std::string(e.what()), HasSubstr("exclusive-process"));
        EXPECT_THAT(std::string(e.what()), HasSubstr("CUDA_VISIBLE_DEVICES"));
    }
    try {
        throw_cuda_error(CUDA_ERROR_OUT_OF_MEMORY, "cuModuleLoadData(&raw, image)", "f", 1);
        FAIL();
    } catch (const OutOfMemory& e) {
        EXPECT_THAT(std::string(e.what()), HasSubstr("Free device memory"));
    }
}

// What a destructor drops (driver/dropped_result.hpp): said on stderr in debug builds only, and
// never the driver's shutdown at process exit.
TEST(ErrorMacros, DroppedFailuresAreReportedInDebugBuildsButNotTheDriversShutdown) {
    ::testing::internal::CaptureStderr();
    report_dropped(CUDA_SUCCESS, "cuMemFree(pointer)", "src/x.cpp", 1);
    report_dropped(CUDA_ERROR_DEINITIALIZED, "cuMemFree(pointer)", "src/x.cpp", 2);
    report_dropped(CudaError("src/y.cpp:3: cuCtxPushCurrent(context) failed", CUDA_ERROR_DEINITIALIZED), "src/x.cpp",
                   4);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");

    ::testing::internal::CaptureStderr();
    report_dropped(CUDA_ERROR_INVALID_VALUE, "cuMemFree(pointer)", "src/x.cpp", 5);
    report_dropped(CudaError("src/y.cpp:6: cuCtxPushCurrent(context) failed", CUDA_ERROR_INVALID_CONTEXT), "src/x.cpp",
                   7);
    const std::string said = ::testing::internal::GetCapturedStderr();
#ifdef NDEBUG
    EXPECT_EQ(said, "");
#else
    EXPECT_THAT(said, HasSubstr("src/x.cpp:5: cuMemFree(pointer) failed: "));
    EXPECT_THAT(said, HasSubstr("src/x.cpp:7: src/y.cpp:6: cuCtxPushCurrent(context) failed"));
#endif
}
