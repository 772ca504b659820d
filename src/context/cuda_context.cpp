#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include <tropical/context.hpp>
#include <tropical/error.hpp>
#include "catalogue/catalogue.hpp"
#include "context/scoped_context.hpp"
#include "driver/capture_mode.hpp"
#include "driver/cuda_driver.hpp"
#include "driver/dropped_result.hpp"
#include "loader/kernel_binaries.hpp"

namespace tropical {
namespace {

constexpr int kMaxDevices = 64;

struct ModuleUnloader {
    void operator()(CUmod_st* module) const noexcept {
        // At process exit the driver may already be gone: no error (detail::report_dropped).
        TROPICAL_CU_DROPPED(cuModuleUnload(module));
    }
};
using ModuleHandle = std::unique_ptr<CUmod_st, ModuleUnloader>;

int attribute(CUdevice device, CUdevice_attribute which) {
    int value = 0;
    TROPICAL_CU(cuDeviceGetAttribute(&value, which, device));
    return value;
}

}  // namespace

struct CudaContext::Impl {
    int ordinal = 0;
    CUdevice device = 0;
    CUcontext primary = nullptr;
    int arch = 0;
    int multiprocessors = 0;
    std::size_t shared_optin = 0;
    std::string name;

    // One slot per registry kernel: read without a lock once set.
    std::vector<std::atomic<CUfunction>> functions;
    std::vector<std::mutex> load_mutexes;
    std::mutex modules_mutex;
    std::vector<ModuleHandle> modules;
    std::atomic<std::size_t> loaded{0};

    explicit Impl(std::size_t kernel_count) : functions(kernel_count), load_mutexes(kernel_count) {}
};

int CudaContext::device_count() {
    int count = 0;
    TROPICAL_CU(cuDeviceGetCount(&count));
    return count;
}

CudaContext& CudaContext::for_device(int ordinal) {
    static std::array<std::atomic<CudaContext*>, kMaxDevices> contexts{};
    static std::mutex creation;
    if (ordinal >= 0 && ordinal < kMaxDevices)
        if (CudaContext* existing = contexts[static_cast<std::size_t>(ordinal)].load(std::memory_order_acquire))
            return *existing;

    const int count = device_count();
    if (ordinal < 0 || ordinal >= count || ordinal >= kMaxDevices)
        throw NoDevice(count == 0
                           ? fmt::format("CUDA device {} was asked for, but this machine has no CUDA device", ordinal)
                           : fmt::format("CUDA device {} does not exist: this machine has {} (ordinals 0 to {})",
                                         ordinal, count, count - 1));
    std::lock_guard lock(creation);
    auto& slot = contexts[static_cast<std::size_t>(ordinal)];
    if (CudaContext* existing = slot.load(std::memory_order_acquire)) return *existing;
    // Never destroyed: kernels may be launched from other static destructors at exit, and the driver
    // releases the primary context itself when the process ends. Created in relaxed capture mode:
    // a process's first call may be made while its stream captures a graph.
    const detail::RelaxedCaptureMode relaxed;
    auto* created = new CudaContext(ordinal);
    slot.store(created, std::memory_order_release);
    return *created;
}

CudaContext::CudaContext(int ordinal) : impl_(std::make_unique<Impl>(kernel_registry().size())) {
    auto& s = *impl_;
    s.ordinal = ordinal;
    TROPICAL_CU(cuDeviceGet(&s.device, ordinal));
    TROPICAL_CU(cuDevicePrimaryCtxRetain(&s.primary, s.device));
    s.arch = attribute(s.device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
             attribute(s.device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    s.multiprocessors = attribute(s.device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    s.shared_optin =
        static_cast<std::size_t>(attribute(s.device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
    char name[256] = {};
    TROPICAL_CU(cuDeviceGetName(name, sizeof name, s.device));
    s.name = name;
}

CudaContext::~CudaContext() {
    if (!impl_) return;
    impl_->modules.clear();
    TROPICAL_CU_DROPPED(cuDevicePrimaryCtxRelease(impl_->device));
}

int CudaContext::ordinal() const { return impl_->ordinal; }
int CudaContext::arch() const { return impl_->arch; }
int CudaContext::multiprocessor_count() const { return impl_->multiprocessors; }
std::size_t CudaContext::shared_memory_per_block_optin() const { return impl_->shared_optin; }
const std::string& CudaContext::name() const { return impl_->name; }
CUctx_st* CudaContext::primary_context() const { return impl_->primary; }
std::size_t CudaContext::loaded_kernel_count() const { return impl_->loaded.load(); }
bool CudaContext::is_loaded(const KernelInfo& kernel) const {
    return kernel.index < impl_->functions.size() && impl_->functions[kernel.index].load(std::memory_order_acquire);
}

CUfunc_st* CudaContext::kernel(const KernelInfo& kernel) {
    auto& s = *impl_;
    auto& slot = s.functions.at(kernel.index);
    if (CUfunction f = slot.load(std::memory_order_acquire)) return f;

    std::lock_guard lock(s.load_mutexes[kernel.index]);
    if (CUfunction f = slot.load(std::memory_order_acquire)) return f;
    const auto binary = detail::KernelBinaries::process_default().get(kernel, s.arch);
    // A kernel's first use may come while the caller's stream captures a graph: loading a module is
    // no stream work, and the capture may not forbid it (driver/capture_mode.hpp).
    const detail::RelaxedCaptureMode relaxed;
    detail::ScopedContext current(s.primary);
    CUmodule raw = nullptr;
    TROPICAL_CU(cuModuleLoadData(&raw, binary->image.data()));
    ModuleHandle module(raw);
    CUfunction function = nullptr;
    const std::string entry(kernel.name);
    TROPICAL_CU(cuModuleGetFunction(&function, raw, entry.c_str()));
    // The Scatter kernels keep a row (or slab) of the gradient in dynamic shared memory; opting in
    // once here lets every launch use up to the device's limit without a per-launch driver call.
    if (detail::takes_dynamic_shared_memory(kernel)) {
        int static_bytes = 0;
        TROPICAL_CU(cuFuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function));
        TROPICAL_CU(cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       static_cast<int>(s.shared_optin) - static_bytes));
    }
    {
        std::lock_guard modules_lock(s.modules_mutex);
        s.modules.push_back(std::move(module));
    }
    slot.store(function, std::memory_order_release);
    ++s.loaded;
    return function;
}

}  // namespace tropical
