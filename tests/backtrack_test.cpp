// The backtrack without a GPU: the host walk (tropical::host::backtrack and tropical_host_backtrack)
// over planted chains in every geometry, cut walks, no steps, no rows, no states; its validation
// (shapes, steps, overlaps, accumulate; C ABI descriptors); and its plan (the Walk kernel, a thread
// per row).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <tropical/c_api.h>
#include <tropical/error.hpp>
#include <tropical/host.hpp>
#include "catalogue/catalogue.hpp"
#include "gemm/plan.hpp"
#include "support/backtrack_cases.hpp"
#include "support/requests.hpp"

using namespace tropical;
using namespace tropical::testing;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

struct ChainShape {
    std::int64_t rows, states, steps;
};
const ChainShape kShapes[] = {{1, 1, 0}, {1, 1, 1}, {3, 5, 7}, {64, 33, 40}, {0, 4, 3}, {5, 0, 3}, {7, 300, 1}};

std::string describe(const ChainShape& s, const ChainGeometry& g) {
    return fmt::format("B={} S={} T={}; {}", s.rows, s.states, s.steps, describe(g));
}

TEST(HostBacktrack, WalksThePlantedPathsAndStopsAtIndicesOutOfRange) {
    TROPICAL_TEST_RNG(rng);
    for (const ChainGeometry& g : chain_geometries())
        for (const ChainShape& s : kShapes) {
            Chain c = planted_chain(rng, s.rows, s.states, s.steps, g, 0.3);
            host::backtrack(c.back_view(c.back.data()), s.steps, c.last_view(c.last.data()),
                            c.path_view(c.path.data()));
            EXPECT_EQ(c.path, c.expected) << describe(s, g);
        }
}

