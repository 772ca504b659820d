// Faults on a real GPU: asking for more memory than is free, a device whose memory is full when a
// kernel must be loaded, a launch on a destroyed stream, and a device busy with another process.
// Each gives a clear error (or, for the busy device, correct results), and the process stays usable.
//
// It fills the device's memory, so CTest runs it alone (RUN_SERIAL).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#include <tropical/context.hpp>
#include <tropical/device_buffer.hpp>
#include <tropical/error.hpp>
#include <tropical/gemm.hpp>
#include "context/scoped_context.hpp"
#include "driver/cuda_driver.hpp"
#include "support/checked_calls.hpp"
#include "support/gemm_test_util.hpp"
#include "support/gpu.hpp"
#include "support/processes.hpp"
#include "support/temp_dir.hpp"

using namespace tropical;
using namespace tropical::testing;
using ::testing::HasSubstr;
using tropical::detail::ScopedContext;

namespace {

CUcontext primary() { return CudaContext::for_device(0).primary_context(); }

std::size_t free_device_memory() {
    ScopedContext current(primary());
    std::size_t free = 0, total = 0;
    TROPICAL_CU(cuMemGetInfo(&free, &total));
    return free;
}

// A few products of several types, checked against the reference: the library still works.
void expect_products_work(Rng& rng, CUstream stream = nullptr) {
    for (const Shape& s : {Shape{33, 65, 17}, Shape{129, 127, 131}, Shape{7, 5, 3}}) {
        check_gemm<MaxPlus, float>(rng, s, {});
        check_gemm<MinPlus, std::int32_t>(rng, s, {});
        check_gemm_argmax<MaxMul, double>(rng, s, {});
    }
    if (stream) {
        // The same on a caller's stream: inputs uploaded synchronously, launch on `stream`.
        const auto a = random_matrix<float>(rng, Semiring::MaxPlus, Values::Typical, 40, 30);
        const auto b = random_matrix<float>(rng, Semiring::MaxPlus, Values::Typical, 30, 20);
        auto c = make_matrix<float>(40, 20);
        DeviceMatrix<float> da(a), db(b), dc(c);
        gemm<MaxPlus>(da.view(), db.view(), dc.view(), {stream});
        ScopedContext current(primary());
        TROPICAL_CU(cuStreamSynchronize(stream));
        EXPECT_TRUE(exactly_equal("C", reference_gemm<float>(Semiring::MaxPlus, a, b, c), dc.download()));
    }
}

TEST(GpuFaults, AllocationBeyondFreeMemoryIsAClearError) {
    TROPICAL_REQUIRE_GPU();
    TROPICAL_TEST_RNG(rng);
    const std::size_t too_much = free_device_memory() + (std::size_t{4} << 30);
    try {
        DeviceBuffer<std::byte> buffer(too_much);
        FAIL() << "allocating " << too_much << " bytes succeeded";
    } catch (const OutOfMemory& e) {
        EXPECT_THAT(std::string(e.what()), HasSubstr("cannot allocate " + std::to_string(too_much) + " bytes"));
        EXPECT_THAT(std::string(e.what()), HasSubstr("bytes are free"));
        EXPECT_EQ(e.status(), Status::OutOfMemory);
    }
    expect_products_work(rng);
}

// Takes nearly all free device memory, in chunks from 1 GiB down to 1 MiB, until the driver says no.
class DeviceMemoryHog {
public:
    DeviceMemoryHog() {
        ScopedContext current(primary());
        for (std::size_t chunk = std::size_t{1} << 30; chunk >= (std::size_t{1} << 20); chunk /= 4) {
            for (;;) {
                CUdeviceptr p = 0;
                if (tropical::detail::driver().cuMemAlloc(&p, chunk) != CUDA_SUCCESS) break;
                held_.push_back(p);
                bytes_ += chunk;
            }
        }
    }
    ~DeviceMemoryHog() { release(); }
    void release() {
        ScopedContext current(primary());
        for (CUdeviceptr p : held_) tropical::detail::driver().cuMemFree(p);
        held_.clear();
    }
    std::size_t bytes() const { return bytes_; }

private:
    std::vector<CUdeviceptr> held_;
    std::size_t bytes_ = 0;
};

TEST(GpuFaults, FullDeviceMemory) {
    TROPICAL_REQUIRE_GPU();
    TROPICAL_TEST_RNG(rng);
    // Inputs and outputs first: a full device must not stop products whose memory exists.
    const Shape s{70, 90, 50};
    const auto a = random_matrix<float>(rng, Semiring::MaxPlus, Values::Typical, s.m, s.k);
    const auto b = random_matrix<float>(rng, Semiring::MaxPlus, Values::Typical, s.k, s.n);
    const auto ai = random_matrix<std::int64_t>(rng, Semiring::MaxMul, Values::Typical, s.m, s.k);
    const auto bi = random_matrix<std::int64_t>(rng, Semiring::MaxMul, Values::Typical, s.k, s.n);
    auto c = make_matrix<float>(s.m, s.n);
    auto ci = make_matrix<std::int64_t>(s.m, s.n);
    DeviceMatrix<float> da(a), db(b), dc(c);
    DeviceMatrix<std::int64_t> dai(ai), dbi(bi), dci(ci);
    gemm<MaxPlus>(da.view(), db.view(), dc.view());  // loads the f32 kernel while memory is free

    DeviceMemoryHog hog;
    std::printf("holding %zu bytes of device memory; %zu bytes left free\n", hog.bytes(), free_device_memory());
    ASSERT_LT(free_device_memory(), std::size_t{64} << 20);

    // A kernel that is loaded needs no memory: the call allocates nothing.
    dc.fill_bytes(kPoison);
    gemm<MaxPlus>(da.view(), db.view(), dc.view());
    EXPECT_TRUE(exactly_equal("C (device memory full, kernel loaded)",
                              reference_gemm<float>(Semiring::MaxPlus, a, b, c), dc.download()));

    // A kernel that must be loaded now may find no memory for its module: then a clear error, and
    // the load is retried on the next call rather than remembered as failed.
    dci.fill_bytes(kPoison);
    bool loaded_while_full = true;
    try {
        gemm<MaxMul>(dai.view(), dbi.view(), dci.view());
    } catch (const Error& e) {
        loaded_while_full = false;
        std::printf("loading a kernel with the device full: %s\n", e.what());
        EXPECT_TRUE(e.status() == Status::OutOfMemory || e.status() == Status::CudaError) << e.what();
        EXPECT_THAT(std::string(e.what()), HasSubstr("memory")) << "the message should say that memory ran out";
    }
    RecordProperty("kernel_loaded_with_device_full", loaded_while_full ? "yes" : "no (clear error)");
    hog.release();
    if (!loaded_while_full) {
        dci.fill_bytes(kPoison);
        gemm<MaxMul>(dai.view(), dbi.view(), dci.view());
    }
    EXPECT_TRUE(
        exactly_equal("C (i64 MaxMul)", reference_gemm<std::int64_t>(Semiring::MaxMul, ai, bi, ci), dci.download()));
    expect_products_work(rng);
}

// Destroying a stream while a product is queued on it is allowed (the driver finishes the work).
// A stream handle used after its destruction cannot be detected by anyone: it is a dangling pointer,
// and on driver 580 every stream call on it (cuStreamGetCtx, cuStreamQuery, cuLaunchKernel, ...)
// crashes inside the driver, while a stream created after it often gets the same address.
TEST(GpuFaults, StreamDestroyedWhileItsProductIsQueued) {
    TROPICAL_REQUIRE_GPU();
    TROPICAL_TEST_RNG(rng);
    const Shape s{700, 600, 500};
    const auto a = random_matrix<float>(rng, Semiring::MinPlus, Values::Typical, s.m, s.k);
    const auto b = random_matrix<float>(rng, Semiring::MinPlus, Values::Typical, s.k, s.n);
    auto c = make_matrix<float>(s.m, s.n);
    DeviceMatrix<float> da(a), db(b), dc(c);
    dc.fill_bytes(kPoison);
    {
        ScopedContext current(primary());
        CUstream stream = nullptr;
        TROPICAL_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
        for (int i = 0; i < 4; ++i) gemm<MinPlus>(da.view(), db.view(), dc.view(), {stream});
        TROPICAL_CU(cuStreamDestroy(stream));
        TROPICAL_CU(cuCtxSynchronize());
    }
    EXPECT_TRUE(exactly_equal("C", reference_gemm<float>(Semiring::MinPlus, a, b, c), dc.download()));
    expect_products_work(rng);
}

// A stream of another context (not the device's primary one, where tropical-gemm runs) would fail
// at launch with a bare CUDA error; it is named before anything is queued.
TEST(GpuFaults, StreamOfAnotherContextIsAClearError) {
    TROPICAL_REQUIRE_GPU();
    TROPICAL_TEST_RNG(rng);
    const auto a = random_matrix<float>(rng, Semiring::MaxPlus, Values::Typical, 16, 8);
    const auto b = random_matrix<float>(rng, Semiring::MaxPlus, Values::Typical, 8, 12);
    auto c = make_matrix<float>(16, 12);
    DeviceMatrix<float> da(a), db(b), dc(c);
    dc.fill_bytes(kPoison);

    CUcontext other = nullptr;
    CUstream foreign = nullptr;
    {
        ScopedContext current(primary());
        CUdevice device = 0;
        TROPICAL_CU(cuCtxGetDevice(&device));
        TROPICAL_CU(cuCtxCreate(&other, nullptr, 0, 0, device));  // the CUDA 11.4 form: no affinity
        CUcontext pushed = nullptr;  // cuCtxCreate made it current: back to the primary context
        TROPICAL_CU(cuCtxPopCurrent(&pushed));
    }
    {
        ScopedContext current(other);
        TROPICAL_CU(cuStreamCreate(&foreign, CU_STREAM_NON_BLOCKING));
    }
    try {
        gemm<MaxPlus>(da.view(), db.view(), dc.view(), {foreign});
        ADD_FAILURE() << "a stream of another context was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_THAT(std::string(e.what()), HasSubstr("options.stream"));
        EXPECT_THAT(std::string(e.what()), HasSubstr("another CUDA context"));
    }
    EXPECT_TRUE(exactly_equal("C (untouched)", c, dc.download()));
    {
        ScopedContext current(other);
        TROPICAL_CU(cuStreamDestroy(foreign));
    }
    TROPICAL_CU(cuCtxDestroy(other));
    expect_products_work(rng);
}

// The other process of BusyDevice: runs 4096^3 products back to back for TROPICAL_BUSY_SECONDS,
// after creating TROPICAL_BUSY_STARTED. Skipped unless those are set.
TEST(GpuFaults, BusyDeviceChild) {
    const char* seconds = std::getenv("TROPICAL_BUSY_SECONDS");
    const char* started = std::getenv("TROPICAL_BUSY_STARTED");
    if (!seconds || !started) GTEST_SKIP() << "the busy process of GpuFaults.BusyDevice, started by it";
    constexpr std::int64_t n = 4096;
    DeviceBuffer<float> a(n * n), b(n * n), c(n * n);
    a.fill_bytes(0);
    b.fill_bytes(0);
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::atof(seconds));
    bool announced = false;
    int products = 0;
    while (std::chrono::steady_clock::now() < until) {
        for (int i = 0; i < 8; ++i) gemm<MaxPlus>(a.row_major(n, n), b.row_major(n, n), c.row_major(n, n));
        ScopedContext current(primary());
        TROPICAL_CU(cuCtxSynchronize());
        products += 8;
        if (!announced) {
            std::ofstream(started) << "busy\n";
            announced = true;
        }
    }
    std::printf("busy child: %d products of 4096^3\n", products);
}

