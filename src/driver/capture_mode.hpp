#pragma once
// Stream capture (CUDA graphs) forbids, by default, calls it cannot record and that might disturb
// the capture: loading a module is one. The library makes such calls only once per kernel (its
// first use in a process) and once per device (creating its context), so that a user who captures
// a first call into a graph would otherwise get CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and a capture
// invalidated for a reason that is none of theirs. Around those calls the library takes this guard:
// the calling thread's capture mode is relaxed for the scope and restored afterwards, which is
// what cuThreadExchangeStreamCaptureMode is for. Nothing of the load is enqueued on a stream, so
// nothing of it belongs in the graph.
#include <cuda.h>

#include "driver/cuda_driver.hpp"
#include "driver/dropped_result.hpp"

namespace tropical::detail {

class RelaxedCaptureMode {
public:
    RelaxedCaptureMode() { TROPICAL_CU(cuThreadExchangeStreamCaptureMode(&previous_)); }
    ~RelaxedCaptureMode() { TROPICAL_CU_DROPPED(cuThreadExchangeStreamCaptureMode(&previous_)); }
    RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
    RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

private:
    CUstreamCaptureMode previous_ = CU_STREAM_CAPTURE_MODE_RELAXED;  // swapped in; the old mode comes back
};

}  // namespace tropical::detail
