// Every op of the C++ API captured into a CUDA graph on a stream, replayed, and compared with the
// reference: products, products with argmax, both backward passes, single and batched, on shapes
// that reach every variant the plan chooses (small, batched, big tiles, split-K, whose memset of C
// must be a node of the graph), with and without the device hint. Capturing must run nothing, a
// replay must redo everything (a second replay on new inputs gives their result), and a kernel's
// first use may itself be captured (the library loads it in relaxed capture mode).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <tropical/context.hpp>
#include <tropical/gemm.hpp>
#include <tropical/kernels.hpp>
#include "gemm/plan.hpp"
#include "request/validate.hpp"
#include "support/gemm_test_util.hpp"
#include "support/gpu.hpp"
#include "support/stream_graph.hpp"

using namespace tropical;
using namespace tropical::testing;
using tropical::detail::CapturedGraph;
using tropical::detail::OwnedStream;

namespace {

struct Problem {
    std::string label;
    Shape shape;
    std::int64_t count = 1;  // above 1: the batched calls
    int layouts = 0;         // which layout_combination
    bool gaps = false;       // gaps between the matrices of a batch
    bool dense = false;      // every operand row-major in one array (the Dense kernels' layout)
};

// One problem per variant of the plain product, sized by the rules of src/gemm/plan.cpp for this
// GPU (TheProblemsReachEveryProductVariant checks that they still do), one whose K is too long for
// the backward kernels' shared memory (they add with atomics into a gradient zeroed first), and one
// whose argmax the Serial kernels split (C and argmax filled first: two memset nodes).
std::vector<Problem> problems() {
    const std::int64_t sms = CudaContext::for_device(0).multiprocessor_count(), slots = 2 * sms;
    return {
        {"small", {48, 40, 24}, 1, 1},
        {"tiny, batch with gaps", {16, 16, 13}, sms, 3, true},
        {"dense", {32, 32, 8}, 3 * sms, 0, false, true},
        {"wide", {64, 48, 16}, sms + 5, 0, false, true},
        {"vector", {3, 200, 1100}, 1, 4},
        {"column", {300, 2, 1100}, 1, 4},
        {"batched", {64, 64, 64}, sms + 28, 2},
        {"big tiles", {2048, 128 * ((slots + 15) / 16), 24}, 1, 0},
        {"split-K", {256, 256, 128 * ((3 * slots + 15) / 16)}, 1, 4},
        {"long K, batch with gaps", {32, 32, 8192}, 3, 6, true},
        {"serial argmax", {768, 64 * ((sms + 11) / 12) - 3, 384}, 1, 5},
    };
}

Geometries geometries_of(const Problem& p) {
    if (p.dense) return with_count(Geometries{}, p.count);
    Geometries g = with_count(layout_combination(p.layouts, 1), p.count);
    if (p.gaps) g.a.gap = 2, g.b.gap = 5, g.c.gap = 3, g.argmax.gap = 1;
    return g;
}

std::string describe(const Problem& p) { return p.label + ": " + tropical::testing::describe(p.shape); }

// The plan the library makes for q on device 0.
detail::LaunchPlan plan_of(const detail::Request& q) {
    auto& context = CudaContext::for_device(0);
    return detail::plan(q, detail::validate(q).shape,
                        {context.multiprocessor_count(), context.shared_memory_per_block_optin()});
}

template <class T>
detail::Request request(detail::Operation operation, Semiring s, std::int64_t count) {
    detail::Request q;
    q.operation = operation;
    q.semiring = s;
    q.dtype = dtype_of<T>();
    q.batch = count;
    return q;
}

// The graph holds what the plan launches: one kernel, and a memset node where the plan fills first.
void expect_nodes_of(const CapturedGraph& graph, const detail::LaunchPlan& p) {
    const auto types = graph.node_types();
    const auto kernels = std::count(types.begin(), types.end(), CU_GRAPH_NODE_TYPE_KERNEL);
    const auto memsets = std::count(types.begin(), types.end(), CU_GRAPH_NODE_TYPE_MEMSET);
    SCOPED_TRACE(std::string("kernel ") + std::string(p.choice.kernel->name) + ", variant " +
                 std::string(to_string(p.choice.kernel->variant)));
    EXPECT_EQ(kernels, p.launch ? 1 : 0);
    EXPECT_EQ(memsets > 0, p.fill != detail::LaunchPlan::Fill::None) << memsets << " memset nodes";
    EXPECT_EQ(static_cast<std::size_t>(kernels + memsets), types.size()) << "nodes of other kinds";
}

template <class T>
bool all_poison(const HostMatrix<T>& m) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(m.storage.data());
    return std::all_of(bytes, bytes + m.storage.size() * sizeof(T), [&](unsigned char x) { return x == m.poison; });
}

