// The C ABI (tropical/c_api.h): status codes, the calling thread's last error message, and what a
// request that passes validation does on a machine without a GPU. Needs no GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>

#include <tropical/c_api.h>
#include <tropical/error.hpp>
#include <tropical/gemm.hpp>
#include "support/gpu.hpp"

namespace {

using ::testing::AnyOf;
using ::testing::Eq;
using ::testing::HasSubstr;

// Fake device addresses, far apart; validation never dereferences them.
const void* address(int slot) { return reinterpret_cast<const void*>((std::uintptr_t{1} << 40) * (slot + 1)); }

tropical_matrix row_major(int slot, int64_t rows, int64_t cols) {
    return {address(slot), rows, cols, cols, TROPICAL_ROW_MAJOR, 0};
}

std::string last_message() { return tropical_last_error_message(); }

// A valid product with nothing to compute succeeds without touching the GPU.
tropical_status empty_batch_success() {
    const tropical_matrix a = row_major(0, 4, 3), b = row_major(1, 3, 5), c = row_major(2, 4, 5);
    return tropical_gemm(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &c, 0, nullptr);
}

TEST(CApi, ShapeMismatchIsInvalidArgumentWithAMessage) {
    const tropical_matrix a = row_major(0, 4, 3), b = row_major(1, 7, 5), c = row_major(2, 4, 5);
    EXPECT_EQ(tropical_gemm(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &c, 1, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("B is 7x5 but must be 3x5"));
}

TEST(CApi, LeadingDimensionTooSmall) {
    const tropical_matrix a = row_major(0, 4, 3), b = row_major(1, 3, 5);
    tropical_matrix c = row_major(2, 4, 5);
    c.layout = TROPICAL_COL_MAJOR;
    c.ld = 3;
    EXPECT_EQ(tropical_gemm(TROPICAL_MINPLUS, TROPICAL_F64, &a, &b, &c, 1, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(),
                HasSubstr("C is column-major with 4 rows, so its leading dimension must be at least 4"));
}

TEST(CApi, NullDescriptorIsNamed) {
    const tropical_matrix a = row_major(0, 4, 3), b = row_major(1, 3, 5), c = row_major(2, 4, 5);
    EXPECT_EQ(tropical_gemm(TROPICAL_MAXPLUS, TROPICAL_F32, &a, nullptr, &c, 1, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("descriptor b is NULL"));
    EXPECT_EQ(tropical_gemm_argmax(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &c, nullptr, 1, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("descriptor argmax is NULL"));
    // Backward needs the other operand for MaxMul only.
    const tropical_matrix index = row_major(3, 4, 5), grad_a = row_major(4, 4, 3);
    EXPECT_EQ(
        tropical_gemm_backward_a(TROPICAL_MAXMUL, TROPICAL_F32, &c, &index, nullptr, nullptr, &grad_a, 1, nullptr),
        TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("descriptor b is NULL"));
    EXPECT_EQ(
        tropical_gemm_backward_a(TROPICAL_MAXPLUS, TROPICAL_F32, &c, &index, nullptr, nullptr, &grad_a, 0, nullptr),
        TROPICAL_SUCCESS);
    EXPECT_EQ(tropical_gemm_backward_b(TROPICAL_MAXPLUS, TROPICAL_F32, nullptr, &index, nullptr, nullptr, &grad_a, 1,
                                       nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("descriptor c is NULL"));
    // MaxMin and MinMax route the gradient by both operands: both are needed, for either gradient.
    EXPECT_EQ(tropical_gemm_backward_a(TROPICAL_MAXMIN, TROPICAL_F32, &c, &index, nullptr, &b, &grad_a, 1, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("descriptor a is NULL"));
    EXPECT_EQ(tropical_gemm_backward_b(TROPICAL_MINMAX, TROPICAL_F32, &c, &index, &a, nullptr, &b, 1, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("descriptor b is NULL"));
}

TEST(CApi, IntegerBackwardIsUnsupported) {
    const tropical_matrix grad_c = row_major(0, 4, 5), index = row_major(1, 4, 5), grad_a = row_major(2, 4, 3),
                          grad_b = row_major(3, 3, 5);
    EXPECT_EQ(tropical_gemm_backward_a(TROPICAL_MAXPLUS, TROPICAL_I32, &grad_c, &index, nullptr, nullptr, &grad_a, 1,
                                       nullptr),
              TROPICAL_UNSUPPORTED);
    EXPECT_THAT(last_message(), HasSubstr("f32 and f64"));
    EXPECT_EQ(tropical_gemm_backward_b(TROPICAL_MINPLUS, TROPICAL_I64, &grad_c, &index, nullptr, nullptr, &grad_b, 1,
                                       nullptr),
              TROPICAL_UNSUPPORTED);
    EXPECT_THAT(last_message(), HasSubstr("not i64"));
}

TEST(CApi, ArgmaxWithAccumulateIsUnsupported) {
    const tropical_matrix a = row_major(0, 4, 3), b = row_major(1, 3, 5), c = row_major(2, 4, 5),
                          index = row_major(3, 4, 5);
    const tropical_options options{nullptr, 1, 0};
    EXPECT_EQ(tropical_gemm_argmax(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &c, &index, 1, &options),
              TROPICAL_UNSUPPORTED);
    EXPECT_THAT(last_message(), HasSubstr("cannot accumulate"));
}

TEST(CApi, UnknownEnumeratorsAreInvalidArguments) {
    const tropical_matrix a = row_major(0, 4, 3), b = row_major(1, 3, 5), c = row_major(2, 4, 5);
    // The first values past the last semiring and the last type, whichever those are.
    const int unknown = static_cast<int>(std::size(tropical::all_semirings));
    EXPECT_EQ(tropical_gemm(static_cast<tropical_semiring>(unknown), TROPICAL_F32, &a, &b, &c, 1, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("unknown semiring (" + std::to_string(unknown) + ")"));
    const int unknown_type = static_cast<int>(std::size(tropical::all_dtypes));
    EXPECT_EQ(tropical_gemm(TROPICAL_MAXPLUS, static_cast<tropical_dtype>(unknown_type), &a, &b, &c, 1, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("unknown element type (" + std::to_string(unknown_type) + ")"));
    tropical_matrix odd = c;
    odd.layout = 2;
    EXPECT_EQ(tropical_gemm(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &odd, 1, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("C has an unknown layout (2)"));
}

// The C enums travel as 32-bit integers but the library's enums are 8 bits wide: a value such as 256
// must not wrap around to a valid enumerator (256 -> 0 = row-major / MaxPlus / f32).
TEST(CApi, WideEnumeratorsDoNotWrapAround) {
    const tropical_matrix a = row_major(0, 4, 3), b = row_major(1, 3, 5);
    tropical_matrix c = row_major(2, 4, 5);
    c.layout = 256;
    EXPECT_EQ(tropical_gemm(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &c, 0, nullptr), TROPICAL_INVALID_ARGUMENT);
    c.layout = TROPICAL_ROW_MAJOR;
    EXPECT_EQ(tropical_gemm(static_cast<tropical_semiring>(256), TROPICAL_F32, &a, &b, &c, 0, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_EQ(tropical_gemm(TROPICAL_MAXPLUS, static_cast<tropical_dtype>(258), &a, &b, &c, 0, nullptr),
              TROPICAL_INVALID_ARGUMENT);
}

TEST(CApi, SuccessClearsTheMessage) {
    const tropical_matrix a = row_major(0, 4, 3), b = row_major(1, 7, 5), c = row_major(2, 4, 5);
    ASSERT_EQ(tropical_gemm(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &c, 1, nullptr), TROPICAL_INVALID_ARGUMENT);
    ASSERT_STRNE(tropical_last_error_message(), "");
    EXPECT_EQ(empty_batch_success(), TROPICAL_SUCCESS);
    EXPECT_STREQ(tropical_last_error_message(), "");
}

TEST(CApi, MessagesArePerThread) {
    const tropical_matrix a = row_major(0, 4, 3), b = row_major(1, 7, 5), c = row_major(2, 4, 5);
    ASSERT_EQ(tropical_gemm(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &c, 1, nullptr), TROPICAL_INVALID_ARGUMENT);
    const std::string mine = last_message();
    ASSERT_THAT(mine, HasSubstr("B is 7x5"));

    std::string fresh, theirs, after_success;
    std::thread other([&] {
        fresh = last_message();  // a new thread has no error yet
        const tropical_matrix grad_c = row_major(0, 4, 5), index = row_major(1, 4, 5), grad_a = row_major(2, 4, 3);
        tropical_gemm_backward_a(TROPICAL_MAXPLUS, TROPICAL_I32, &grad_c, &index, nullptr, nullptr, &grad_a, 1,
                                 nullptr);
        theirs = last_message();
    });
    other.join();
    EXPECT_EQ(fresh, "");
    EXPECT_THAT(theirs, HasSubstr("f32 and f64"));
    EXPECT_EQ(last_message(), mine);

    // Another thread's success does not clear this thread's message either.
    std::thread succeeding([&] {
        EXPECT_EQ(empty_batch_success(), TROPICAL_SUCCESS);
        after_success = last_message();
    });
    succeeding.join();
    EXPECT_EQ(after_success, "");
    EXPECT_EQ(last_message(), mine);
}

TEST(CApi, StatusStrings) {
    EXPECT_STREQ(tropical_status_string(TROPICAL_SUCCESS), "success");
    EXPECT_STREQ(tropical_status_string(TROPICAL_INVALID_ARGUMENT), "invalid argument");
    EXPECT_STREQ(tropical_status_string(TROPICAL_UNSUPPORTED), "unsupported");
    EXPECT_STREQ(tropical_status_string(TROPICAL_NO_DRIVER), "no CUDA driver");
    EXPECT_STREQ(tropical_status_string(TROPICAL_NO_DEVICE), "no CUDA device");
    for (int s = TROPICAL_SUCCESS; s <= TROPICAL_INTERNAL_ERROR; ++s) {
        const char* text = tropical_status_string(static_cast<tropical_status>(s));
        ASSERT_NE(text, nullptr);
        EXPECT_STRNE(text, "unknown status") << s;
        EXPECT_STREQ(text, tropical::to_string(static_cast<tropical::Status>(s)));
    }
    EXPECT_STREQ(tropical_status_string(static_cast<tropical_status>(42)), "unknown status");
}

// The C status codes are the C++ ones.
TEST(CApi, StatusCodesMatchTheCppStatus) {
    static_assert(TROPICAL_SUCCESS == static_cast<int>(tropical::Status::Success));
    static_assert(TROPICAL_INVALID_ARGUMENT == static_cast<int>(tropical::Status::InvalidArgument));
    static_assert(TROPICAL_UNSUPPORTED == static_cast<int>(tropical::Status::Unsupported));
    static_assert(TROPICAL_OUT_OF_MEMORY == static_cast<int>(tropical::Status::OutOfMemory));
    static_assert(TROPICAL_NO_DRIVER == static_cast<int>(tropical::Status::NoDriver));
    static_assert(TROPICAL_NO_DEVICE == static_cast<int>(tropical::Status::NoDevice));
    static_assert(TROPICAL_NO_COMPILER == static_cast<int>(tropical::Status::NoCompiler));
    static_assert(TROPICAL_COMPILE_ERROR == static_cast<int>(tropical::Status::CompileError));
    static_assert(TROPICAL_CUDA_ERROR == static_cast<int>(tropical::Status::CudaError));
    static_assert(TROPICAL_INTERNAL_ERROR == static_cast<int>(tropical::Status::Internal));
    SUCCEED();
}

// A request that passes validation reaches the pointer check, which needs the driver: without one
// it reports no driver (or no device); with one, fake addresses are not device memory. Never a crash.
TEST(CApi, ValidRequestWithFakePointersFailsCleanly) {
    const tropical_matrix a = row_major(0, 64, 32), b = row_major(1, 32, 48), c = row_major(2, 64, 48);
    const tropical_status status = tropical_gemm(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &c, 1, nullptr);
    EXPECT_THAT(status, AnyOf(Eq(TROPICAL_NO_DRIVER), Eq(TROPICAL_NO_DEVICE), Eq(TROPICAL_INVALID_ARGUMENT)))
        << tropical_status_string(status) << ": " << last_message();
    EXPECT_STRNE(tropical_last_error_message(), "");
    if (status == TROPICAL_INVALID_ARGUMENT) {
        EXPECT_THAT(last_message(), HasSubstr("is not device memory"));
    }
    if (status == TROPICAL_NO_DRIVER) {
        EXPECT_THAT(last_message(), HasSubstr("libcuda.so.1"));
    }
    // The same failure the second time (the driver's absence is remembered, not retried into a crash).
    EXPECT_EQ(tropical_gemm(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &c, 1, nullptr), status);
}

TEST(CppApi, GemmWithoutADriverThrowsNoDriver) {
    if (tropical::testing::gpu_unavailable_reason().empty()) GTEST_SKIP() << "a CUDA GPU is present";
    const auto* fake = static_cast<const float*>(address(0));
    auto* out = const_cast<float*>(static_cast<const float*>(address(2)));
    try {
        tropical::gemm<tropical::MaxPlus, float>(tropical::row_major(fake, 64, 32), tropical::row_major(fake, 32, 48),
                                                 tropical::row_major(out, 64, 48));
        FAIL() << "expected NoDriver or NoDevice";
    } catch (const tropical::NoDriver& e) {
        EXPECT_THAT(std::string(e.what()), HasSubstr("libcuda.so.1"));
        EXPECT_EQ(e.status(), tropical::Status::NoDriver);
    } catch (const tropical::NoDevice& e) {
        EXPECT_THAT(std::string(e.what()), HasSubstr("libcuda"));
        EXPECT_EQ(e.status(), tropical::Status::NoDevice);
    }
}

// Invalid arguments are reported before the driver is needed, on any machine.
TEST(CppApi, InvalidArgumentsBeforeTheDriver) {
    const auto* fake = static_cast<const float*>(address(0));
    auto* out = const_cast<float*>(static_cast<const float*>(address(2)));
    try {
        tropical::gemm<tropical::MinPlus, float>(tropical::row_major(fake, 64, 32), tropical::row_major(fake, 31, 48),
                                                 tropical::row_major(out, 64, 48));
        FAIL() << "expected InvalidArgument";
    } catch (const tropical::InvalidArgument& e) {
        EXPECT_THAT(std::string(e.what()), HasSubstr("B is 31x48 but must be 32x48"));
    }
}

}  // namespace
