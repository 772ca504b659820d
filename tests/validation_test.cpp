// Request validation (src/request/validate.cpp), which needs no GPU, part 1: shapes, leading
// dimensions, pointers and batch strides. Every rejected request throws the right exception with a
// message that names the operand and says what is expected (validation_limits_test.cpp: the rest).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "support/requests.hpp"

namespace {

using namespace tropical;
using namespace tropical::detail;
using namespace tropical::testing;
using ::testing::AllOf;
using ::testing::HasSubstr;

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
    EXPECT_THAT(invalid_message(q),
                AllOf(HasSubstr("A is row-major with 3 columns"), HasSubstr("at least 3"), HasSubstr("it is 2")));
    q = gemm_request(4, 5, 3);
    q.c.ld = 4;
    EXPECT_THAT(invalid_message(q),
                AllOf(HasSubstr("C is row-major with 5 columns"), HasSubstr("at least 5"), HasSubstr("it is 4")));
}

TEST(ValidateLeadingDimension, ColumnMajorNeedsAtLeastTheRows) {
    Request q = gemm_request(4, 5, 3, Layout::RowMajor, Layout::ColMajor);
    q.b.ld = 1;
    EXPECT_THAT(invalid_message(q),
                AllOf(HasSubstr("B is column-major with 3 rows"), HasSubstr("at least 3"), HasSubstr("it is 1")));
    q = argmax_request(4, 5, 3, Layout::RowMajor, Layout::RowMajor, Layout::RowMajor, Layout::ColMajor);
    q.argmax.ld = 0;
    EXPECT_THAT(invalid_message(q),
                AllOf(HasSubstr("argmax is column-major with 4 rows"), HasSubstr("at least 4"), HasSubstr("it is 0")));
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
    EXPECT_THAT(invalid_message(q),
                AllOf(HasSubstr("A has a negative batch stride (-12)"), HasSubstr("0 (broadcast) or positive")));
}

TEST(ValidateBatch, OutputStrideThatMakesProductsOverlap) {
    Request q = gemm_request(4, 5, 3);
    q.batch = 3;
    q.c.batch_stride = 19;  // one 4x5 C spans 20 elements
    EXPECT_THAT(invalid_message(q),
                AllOf(HasSubstr("C's batch stride is 19"), HasSubstr("(20)"), HasSubstr("overwrite each other")));
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

}  // namespace