// C = A (x) B (and the argmax) captured, then replayed on the inputs of the capture and on new ones.
// The call is made once before the capture (which loads its kernel) unless `cold`.
template <class S, class T>
void check_product(Rng& rng, const Problem& p, bool with_argmax, int device_hint, bool cold = false) {
    SCOPED_TRACE(describe(p) + (with_argmax ? ", with argmax" : "") + ", device hint " + std::to_string(device_hint));
    constexpr Semiring ring = S::value;
    const Geometries g = geometries_of(p);
    const Shape& s = p.shape;
    auto a = random_matrix<T>(rng, ring, Values::Typical, s.m, s.k, g.a);
    auto b = random_matrix<T>(rng, ring, Values::Typical, s.k, s.n, g.b);
    const auto c0 = make_matrix<T>(s.m, s.n, g.c);
    const auto m0 = make_matrix<std::int32_t>(s.m, s.n, g.argmax);
    DeviceMatrix<T> da(a), db(b), dc(c0);
    DeviceMatrix<std::int32_t> dm(m0);

    const OwnedStream stream;
    const GemmOptions options{stream.get(), false, device_hint};
    const auto enqueue = [&] {
        if (p.count == 1 && with_argmax) gemm_with_argmax<S>(da.view(), db.view(), dc.view(), dm.view(), options);
        else if (p.count == 1) gemm<S>(da.view(), db.view(), dc.view(), options);
        else if (with_argmax)
            gemm_batched_with_argmax<S>(da.batched(), db.batched(), dc.batched(), dm.batched(), p.count, options);
        else gemm_batched<S>(da.batched(), db.batched(), dc.batched(), p.count, options);
    };
    if (!cold) {
        enqueue();
        stream.synchronize();
        dc.fill_bytes(c0.poison), dm.fill_bytes(m0.poison);
    }
    auto q = request<T>(with_argmax ? detail::Operation::GemmArgmax : detail::Operation::Gemm, ring, p.count);
    q.a = detail::operand(da.batched()), q.b = detail::operand(db.batched()), q.c = detail::operand(dc.batched());
    if (with_argmax) q.argmax = detail::operand(dm.batched());

    const CapturedGraph graph(stream, enqueue);
    EXPECT_FALSE(detail::is_capturing(stream));
    expect_nodes_of(graph, plan_of(q));
    EXPECT_TRUE(all_poison(dc.download())) << "capturing ran the product";
    for (int round = 0; round < 2; ++round) {
        SCOPED_TRACE(round == 0 ? "first replay" : "second replay, on new inputs");
        if (round == 1) {
            a = random_matrix<T>(rng, ring, Values::Typical, s.m, s.k, g.a);
            b = random_matrix<T>(rng, ring, Values::Typical, s.k, s.n, g.b);
            da.upload(a), db.upload(b);
        }
        graph.launch(stream);
        stream.synchronize();
        if (with_argmax) {
            const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c0, m0);
            EXPECT_TRUE(exactly_equal("C", expected_c, dc.download()));
            EXPECT_TRUE(exactly_equal("argmax", expected_argmax, dm.download()));
        } else {
            EXPECT_TRUE(exactly_equal("C", reference_gemm<T>(ring, a, b, c0), dc.download()));
        }
    }
}

