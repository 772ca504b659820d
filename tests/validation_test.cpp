// Request validation (src/gemm/validate.cpp), which needs no GPU: every rejected request throws the
// right exception with a message that names the operand and says what is expected, and every
// request that can work passes. Validation never dereferences a pointer, so fake addresses do.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "gemm/validate.hpp"
#include <tropical/error.hpp>
#include <tropical/gemm.hpp>

namespace {

using namespace tropical;
using namespace tropical::detail;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// Fake device addresses, 1 TiB apart, so that no two operands overlap unless a test says so.
const void* address(int slot, std::int64_t byte_offset = 0) {
    return reinterpret_cast<const void*>((std::uintptr_t{1} << 40) * static_cast<std::uintptr_t>(slot + 1) +
                                         static_cast<std::uintptr_t>(byte_offset));
}
enum Slot { SlotA, SlotB, SlotC, SlotArgmax, SlotGrad };

// A tightly packed rows x cols operand in `layout` at `slot`.
OperandRef matrix(int slot, std::int64_t rows, std::int64_t cols, Layout layout = Layout::RowMajor) {
    return {address(slot), rows, cols, layout == Layout::RowMajor ? cols : rows, layout, 0};
}

// C (M x N) = A (M x K) (x) B (K x N), f32, all row-major unless changed.
Request gemm_request(std::int64_t m, std::int64_t n, std::int64_t k, Layout la = Layout::RowMajor,
                     Layout lb = Layout::RowMajor, Layout lc = Layout::RowMajor) {
    Request q;
    q.operation = Operation::Gemm;
    q.semiring = Semiring::MaxPlus;
    q.dtype = DType::F32;
    q.a = matrix(SlotA, m, k, la);
    q.b = matrix(SlotB, k, n, lb);
    q.c = matrix(SlotC, m, n, lc);
    return q;
}

Request argmax_request(std::int64_t m, std::int64_t n, std::int64_t k, Layout la = Layout::RowMajor,
                       Layout lb = Layout::RowMajor, Layout lc = Layout::RowMajor, Layout li = Layout::RowMajor) {
    Request q = gemm_request(m, n, k, la, lb, lc);
    q.operation = Operation::GemmArgmax;
    q.argmax = matrix(SlotArgmax, m, n, li);
    return q;
}

// grad_A (M x K) from grad_C (M x N), argmax (M x N) and, for MaxMul, B (K x N).
Request backward_a_request(std::int64_t m, std::int64_t n, std::int64_t k, Semiring s = Semiring::MaxPlus) {
    Request q;
    q.operation = Operation::BackwardA;
    q.semiring = s;
    q.dtype = DType::F32;
    q.c = matrix(SlotC, m, n);
    q.argmax = matrix(SlotArgmax, m, n);
    q.grad = matrix(SlotGrad, m, k);
    if (s == Semiring::MaxMul) q.b = matrix(SlotB, k, n);
    return q;
}

// grad_B (K x N) from grad_C (M x N), argmax (M x N) and, for MaxMul, A (M x K).
Request backward_b_request(std::int64_t m, std::int64_t n, std::int64_t k, Semiring s = Semiring::MaxPlus) {
    Request q;
    q.operation = Operation::BackwardB;
    q.semiring = s;
    q.dtype = DType::F32;
    q.c = matrix(SlotC, m, n);
    q.argmax = matrix(SlotArgmax, m, n);
    q.grad = matrix(SlotGrad, k, n);
    if (s == Semiring::MaxMul) q.a = matrix(SlotA, m, k);
    return q;
}

// The message of the InvalidArgument that validating q throws ("" and a failure if none).
std::string invalid_message(const Request& q) {
    try {
        validate(q);
        ADD_FAILURE() << "expected InvalidArgument, but the request was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.status(), Status::InvalidArgument);
        return e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected InvalidArgument, got another exception: " << e.what();
    }
    return "";
}

std::string unsupported_message(const Request& q) {
    try {
        validate(q);
        ADD_FAILURE() << "expected Unsupported, but the request was accepted";
    } catch (const Unsupported& e) {
        EXPECT_EQ(e.status(), Status::Unsupported);
        return e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected Unsupported, got another exception: " << e.what();
    }
    return "";
}

// --- shapes ---------------------------------------------------------------------------------------

TEST(ValidateShapes, AWithTheWrongNumberOfRows) {
    // M and N follow from A and B, so the mismatch is reported on C, naming both inputs.
    Request q = gemm_request(4, 5, 3);
    q.a.rows = 6;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("C is 4x5 but must be 6x5"), HasSubstr("A (6x3)")));
}

