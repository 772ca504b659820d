// Loading one cache entry with the driver, to prove that a device accepts it (load_cache_entry of
// tropical/cache.hpp, what tropical-gemm-warmup --verify does on a GPU). The entry is read through
// the cache store, with the trust rules the library loads with. It sits with the context, which
// loads every other module (CudaContext::kernel), so that the loader below never needs a context.
#include <fmt/format.h>

#include <tropical/cache.hpp>
#include <tropical/context.hpp>
#include <tropical/error.hpp>
#include "cache/cache_layout.hpp"
#include "cache/cache_store.hpp"
#include "context/scoped_context.hpp"
#include "driver/cuda_driver.hpp"
#include "driver/dropped_result.hpp"

namespace tropical {

bool load_cache_entry(const CacheEntry& entry, int device_ordinal) {
    // The store opens <root>/v1/sm_XY itself, folder by folder, with no link followed.
    const auto where = detail::locate_entry(entry.path);
    if (!where)
        throw InvalidArgument(fmt::format("{} is not a cache entry: entries are <cache>/{}/sm_XY/<kernel>-<key>.<kind>",
                                          entry.path.string(), detail::format_folder_name()));
    detail::CacheStore store(where->root, detail::CacheStore::Access::Administer);
    const detail::EntryState state = store.inspect_entry(where->arch, where->file);
    if (!state.present) return false;  // removed since it was listed (a clear or a trim in another process)
    if (!state.trusted)
        throw InvalidArgument(fmt::format("{} is not safe to load: {}", entry.path.string(), state.problem));
    if (!state.valid)
        throw InvalidArgument(fmt::format("{} is not a valid cache entry: {}", entry.path.string(), state.problem));
    std::vector<std::byte> image = state.payload;
    if (entry.kind != CacheEntryKind::Cubin) image.push_back(std::byte{0});  // PTX is read as a C string

    CudaContext& context = CudaContext::for_device(device_ordinal);
    detail::ScopedContext current(context.primary_context());
    CUmodule module = nullptr;
    TROPICAL_CU(cuModuleLoadData(&module, image.data()));
    CUfunction function = nullptr;
    const CUresult found = detail::driver().cuModuleGetFunction(&function, module, entry.kernel.c_str());
    TROPICAL_CU_DROPPED(cuModuleUnload(module));  // the entry was proven loadable; the unload is no news
    if (found != CUDA_SUCCESS) detail::throw_cuda_error(found, "cuModuleGetFunction", __FILE__, __LINE__);
    return true;
}

}  // namespace tropical