// grad_A or grad_B captured, then replayed on the inputs of the capture and on new ones (a gradient
// that the plan zeroes first and the kernel adds into would double without its memset node).
template <class S, class T>
void check_backward(Rng& rng, const Problem& p, bool for_a, int device_hint) {
    SCOPED_TRACE(describe(p) + (for_a ? ", backward A" : ", backward B") + ", device hint " +
                 std::to_string(device_hint));
    constexpr Semiring ring = S::value;
    const Geometries g = geometries_of(p);
    const Shape& s = p.shape;
    auto grad_c = random_gradient<T>(rng, s.m, s.n, g.c);
    auto argmax = random_argmax(rng, s.m, s.n, s.k, g.argmax);
    const auto a = random_matrix<T>(rng, ring, Values::Typical, s.m, s.k, g.a);
    const auto b = random_matrix<T>(rng, ring, Values::Typical, s.k, s.n, g.b);
    const auto grad0 = for_a ? make_matrix<T>(s.m, s.k, g.a) : make_matrix<T>(s.k, s.n, g.b);
    DeviceMatrix<T> dgc(grad_c), da(a), db(b), dgrad(grad0);
    DeviceMatrix<std::int32_t> dm(argmax);

    const OwnedStream stream;
    const GemmOptions options{stream.get(), false, device_hint};
    const auto enqueue = [&] {
        if (p.count == 1 && for_a)
            gemm_backward_a<S>(dgc.view(), dm.view(), da.view(), db.view(), dgrad.view(), options);
        else if (p.count == 1) gemm_backward_b<S>(dgc.view(), dm.view(), da.view(), db.view(), dgrad.view(), options);
        else if (for_a)
            gemm_batched_backward_a<S>(dgc.batched(), dm.batched(), da.batched(), db.batched(), dgrad.batched(),
                                       p.count, options);
        else
            gemm_batched_backward_b<S>(dgc.batched(), dm.batched(), da.batched(), db.batched(), dgrad.batched(),
                                       p.count, options);
    };
    enqueue();  // loads the kernel before the capture
    stream.synchronize();
    dgrad.fill_bytes(grad0.poison);
    auto q = request<T>(for_a ? detail::Operation::BackwardA : detail::Operation::BackwardB, ring, p.count);
    q.c = detail::operand(dgc.batched()), q.argmax = detail::operand(dm.batched());
    q.a = detail::operand(da.batched()), q.b = detail::operand(db.batched()), q.grad = detail::operand(dgrad.batched());

    const CapturedGraph graph(stream, enqueue);
    expect_nodes_of(graph, plan_of(q));
    EXPECT_TRUE(all_poison(dgrad.download())) << "capturing ran the backward pass";
    for (int round = 0; round < 2; ++round) {
        SCOPED_TRACE(round == 0 ? "first replay" : "second replay, on new inputs");
        if (round == 1) {
            grad_c = random_gradient<T>(rng, s.m, s.n, g.c);
            argmax = random_argmax(rng, s.m, s.n, s.k, g.argmax);
            dgc.upload(grad_c), dm.upload(argmax);
        }
        graph.launch(stream);
        stream.synchronize();
        const auto [expected, scale] = reference_backward<T>(ring, for_a, grad_c, argmax, a, b, grad0, false);
        EXPECT_TRUE(close(for_a ? "grad_A" : "grad_B", expected, dgrad.download(), scale, backward_rtol<T>()));
    }
}

template <class C>
class GraphCaptureGpu : public ::testing::Test {};
// One type and semiring per integer and float kind; the semiring does not change what is launched.
using Cases = ::testing::Types<Case<MaxPlus, float>, Case<MinPlus, std::int32_t>, Case<MaxMul, double>>;
TYPED_TEST_SUITE(GraphCaptureGpu, Cases, CaseName);

TYPED_TEST(GraphCaptureGpu, ProductsReplayAsComputed) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    int hint = -1;
    for (const Problem& p : problems())
        for (bool with_argmax : {false, true}) {
            check_product<S, T>(rng, p, with_argmax, hint);
            hint = hint < 0 ? 0 : -1;  // every other call without the driver's queries
        }
}

TYPED_TEST(GraphCaptureGpu, BackwardPassesReplayAsComputed) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    if constexpr (!std::is_floating_point_v<T>) {
        GTEST_SKIP() << "backward is for floating-point types";
    } else {
        TROPICAL_TEST_RNG(rng);
        int hint = 0;
        for (const Problem& p : problems())
            for (bool for_a : {true, false}) {
                check_backward<S, T>(rng, p, for_a, hint);
                hint = hint < 0 ? 0 : -1;
            }
    }
}