TEST(ValidateShapes, BWhoseRowsDoNotMatchTheColumnsOfA) {
    Request q = gemm_request(4, 5, 3);
    q.b = matrix(SlotB, 7, 5);
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("B is 7x5"), HasSubstr("must be 3x5")));
}

TEST(ValidateShapes, BWithTheWrongNumberOfColumns) {
    Request q = gemm_request(4, 5, 3);
    q.b = matrix(SlotB, 3, 2);
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("C is 4x5 but must be 4x2"), HasSubstr("B (3x2)")));
}

// A C of the wrong shape is named as the culprit, with the shapes of the inputs that fix it.
TEST(ValidateShapes, CThatDoesNotMatchItsInputs) {
    Request q = gemm_request(4, 5, 3);
    q.c = matrix(SlotC, 9, 5);
    EXPECT_THAT(invalid_message(q), HasSubstr("C is 9x5 but must be 4x5, the shape of A (4x3) times B (3x5)"));
    q = gemm_request(4, 5, 3);
    q.c = matrix(SlotC, 4, 8);
    EXPECT_THAT(invalid_message(q), HasSubstr("C is 4x8 but must be 4x5"));
}

TEST(ValidateShapes, ArgmaxOfTheWrongShape) {
    Request q = argmax_request(4, 5, 3);
    q.argmax = matrix(SlotArgmax, 5, 4);
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("argmax is 5x4"), HasSubstr("must be 4x5")));
}

TEST(ValidateShapes, BackwardAOperandsOfTheWrongShape) {
    Request q = backward_a_request(4, 5, 3);
    q.c = matrix(SlotC, 4, 6);
    q.argmax = matrix(SlotArgmax, 4, 6);
    q.argmax.rows = 2;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("argmax is 2x6"), HasSubstr("must be 4x6")));

    q = backward_a_request(4, 5, 3);
    q.c.rows = 7;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("grad_C is 7x5"), HasSubstr("must be 4x5")));

    q = backward_a_request(4, 5, 3, Semiring::MaxMul);
    q.b = matrix(SlotB, 3, 9);
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("B is 3x9"), HasSubstr("must be 3x5")));
}

TEST(ValidateShapes, BackwardBOperandsOfTheWrongShape) {
    Request q = backward_b_request(4, 5, 3);
    q.c.cols = 2;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("grad_C is 4x2"), HasSubstr("must be 4x5")));

    q = backward_b_request(4, 5, 3);
    q.argmax = matrix(SlotArgmax, 4, 4);
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("argmax is 4x4"), HasSubstr("must be 4x5")));

    q = backward_b_request(4, 5, 3, Semiring::MaxMul);
    q.a = matrix(SlotA, 4, 8);
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("A is 4x8"), HasSubstr("must be 4x3")));
}

// B is read for MaxMul only: for the other semirings, a B (or an A) that is not given is fine.
TEST(ValidateShapes, BackwardIgnoresTheOtherOperandExceptForMaxMul) {
    EXPECT_NO_THROW(validate(backward_a_request(4, 5, 3, Semiring::MaxPlus)));
    EXPECT_NO_THROW(validate(backward_b_request(4, 5, 3, Semiring::MinPlus)));
    Request q = backward_a_request(4, 5, 3, Semiring::MaxMul);
    q.b = {};
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("B is 0x0"), HasSubstr("must be 3x5")));
}

