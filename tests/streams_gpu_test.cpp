// Concurrency and error recovery on a real GPU: the same products from 8 threads on 8 non-blocking
// streams at once give 8 correct results, and a call that is rejected launches nothing and leaves
// the library working for the next call.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include <cuda.h>

#include <tropical/context.hpp>
#include <tropical/error.hpp>
#include <tropical/gemm.hpp>
#include "context/scoped_context.hpp"
#include "driver/cuda_driver.hpp"
#include "support/gemm_test_util.hpp"
#include "support/gpu.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

// Non-blocking streams on device 0's primary context, destroyed with the object.
class Streams {
public:
    explicit Streams(int count) {
        tropical::detail::ScopedContext current(context());
        streams_.resize(static_cast<std::size_t>(count), nullptr);
        for (auto& s : streams_) TROPICAL_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    }
    ~Streams() {
        try {
            tropical::detail::ScopedContext current(context());
            for (CUstream s : streams_)
                if (s) tropical::detail::driver().cuStreamDestroy(s);
        } catch (...) {
        }
    }
    Streams(const Streams&) = delete;
    Streams& operator=(const Streams&) = delete;
    CUstream operator[](std::size_t i) const { return streams_[i]; }
    static CUcontext context() { return CudaContext::for_device(0).primary_context(); }

private:
    std::vector<CUstream> streams_;
};

// Waits for everything on the device, e.g. for uploads made on the legacy stream, which non-blocking
// streams do not wait for.
void synchronize_device() {
    tropical::detail::ScopedContext current(Streams::context());
    TROPICAL_CU(cuCtxSynchronize());
}

bool all_poison(const std::vector<unsigned char>& bytes, unsigned char poison) {
    return std::all_of(bytes.begin(), bytes.end(), [&](unsigned char x) { return x == poison; });
}

template <class T>
std::vector<unsigned char> bytes_of(const HostMatrix<T>& m) {
    const auto* p = reinterpret_cast<const unsigned char*>(m.storage.data());
    return {p, p + m.storage.size() * sizeof(T)};
}

TEST(StreamsGpu, EightThreadsOnEightStreams) {
    TROPICAL_REQUIRE_GPU();
    TROPICAL_TEST_RNG(rng);
    using T = float;
    using S = MaxPlus;
    constexpr Semiring ring = S::value;
    constexpr int kThreads = 8;
    constexpr int kRepeats = 4;

    // Shared inputs: one big-tile product (gemm and gemm with argmax) and one batch of small ones.
    const Shape big{520, 390, 200};
    const Geometries gb = layout_combination(5, 1);
    const auto a = random_matrix<T>(rng, ring, Values::Typical, big.m, big.k, gb.a);
    const auto b = random_matrix<T>(rng, ring, Values::Typical, big.k, big.n, gb.b);
    const auto c0 = make_matrix<T>(big.m, big.n, gb.c);
    const auto m0 = make_matrix<std::int32_t>(big.m, big.n, gb.argmax);
    const Shape small{48, 40, 24};
    Geometries gs = with_count(layout_combination(2, 0), 16);
    gs.c.gap = 3;
    const auto sa = random_matrix<T>(rng, ring, Values::Typical, small.m, small.k, gs.a);
    const auto sb = random_matrix<T>(rng, ring, Values::Typical, small.k, small.n, gs.b);
    const auto sc0 = make_matrix<T>(small.m, small.n, gs.c);

    const auto expected_c = reference_gemm<T>(ring, a, b, c0);
    const auto [expected_c2, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c0, m0);
    const auto expected_small = reference_gemm<T>(ring, sa, sb, sc0);

    const DeviceMatrix<T> da(a), db(b), dsa(sa), dsb(sb);
    std::vector<DeviceMatrix<T>> c, c2, sc;
    std::vector<DeviceMatrix<std::int32_t>> m;
    for (int t = 0; t < kThreads; ++t) {
        c.emplace_back(c0);
        c2.emplace_back(c0);
        m.emplace_back(m0);
        sc.emplace_back(sc0);
    }
    const Streams streams(kThreads);
    synchronize_device();

    std::latch start(kThreads);
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            const auto i = static_cast<std::size_t>(t);
            try {
                const GemmOptions options{streams[i], false};
                start.arrive_and_wait();
                for (int r = 0; r < kRepeats; ++r) {
                    // A rejected call in between changes nothing for this thread or the others.
                    try {
                        gemm<S>(da.view(), dsb.view(), c[i].view(), options);
                        errors[i] = "a product with mismatched shapes was accepted";
                        return;
                    } catch (const InvalidArgument&) {
                    }
                    gemm<S>(da.view(), db.view(), c[i].view(), options);
                    gemm_with_argmax<S>(da.view(), db.view(), c2[i].view(), m[i].view(), options);
                    gemm_batched<S>(dsa.batched(), dsb.batched(), sc[i].batched(), sc0.count, options);
                }
                tropical::detail::ScopedContext current(Streams::context());
                TROPICAL_CU(cuStreamSynchronize(streams[i]));
            } catch (const std::exception& e) {
                errors[i] = e.what();
            }
        });
    for (auto& thread : threads) thread.join();

    for (int t = 0; t < kThreads; ++t) {
        const auto i = static_cast<std::size_t>(t);
        SCOPED_TRACE("thread " + std::to_string(t));
        EXPECT_EQ(errors[i], "");
        EXPECT_TRUE(exactly_equal("C", expected_c, c[i].download()));
        EXPECT_TRUE(exactly_equal("C (with argmax)", expected_c2, c2[i].download()));
        EXPECT_TRUE(exactly_equal("argmax", expected_argmax, m[i].download()));
        EXPECT_TRUE(exactly_equal("batched C", expected_small, sc[i].download()));
    }
}