// The problems above reach every variant of the plain product on this GPU, so the tests above
// capture each of them (and whichever variants the argmax product has for the same shapes).
TEST(GraphCaptureProblems, TheProblemsReachEveryProductVariant) {
    std::set<KernelVariant> reached, argmax_reached;
    std::string argmax_variants;
    for (const Problem& p : problems()) {
        const Geometries g = geometries_of(p);
        const auto c = make_matrix<float>(p.shape.m, p.shape.n, g.c);
        auto q = request<float>(detail::Operation::Gemm, Semiring::MaxPlus, p.count);
        // Validation reads no memory: placeholder addresses, as far apart as the operands' sizes.
        q.a = {reinterpret_cast<const void*>(std::uintptr_t{1} << 40),
               p.shape.m,
               p.shape.k,
               p.shape.k + g.a.pad,
               Layout::RowMajor,
               0};
        q.b = {reinterpret_cast<const void*>(std::uintptr_t{2} << 40),
               p.shape.k,
               p.shape.n,
               p.shape.n + g.b.pad,
               Layout::RowMajor,
               0};
        q.c = {reinterpret_cast<const void*>(std::uintptr_t{3} << 40), c.rows, c.cols, c.ld, c.layout, c.batch_stride};
        if (p.count > 1) q.a.batch_stride = q.a.rows * q.a.ld, q.b.batch_stride = q.b.rows * q.b.ld;
        reached.insert(plan_of(q).choice.kernel->variant);
        q.operation = detail::Operation::GemmArgmax;
        q.argmax = q.c;
        q.argmax.data = reinterpret_cast<const void*>(std::uintptr_t{4} << 40);
        argmax_reached.insert(plan_of(q).choice.kernel->variant);
        argmax_variants += " " + p.label + ": " + std::string(to_string(plan_of(q).choice.kernel->variant)) + ";";
    }
    for (KernelVariant v : {KernelVariant::Serial, KernelVariant::Vector, KernelVariant::Column, KernelVariant::Dense})
        EXPECT_TRUE(argmax_reached.count(v)) << "no problem reaches the " << to_string(v)
                                             << " argmax kernel: resize problems() to the rules of src/gemm/plan.cpp";
    for (KernelVariant v :
         {KernelVariant::Dense, KernelVariant::Wide, KernelVariant::Vector, KernelVariant::Column, KernelVariant::Tiny,
          KernelVariant::Small, KernelVariant::Batched, KernelVariant::Tiled, KernelVariant::SplitK})
        EXPECT_TRUE(reached.count(v)) << "no problem reaches the " << to_string(v)
                                      << " product: resize problems() to the rules of src/gemm/plan.cpp";
    std::printf("argmax variants captured:%s\n", argmax_variants.c_str());
}

// A kernel's first use in the process may be the call being captured: the library loads it then
// (in relaxed capture mode), and the graph computes the same as a warmed one.
TEST(GraphCaptureFirstUse, AKernelNeverUsedBeforeLoadsDuringTheCapture) {
    TROPICAL_TEST_RNG(rng);
    const Problem p{"small, cold", {40, 36, 20}, 1, 3};
    const KernelInfo* kernel = find_kernel(KernelOperation::Gemm, KernelVariant::Small, DType::F64, Semiring::MinMax);
    ASSERT_NE(kernel, nullptr);
    if (CudaContext::for_device(0).is_loaded(*kernel)) GTEST_SKIP() << kernel->name << " was loaded by an earlier case";
    check_product<MinMax, double>(rng, p, false, -1, /*cold=*/true);
    EXPECT_TRUE(CudaContext::for_device(0).is_loaded(*kernel)) << "the capture did not use " << kernel->name;
}

// The way to keep loading out of a capture altogether: load the kernels first, through the public
// CudaContext::kernel (or one call outside the capture); the capture then only records launches.
TEST(GraphCaptureFirstUse, AKernelLoadedAheadIsCapturedWithoutLoading) {
    TROPICAL_TEST_RNG(rng);
    const Problem p{"small, loaded ahead", {40, 36, 20}, 1, 5};
    const KernelInfo* kernel = find_kernel(KernelOperation::Gemm, KernelVariant::Small, DType::F32, Semiring::MaxMin);
    ASSERT_NE(kernel, nullptr);
    auto& context = CudaContext::for_device(0);
    const std::size_t before = (context.kernel(*kernel), context.loaded_kernel_count());
    check_product<MaxMin, float>(rng, p, false, 0, /*cold=*/true);
    EXPECT_EQ(context.loaded_kernel_count(), before) << "the capture loaded another kernel";
}

// An error during the capture (here a call with mismatched shapes, rejected before any launch) is
// thrown as it is outside a capture, and leaves the stream usable for the next capture.
TEST(GraphCaptureErrors, ARejectedCallLeavesTheStreamUsable) {
    TROPICAL_TEST_RNG(rng);
    const auto a = random_matrix<float>(rng, Semiring::MaxPlus, Values::Typical, 8, 4);
    const DeviceMatrix<float> da(a);
    DeviceMatrix<float> dc(make_matrix<float>(8, 8));
    const OwnedStream stream;
    const GemmOptions options{stream.get(), false, -1};
    EXPECT_THROW(
        { const CapturedGraph graph(stream, [&] { gemm<MaxPlus>(da.view(), da.view(), dc.view(), options); }); },
        InvalidArgument);
    EXPECT_FALSE(detail::is_capturing(stream));
    check_product<MaxPlus, float>(rng, {"after an error", {8, 8, 4}, 1, 0}, true, -1);
}

}  // namespace