TEST(ValidateShapes, NegativeSizes) {
    EXPECT_THAT(invalid_message(gemm_request(-1, 5, 3)), AllOf(HasSubstr("M=-1"), HasSubstr("0 or more")));
    EXPECT_THAT(invalid_message(gemm_request(4, -2, 3)), AllOf(HasSubstr("N=-2"), HasSubstr("0 or more")));
    EXPECT_THAT(invalid_message(gemm_request(4, 5, -3)), AllOf(HasSubstr("K=-3"), HasSubstr("0 or more")));
    EXPECT_THAT(invalid_message(gemm_request(-1, 0, 3)), AllOf(HasSubstr("M=-1"), HasSubstr("0 or more")));
    EXPECT_THAT(invalid_message(backward_a_request(4, 5, -3)), AllOf(HasSubstr("K=-3"), HasSubstr("0 or more")));
}

TEST(ValidateShapes, NegativeBatchCount) {
    Request q = gemm_request(4, 5, 3);
    q.batch = -1;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("batch count is -1"), HasSubstr("0 or more")));
}

// --- leading dimensions ---------------------------------------------------------------------------

TEST(ValidateLeadingDimension, RowMajorNeedsAtLeastTheColumns) {
    Request q = gemm_request(4, 5, 3);
    q.a.ld = 2;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("A is row-major with 3 columns"), HasSubstr("at least 3"),
                                          HasSubstr("it is 2")));
    q = gemm_request(4, 5, 3);
    q.c.ld = 4;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("C is row-major with 5 columns"), HasSubstr("at least 5"),
                                          HasSubstr("it is 4")));
}

TEST(ValidateLeadingDimension, ColumnMajorNeedsAtLeastTheRows) {
    Request q = gemm_request(4, 5, 3, Layout::RowMajor, Layout::ColMajor);
    q.b.ld = 1;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("B is column-major with 3 rows"), HasSubstr("at least 3"),
                                          HasSubstr("it is 1")));
    q = argmax_request(4, 5, 3, Layout::RowMajor, Layout::RowMajor, Layout::RowMajor, Layout::ColMajor);
    q.argmax.ld = 0;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("argmax is column-major with 4 rows"), HasSubstr("at least 4"),
                                          HasSubstr("it is 0")));
}

TEST(ValidateLeadingDimension, NegativeLeadingDimension) {
    Request q = gemm_request(4, 5, 3);
    q.b.ld = -5;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("B is row-major"), HasSubstr("at least 5")));
}

// --- pointers -------------------------------------------------------------------------------------

TEST(ValidatePointers, NullWithElementsIsRejected) {
    Request q = gemm_request(4, 5, 3);
    q.a.data = nullptr;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("A is a null pointer"), HasSubstr("4x3 elements")));
    q = gemm_request(4, 5, 3);
    q.b.data = nullptr;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("B is a null pointer"), HasSubstr("3x5 elements")));
    q = gemm_request(4, 5, 3);
    q.c.data = nullptr;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("C is a null pointer"), HasSubstr("4x5 elements")));
    q = argmax_request(4, 5, 3);
    q.argmax.data = nullptr;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("argmax is a null pointer"), HasSubstr("4x5 elements")));
    q = backward_b_request(4, 5, 3);
    q.grad.data = nullptr;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("grad_B is a null pointer"), HasSubstr("3x5 elements")));
}

TEST(ValidatePointers, NullWithoutElementsIsFine) {
    // K = 0: A (4x0) and B (0x5) hold nothing; C still has 4x5 elements to set to the zero.
    Request q = gemm_request(4, 5, 0);
    q.a.data = nullptr;
    q.b.data = nullptr;
    EXPECT_NO_THROW(validate(q));
    // M = 0 and N = 0: nothing at all.
    q = argmax_request(0, 0, 3);
    q.a.data = q.b.data = q.c.data = q.argmax.data = nullptr;
    EXPECT_NO_THROW(validate(q));
    // A batch of none.
    q = gemm_request(4, 5, 3);
    q.batch = 0;
    q.a.data = q.b.data = q.c.data = nullptr;
    EXPECT_NO_THROW(validate(q));
}

// --- batch strides --------------------------------------------------------------------------------