TEST(HostBacktrack, TheCAbiWalksTheSame) {
    TROPICAL_TEST_RNG(rng);
    const ChainGeometry g = chain_geometries()[1];
    Chain c = planted_chain(rng, 9, 12, 20, g);
    const auto layout = [](Layout l) { return l == Layout::RowMajor ? TROPICAL_ROW_MAJOR : TROPICAL_COL_MAJOR; };
    const tropical_matrix back{c.back.data(), 9, 12, c.back_ld, layout(g.back_layout), c.back_stride};
    const tropical_matrix last{c.last.data(), 9, 1, g.last_ld, TROPICAL_ROW_MAJOR, 0};
    const tropical_matrix path{c.path.data(), 9, 21, c.path_ld, layout(g.path_layout), 0};
    ASSERT_EQ(tropical_host_backtrack(&back, 20, &last, &path, nullptr), TROPICAL_SUCCESS)
        << tropical_last_error_message();
    EXPECT_EQ(c.path, c.expected);
    EXPECT_EQ(tropical_host_backtrack(nullptr, 20, &last, &path, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("the matrix descriptor back is NULL"));
    EXPECT_EQ(tropical_backtrack(&back, 20, nullptr, &path, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("the matrix descriptor last is NULL"));
    EXPECT_EQ(tropical_host_backtrack(&back, 20, &last, nullptr, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("the matrix descriptor path is NULL"));
}

// --- validation -------------------------------------------------------------------------------------

// B = 4 rows over S = 6 states, T = 3 steps, every operand tightly packed at its own fake address.
detail::Request backtrack_request(std::int64_t rows = 4, std::int64_t states = 6, std::int64_t steps = 3) {
    detail::Request q;
    q.operation = detail::Operation::Backtrack;
    q.dtype = DType::I32;
    q.argmax = matrix(SlotArgmax, rows, states);
    q.argmax.batch_stride = rows * states;
    q.a = matrix(SlotA, rows, 1);
    q.c = matrix(SlotC, rows, steps + 1);
    q.batch = steps;
    return q;
}

TEST(ValidateBacktrack, AcceptsAChainAndGivesItsShape) {
    const detail::ValidatedRequest v = detail::validate(backtrack_request());
    EXPECT_EQ(v.shape.m, 4);
    EXPECT_EQ(v.shape.n, 6);
    EXPECT_EQ(v.shape.k, 3);
    EXPECT_NO_THROW(detail::validate(backtrack_request(4, 6, 0)));  // the paths are the last states
}

TEST(ValidateBacktrack, NamesWhatIsWrong) {
    detail::Request q = backtrack_request();
    q.a = matrix(SlotA, 5, 1);
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("the last states are 5x1 but must be 4x1"), HasSubstr("(4x6)")));
    q = backtrack_request();
    q.a = matrix(SlotA, 4, 2);
    EXPECT_THAT(invalid_message(q), HasSubstr("the last states are 4x2 but must be 4x1"));
    q = backtrack_request();
    q.c = matrix(SlotC, 4, 3);
    EXPECT_THAT(invalid_message(q), AllOf(HasSubstr("the paths are 4x3 but must be 4x4"), HasSubstr("3 steps")));
    q = backtrack_request();
    q.batch = -2;
    EXPECT_THAT(invalid_message(q), HasSubstr("the number of steps is -2; it must be 0 or more"));
    q = backtrack_request();
    q.argmax.batch_stride = -1;
    EXPECT_THAT(invalid_message(q), HasSubstr("back has a negative batch stride"));
    q = backtrack_request();
    q.c.ld = 2;
    EXPECT_THAT(invalid_message(q), HasSubstr("path is row-major with 4 columns, so its leading dimension must be"));
    q = backtrack_request();
    q.a.data = nullptr;
    EXPECT_THAT(invalid_message(q), HasSubstr("last is a null pointer"));
    q = backtrack_request();
    q.options.accumulate = true;
    EXPECT_THAT(invalid_message(q), HasSubstr("backtrack cannot accumulate"));
    q = backtrack_request();
    q.dtype = DType::F32;
    EXPECT_THAT(unsupported_message(q), HasSubstr("backtrack follows int32 indices"));
}

TEST(ValidateBacktrack, ThePathsMayNotShareMemoryWithTheTables) {
    detail::Request q = backtrack_request();
    q.c.data = address(SlotArgmax, 4 * 6 * 4 * 2);  // inside the third table
    EXPECT_THAT(invalid_message(q), HasSubstr("path overlaps back in memory"));
    q = backtrack_request();
    q.c.data = q.a.data;
    EXPECT_THAT(invalid_message(q), HasSubstr("path overlaps last in memory"));
    // The last states and the paths are one matrix each, whatever the steps: a batch stride of 0
    // is theirs, and the tables may lie right after the paths.
    q = backtrack_request();
    q.argmax.data = address(SlotC, 4 * 4 * 4);
    EXPECT_NO_THROW(detail::validate(q));
}

TEST(PlanBacktrack, TheWalkKernelWithAThreadPerRow) {
    const detail::Request q = backtrack_request(1000, 256, 512);
    const detail::LaunchPlan p = detail::plan(q, detail::validate(q).shape, {132, 0});
    EXPECT_EQ(std::string(p.choice.kernel->name), "tropical_backtrack_i32");
    EXPECT_EQ(p.block, 128u);
    EXPECT_EQ(p.grid[0], 8u);  // ceil(1000 / 128)
    EXPECT_EQ(p.backtrack.rows, 1000);
    EXPECT_EQ(p.backtrack.states, 256);
    EXPECT_EQ(p.backtrack.steps, 512);
    const detail::Request many = backtrack_request(10'000'000, 2, 1);
    EXPECT_EQ(detail::plan(many, detail::validate(many).shape, {132, 0}).grid[0], 132u * 16);
    EXPECT_TRUE(detail::has_work(backtrack_request(3, 6, 0), {3, 6, 0}));
    EXPECT_FALSE(detail::has_work(backtrack_request(0, 6, 4), {0, 6, 4}));
}

}  // namespace