int compute_mode() {
    ScopedContext current(primary());
    CUdevice device = 0;
    int mode = 0;
    TROPICAL_CU(cuCtxGetDevice(&device));
    TROPICAL_CU(cuDeviceGetAttribute(&mode, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, device));
    return mode;
}

TEST(GpuFaults, BusyDevice) {
    TROPICAL_REQUIRE_GPU();
    TROPICAL_TEST_RNG(rng);
    TempDir dir;
    const auto started = dir.path() / "started";
    const auto output = dir.path() / "child.log";
    ASSERT_TRUE(set_env("TROPICAL_BUSY_SECONDS", "6"));
    ASSERT_TRUE(set_env("TROPICAL_BUSY_STARTED", started.c_str()));
    const pid_t child = spawn(
        {std::filesystem::read_symlink("/proc/self/exe").string(), "--gtest_filter=GpuFaults.BusyDeviceChild"}, output);
    EXPECT_TRUE(unset_env("TROPICAL_BUSY_SECONDS"));
    EXPECT_TRUE(unset_env("TROPICAL_BUSY_STARTED"));
    ASSERT_GT(child, 0);

    if (compute_mode() != CU_COMPUTEMODE_DEFAULT) {
        // Exclusive-process (or prohibited): this process holds the device, so the child cannot
        // have it, and must say why.
        EXPECT_NE(wait_for(child), 0);
        EXPECT_THAT(read_text(output), HasSubstr("busy or unavailable")) << read_text(output);
        expect_products_work(rng);
        return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!std::filesystem::exists(started) && std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (::waitpid(child, &status, WNOHANG) == child)
            FAIL() << "the busy process ended early:\n" << read_text(output);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(std::filesystem::exists(started)) << "the busy process never started:\n" << read_text(output);

    // Products while the other process keeps the GPU busy: slower, never wrong.
    int rounds = 0;
    for (; rounds < 5; ++rounds) expect_products_work(rng);
    int status = 0;
    const pid_t reaped = ::waitpid(child, &status, WNOHANG);
    const bool still_busy = reaped == 0;
    RecordProperty("other_process_still_running_after_checks", still_busy ? "yes" : "no");
    const int code = still_busy ? wait_for(child) : (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    EXPECT_EQ(code, 0) << read_text(output);
    std::printf("%d rounds of checked products while another process kept the GPU busy (%s)\n", rounds,
                still_busy ? "it was still running at the end" : "it finished before the checks did");
}

}  // namespace