TEST(ValidateBatch, NegativeBatchStride) {
    Request q = gemm_request(4, 5, 3);
    q.batch = 2;
    q.a.batch_stride = -12;
    q.b.batch_stride = 15;
    q.c.batch_stride = 20;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("A has a negative batch stride (-12)"),
                                          HasSubstr("0 (broadcast) or positive")));
}

TEST(ValidateBatch, OutputStrideThatMakesProductsOverlap) {
    Request q = gemm_request(4, 5, 3);
    q.batch = 3;
    q.c.batch_stride = 19;  // one 4x5 C spans 20 elements
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("C's batch stride is 19"), HasSubstr("(20)"),
                                          HasSubstr("overwrite each other")));
    q.c.batch_stride = 0;  // broadcast is for inputs only
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("C's batch stride is 0"), HasSubstr("overwrite each other")));

    q = argmax_request(4, 5, 3);
    q.batch = 2;
    q.c.batch_stride = 20;
    q.argmax.batch_stride = 10;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("argmax's batch stride is 10"), HasSubstr("(20)")));
}

TEST(ValidateBatch, OutputStrideIsFreeForOneProduct) {
    Request q = gemm_request(4, 5, 3);
    q.c.batch_stride = 0;
    EXPECT_NO_THROW(validate(q));
}

// --- overlaps -------------------------------------------------------------------------------------

TEST(ValidateOverlap, OutputOverlappingAnInput) {
    Request q = gemm_request(4, 4, 4);
    q.c.data = q.a.data;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("C overlaps A"), HasSubstr("must not share memory")));

    // C starting at the last element of B (row-major 4x4 f32: 64 bytes from its start).
    q = gemm_request(4, 4, 4);
    q.c.data = address(SlotB, 60);
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("C overlaps B"), HasSubstr("must not share memory")));

    // C ending where A starts... plus one element.
    q = gemm_request(4, 4, 4);
    q.c.data = address(SlotA, -60);
    EXPECT_THAT(invalid_message(q), HasSubstr("C overlaps A"));
}

TEST(ValidateOverlap, AdjacentOperandsAreFine) {
    Request q = gemm_request(4, 4, 4);
    q.c.data = address(SlotA, 64);  // right after A's 16 floats
    EXPECT_NO_THROW(validate(q));
    q.c.data = address(SlotA, -64);  // right before A
    EXPECT_NO_THROW(validate(q));
}

TEST(ValidateOverlap, InputsMayShareMemory) {
    // D (x) D, as all-pairs shortest paths does.
    Request q = gemm_request(8, 8, 8);
    q.b.data = q.a.data;
    EXPECT_NO_THROW(validate(q));
}

TEST(ValidateOverlap, BatchExtentCounts) {
    // The second C of the batch (at element 20) runs into A placed 100 bytes after C.
    Request q = gemm_request(4, 5, 3);
    q.batch = 2;
    q.c.batch_stride = 20;
    q.a.data = address(SlotC, 100);
    EXPECT_THAT(invalid_message(q), HasSubstr("C overlaps A"));
}

TEST(ValidateOverlap, ArgmaxOverlappingC) {
    Request q = argmax_request(4, 5, 3);
    q.argmax.data = address(SlotC, 40);
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("C overlaps argmax"), HasSubstr("must not share memory")));
}

TEST(ValidateOverlap, GradientOverlappingGradC) {
    Request q = backward_a_request(4, 5, 3);
    q.grad.data = q.c.data;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("grad_A overlaps grad_C"), HasSubstr("backward for A")));
}

// --- unsupported combinations ---------------------------------------------------------------------

TEST(ValidateSupport, BackwardForIntegersIsUnsupported) {
    for (DType t : {DType::I32, DType::I64}) {
        Request q = backward_a_request(4, 5, 3);
        q.dtype = t;
        EXPECT_THAT(unsupported_message(q), AllOf(HasSubstr("f32 and f64"), HasSubstr(std::string(to_string(t)))));
        q = backward_b_request(4, 5, 3, Semiring::MaxMul);
        q.dtype = t;
        EXPECT_THAT(unsupported_message(q), HasSubstr("f32 and f64"));
    }
    Request q = backward_a_request(4, 5, 3);
    q.dtype = DType::F64;
    EXPECT_NO_THROW(validate(q));
}

