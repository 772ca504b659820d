#include <array>
#include <string>
#include <vector>

#include <tropical/kernels.hpp>

namespace tropical {
namespace {

constexpr std::array kAllTypes = {DType::F32, DType::F64, DType::I32, DType::I64};
constexpr std::array kAllSemirings = {Semiring::MaxPlus, Semiring::MinPlus, Semiring::MaxMul};

struct Registry {
    std::vector<std::string> names;  // owns the strings the KernelInfo views point at
    std::vector<KernelInfo> kernels;

    Registry() {
        names.reserve(64);
        auto add = [&](std::string name, KernelGroup group, DType dtype, std::optional<Semiring> semiring) {
            names.push_back(std::move(name));
            kernels.push_back({kernels.size(), {}, group, dtype, semiring});
        };
        // One kernel per type and semiring, named <prefix><type>_<semiring>.
        auto add_products = [&](const char* prefix, KernelGroup group) {
            for (DType t : kAllTypes)
                for (Semiring s : kAllSemirings)
                    add(std::string(prefix) + std::string(to_string(t)) + "_" + std::string(to_string(s)), group, t, s);
        };
        add_products("tropical_gemm_", KernelGroup::Gemm);
        add_products("tropical_gemm_argmax_", KernelGroup::GemmArgmax);
        add_products("tropical_batched_", KernelGroup::Batched);
        for (auto [group, prefix] : {std::pair{KernelGroup::BackwardA, "tropical_backward_a_"},
                                     std::pair{KernelGroup::BackwardB, "tropical_backward_b_"}})
            for (DType t : {DType::F32, DType::F64}) add(std::string(prefix) + std::string(to_string(t)), group, t, {});
        // Small-tile products (32 x 32 per block) for a few small products, where the batched kernels'
        // 64 x 64 tiles would leave most of the GPU idle. They belong to the batched group but come
        // after it, so that find_kernel(Batched, ...) still names the batched kernels; gemm.cpp
        // chooses them by name.
        add_products("tropical_small_", KernelGroup::Batched);
        // Split-K products (32-bit types): the gemm kernels over a chunk of K each, after the gemm
        // kernels for the same reason; gemm.cpp chooses them by name.
        for (DType t : {DType::F32, DType::I32})
            for (Semiring s : kAllSemirings)
                add("tropical_splitk_" + std::string(to_string(t)) + "_" + std::string(to_string(s)), KernelGroup::Gemm, t, s);
        // Views are taken only now: `names` no longer reallocates.
        for (auto& kernel : kernels) kernel.name = names[kernel.index];
    }
};

const Registry& registry() {
    static const Registry instance;
    return instance;
}

}  // namespace

std::string_view to_string(KernelGroup group) noexcept {
    switch (group) {
    case KernelGroup::Gemm: return "gemm";
    case KernelGroup::GemmArgmax: return "gemm_argmax";
    case KernelGroup::Batched: return "batched";
    case KernelGroup::BackwardA: return "backward_a";
    case KernelGroup::BackwardB: return "backward_b";
    }
    return "?";
}

std::span<const KernelInfo> kernel_registry() noexcept { return registry().kernels; }

const KernelInfo* find_kernel(std::string_view name) noexcept {
    for (const auto& kernel : registry().kernels)
        if (kernel.name == name) return &kernel;
    return nullptr;
}

const KernelInfo* find_kernel(KernelGroup group, DType dtype, Semiring semiring) noexcept {
    const bool backward = group == KernelGroup::BackwardA || group == KernelGroup::BackwardB;
    for (const auto& kernel : registry().kernels)
        if (kernel.group == group && kernel.dtype == dtype && (backward || kernel.semiring == semiring))
            return &kernel;
    return nullptr;
}

}  // namespace tropical
