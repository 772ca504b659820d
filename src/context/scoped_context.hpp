#pragma once
// Makes a context current for a scope and restores the caller's afterwards, so that the library
// never leaves a thread in another context than it found it. Free when it is already current.
#include <cuda.h>

#include "driver/cuda_driver.hpp"
#include "driver/dropped_result.hpp"

namespace tropical::detail {

class ScopedContext {
public:
    explicit ScopedContext(CUcontext context) {
        CUcontext current = nullptr;
        TROPICAL_CU(cuCtxGetCurrent(&current));
        if (current != context) {
            TROPICAL_CU(cuCtxPushCurrent(context));
            pushed_ = true;
        }
    }
    ~ScopedContext() {
        if (pushed_) {
            CUcontext popped = nullptr;
            TROPICAL_CU_DROPPED(cuCtxPopCurrent(&popped));
        }
    }
    ScopedContext(const ScopedContext&) = delete;
    ScopedContext& operator=(const ScopedContext&) = delete;

private:
    bool pushed_ = false;
};

}  // namespace tropical::detail