TEST(ValidateSupport, ArgmaxWithAccumulateIsUnsupported) {
    Request q = argmax_request(4, 5, 3);
    q.options.accumulate = true;
    EXPECT_THAT(unsupported_message(q), AllOf(HasSubstr("cannot accumulate"), HasSubstr("accumulate = false")));
    // Plain products and backward may accumulate.
    q = gemm_request(4, 5, 3);
    q.options.accumulate = true;
    EXPECT_NO_THROW(validate(q));
    q = backward_b_request(4, 5, 3);
    q.options.accumulate = true;
    EXPECT_NO_THROW(validate(q));
}

// --- sizes ----------------------------------------------------------------------------------------

TEST(ValidateSizes, KTooLargeForInt32Argmax) {
    const std::int64_t k = std::int64_t{INT32_MAX} + 1;
    EXPECT_THAT(invalid_message(argmax_request(1, 1, k)),
                AllOf(HasSubstr("K = 2147483648"), HasSubstr("int32 argmax"), HasSubstr("split the product along K")));
    EXPECT_THAT(invalid_message(backward_a_request(1, 1, k)), HasSubstr("K = 2147483648"));
    EXPECT_THAT(invalid_message(backward_b_request(1, 1, k)), HasSubstr("K = 2147483648"));
    // The plain product has no indices to fit, and the largest K that fits is fine.
    EXPECT_NO_THROW(validate(gemm_request(1, 1, k)));
    EXPECT_NO_THROW(validate(argmax_request(1, 1, INT32_MAX)));
}

TEST(ValidateSizes, ExtentOverflowing64Bits) {
    // A is 2^32 x 2^32: 2^64 elements.
    const std::int64_t big = std::int64_t{1} << 32;
    EXPECT_THAT(invalid_message(gemm_request(big, 1, big)), AllOf(HasSubstr("A is too large"), HasSubstr("64 bits")));
    // A leading dimension that alone overflows.
    Request q = gemm_request(4, 5, 3);
    q.c.ld = kInt64Max / 2;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("C is too large"), HasSubstr("64 bits")));
    // Elements that fit but bytes that do not: 2^62 f32 elements are 2^64 bytes.
    q = gemm_request(1, std::int64_t{1} << 62, 1);
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("is too large"), HasSubstr("64 bits")));
    // The batch: the last matrix starts beyond 2^63.
    q = gemm_request(4, 5, 3);
    q.batch = 3;
    q.c.batch_stride = 20;
    q.b.batch_stride = kInt64Max / 2;
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("B is too large"), HasSubstr("64 bits")));
}

// --- unknown enumerators --------------------------------------------------------------------------

TEST(ValidateEnums, UnknownDType) {
    Request q = gemm_request(4, 5, 3);
    q.dtype = static_cast<DType>(7);
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("unknown element type"), HasSubstr("7")));
}

TEST(ValidateEnums, UnknownSemiring) {
    Request q = gemm_request(4, 5, 3);
    q.semiring = static_cast<Semiring>(3);
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("unknown semiring"), HasSubstr("3")));
}

TEST(ValidateEnums, UnknownLayout) {
    Request q = gemm_request(4, 5, 3);
    q.b.layout = static_cast<Layout>(2);
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("B has an unknown layout (2)"),
                                          HasSubstr("row-major or column-major")));
    // Also where the operand holds no elements.
    q = gemm_request(4, 5, 0);
    q.a.layout = static_cast<Layout>(9);
    EXPECT_THAT(invalid_message(q), HasSubstr("A has an unknown layout (9)"));
}

TEST(ValidateEnums, UnknownOperation) {
    Request q = gemm_request(4, 5, 3);
    q.operation = static_cast<Operation>(11);
    EXPECT_THAT(invalid_message(q), HasSubstr("unknown operation (11)"));
}

// --- valid requests -------------------------------------------------------------------------------