// Calls that are rejected before launch: they throw the documented error, write nothing, and the
// next valid call (on the default stream and on a created one) is correct.
TEST(ErrorsGpu, ARejectedCallDoesNotPoisonLaterCalls) {
    TROPICAL_REQUIRE_GPU();
    TROPICAL_TEST_RNG(rng);
    using T = float;
    using S = MinPlus;
    constexpr Semiring ring = S::value;
    const Shape s{70, 300, 33};
    const Geometries g = layout_combination(3, 0);
    const auto a = random_matrix<T>(rng, ring, Values::Typical, s.m, s.k, g.a);
    const auto b = random_matrix<T>(rng, ring, Values::Typical, s.k, s.n, g.b);
    const auto c0 = make_matrix<T>(s.m, s.n, g.c);
    const auto m0 = make_matrix<std::int32_t>(s.m, s.n, g.argmax);
    const auto expected = reference_gemm<T>(ring, a, b, c0);

    const DeviceMatrix<T> da(a), db(b);
    DeviceMatrix<T> dc(c0);
    DeviceMatrix<std::int32_t> dm(m0);
    gemm<S>(da.view(), db.view(), dc.view());
    EXPECT_TRUE(exactly_equal("C before the errors", expected, dc.download()));

    dc.fill_bytes(kPoison);
    dm.fill_bytes(kPoison);
    const MatrixView<T> c = dc.view();
    const MatrixView<const T> av = da.view(), bv = db.view();
    // Shapes that do not chain.
    EXPECT_THROW(gemm<S>(bv, bv, c), InvalidArgument);
    // A leading dimension too small for the layout.
    {
        MatrixView<T> bad = c;
        bad.ld = (bad.layout == Layout::RowMajor ? bad.cols : bad.rows) - 1;
        EXPECT_THROW(gemm<S>(av, bv, bad), InvalidArgument);
    }
    // An unknown layout.
    {
        MatrixView<T> bad = c;
        bad.layout = static_cast<Layout>(7);
        EXPECT_THROW(gemm<S>(av, bv, bad), InvalidArgument);
    }
    // Host memory as the output.
    {
        std::vector<T> host(static_cast<std::size_t>(s.m * s.n));
        EXPECT_THROW(gemm<S>(av, bv, row_major(host.data(), s.m, s.n)), InvalidArgument);
    }
    // The output overlapping an input.
    {
        const MatrixView<T> on_a = {const_cast<T*>(av.data), s.m, s.n, s.n, Layout::RowMajor};
        EXPECT_THROW(gemm<S>(av, bv, on_a), InvalidArgument);
    }
    // Argmax cannot accumulate.
    EXPECT_THROW(gemm_with_argmax<S>(av, bv, c, dm.view(), {nullptr, true}), Unsupported);
    // Negative batch counts, and outputs of a batch that would overwrite each other.
    EXPECT_THROW(gemm_batched<S>(batched(av, 0), batched(bv, 0), batched(c, 0), -1), InvalidArgument);
    EXPECT_THROW(gemm_batched<S>(batched(av, 0), batched(bv, 0), batched(c, 1), 2), InvalidArgument);
    // Backward of integer products.
    {
        DeviceBuffer<std::int32_t> ints(static_cast<std::size_t>(s.m * s.n + s.m * s.k + s.k * s.n));
        const auto grad_c = ints.row_major(s.m, s.n);
        const MatrixView<std::int32_t> grad_a = {ints.data() + s.m * s.n, s.m, s.k, s.k, Layout::RowMajor};
        const MatrixView<std::int32_t> other = {ints.data() + s.m * s.n + s.m * s.k, s.k, s.n, s.n, Layout::RowMajor};
        EXPECT_THROW(gemm_backward_a<S>(grad_c, dm.view(), other, grad_a), Unsupported);
    }
    EXPECT_TRUE(all_poison(bytes_of(dc.download()), kPoison)) << "a rejected call wrote to C";
    EXPECT_TRUE(all_poison(bytes_of(dm.download()), kPoison)) << "a rejected call wrote to argmax";

    // The next valid calls work, on the default stream and on a created one.
    gemm<S>(av, bv, c);
    EXPECT_TRUE(exactly_equal("C after the errors", expected, dc.download()));
    dc.fill_bytes(kPoisonFF);
    const Streams streams(1);
    gemm<S>(av, bv, c, {streams[0], false});
    {
        tropical::detail::ScopedContext current(Streams::context());
        TROPICAL_CU(cuStreamSynchronize(streams[0]));
    }
    EXPECT_TRUE(exactly_equal("C after the errors, on a stream", with_poison(expected, kPoisonFF), dc.download()));
    const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c0, m0);
    const auto [c2, argmax] = gpu_gemm_argmax<S>(a, b, c0, m0);
    EXPECT_TRUE(exactly_equal("C with argmax after the errors", expected_c, c2));
    EXPECT_TRUE(exactly_equal("argmax after the errors", expected_argmax, argmax));
}

}  // namespace