TEST(ValidateAccepts, EveryLayoutCombination) {
    const Layout layouts[] = {Layout::RowMajor, Layout::ColMajor};
    for (Layout la : layouts)
        for (Layout lb : layouts)
            for (Layout lc : layouts) {
                SCOPED_TRACE(::testing::Message() << to_string(la) << " " << to_string(lb) << " " << to_string(lc));
                const ValidatedRequest v = validate(gemm_request(4, 5, 3, la, lb, lc));
                EXPECT_EQ(v.shape.m, 4);
                EXPECT_EQ(v.shape.n, 5);
                EXPECT_EQ(v.shape.k, 3);
                EXPECT_EQ(v.operand_count, 3);
                for (Layout li : layouts) EXPECT_NO_THROW(validate(argmax_request(4, 5, 3, la, lb, lc, li)));
            }
}

TEST(ValidateAccepts, OperandsInTheirRoles) {
    ValidatedRequest v = validate(argmax_request(4, 5, 3));
    ASSERT_EQ(v.operand_count, 4);
    EXPECT_STREQ(v.operands[0].name, "C");
    EXPECT_TRUE(v.operands[0].output);
    EXPECT_EQ(v.operands[0].element_size, 4u);
    EXPECT_STREQ(v.operands[3].name, "argmax");
    EXPECT_TRUE(v.operands[3].output);
    EXPECT_EQ(v.operands[3].element_size, 4u);

    Request q = backward_b_request(4, 5, 3, Semiring::MaxMul);
    q.dtype = DType::F64;
    v = validate(q);
    EXPECT_EQ(v.shape.m, 4);
    EXPECT_EQ(v.shape.n, 5);
    EXPECT_EQ(v.shape.k, 3);
    ASSERT_EQ(v.operand_count, 4);
    EXPECT_STREQ(v.operands[0].name, "grad_B");
    EXPECT_EQ(v.operands[0].element_size, 8u);
    EXPECT_STREQ(v.operands[3].name, "A");
    EXPECT_FALSE(v.operands[3].output);
}

TEST(ValidateAccepts, LeadingDimensionLargerThanNeeded) {
    Request q = gemm_request(4, 5, 3, Layout::RowMajor, Layout::ColMajor, Layout::RowMajor);
    q.a.ld = 64;
    q.b.ld = 1000;
    q.c.ld = 7;
    EXPECT_NO_THROW(validate(q));
}

TEST(ValidateAccepts, BroadcastInputs) {
    Request q = gemm_request(4, 5, 3);
    q.batch = 1000;
    q.a.batch_stride = 0;
    q.b.batch_stride = 0;
    q.c.batch_stride = 20;
    EXPECT_NO_THROW(validate(q));
    q.b.batch_stride = 15;
    EXPECT_NO_THROW(validate(q));
}

TEST(ValidateAccepts, EmptyShapes) {
    struct Mnk {
        std::int64_t m, n, k;
    };
    for (const auto [m, n, k] : {Mnk{0, 5, 3}, Mnk{4, 0, 3}, Mnk{4, 5, 0}, Mnk{0, 0, 0}}) {
        SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k);
        EXPECT_NO_THROW(validate(gemm_request(m, n, k)));
        EXPECT_NO_THROW(validate(argmax_request(m, n, k)));
        EXPECT_NO_THROW(validate(backward_a_request(m, n, k)));
        EXPECT_NO_THROW(validate(backward_b_request(m, n, k, Semiring::MaxMul)));
    }
    Request q = gemm_request(4, 5, 3);
    q.batch = 0;
    EXPECT_NO_THROW(validate(q));
}

TEST(ValidateAccepts, EveryTypeAndSemiring) {
    for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64})
        for (Semiring s : {Semiring::MaxPlus, Semiring::MinPlus, Semiring::MaxMul}) {
            Request q = argmax_request(4, 5, 3);
            q.dtype = t;
            q.semiring = s;
            EXPECT_NO_THROW(validate(q)) << to_string(t) << " " << to_string(s);
        }
}

}  // namespace
