#pragma once
// Streams and CUDA graphs for the programs that capture the library's calls: the graph-capture test
// and the workloads benchmark. The library itself never captures; it launches on its caller's
// stream, which may be capturing (driver/capture_mode.hpp says what it does then).
#include <cuda.h>

#include <cstddef>
#include <utility>
#include <vector>

#include <tropical/context.hpp>
#include "context/scoped_context.hpp"
#include "driver/cuda_driver.hpp"
#include "driver/dropped_result.hpp"

namespace tropical::detail {

// A non-blocking stream on a device's primary context, destroyed with the object. Non-blocking:
// the legacy default stream cannot be captured, and must not serialise with it.
class OwnedStream {
public:
    explicit OwnedStream(int device = 0) : context_(CudaContext::for_device(device).primary_context()) {
        const ScopedContext current(context_);
        TROPICAL_CU(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
    }
    ~OwnedStream() {
        if (!stream_) return;
        try {
            const ScopedContext current(context_);
            TROPICAL_CU_DROPPED(cuStreamDestroy(stream_));
        } catch (const std::exception& e) {  // the driver is gone at exit: nothing left to free
            report_dropped(e, __FILE__, __LINE__);
        }
    }
    OwnedStream(const OwnedStream&) = delete;
    OwnedStream& operator=(const OwnedStream&) = delete;

    CUstream get() const { return stream_; }
    CUcontext context() const { return context_; }
    void synchronize() const {
        const ScopedContext current(context_);
        TROPICAL_CU(cuStreamSynchronize(stream_));
    }

private:
    CUcontext context_ = nullptr;
    CUstream stream_ = nullptr;
};

// The work that `record()` enqueues on `stream`, captured into a CUDA graph (nothing runs while it
// is captured) and instantiated, to be replayed with launch(). A `record` that throws ends the
// capture first, so that the stream is usable again, then the exception goes on.
class CapturedGraph {
public:
    template <class Record>
    CapturedGraph(const OwnedStream& stream, Record&& record, CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL)
        : context_(stream.context()) {
        const ScopedContext current(context_);
        TROPICAL_CU(cuStreamBeginCapture(stream.get(), mode));
        try {
            std::forward<Record>(record)();
        } catch (...) {
            CUgraph abandoned = nullptr;
            driver().cuStreamEndCapture(stream.get(), &abandoned);
            if (abandoned) driver().cuGraphDestroy(abandoned);
            throw;
        }
        TROPICAL_CU(cuStreamEndCapture(stream.get(), &graph_));
        TROPICAL_CU(cuGraphInstantiateWithFlags(&exec_, graph_, 0));
    }
    ~CapturedGraph() {
        try {
            const ScopedContext current(context_);
            if (exec_) TROPICAL_CU_DROPPED(cuGraphExecDestroy(exec_));
            if (graph_) TROPICAL_CU_DROPPED(cuGraphDestroy(graph_));
        } catch (const std::exception& e) {
            report_dropped(e, __FILE__, __LINE__);
        }
    }
    CapturedGraph(const CapturedGraph&) = delete;
    CapturedGraph& operator=(const CapturedGraph&) = delete;

    // Replays the whole graph on `stream`, asynchronously.
    void launch(const OwnedStream& stream) const {
        const ScopedContext current(context_);
        TROPICAL_CU(cuGraphLaunch(exec_, stream.get()));
    }

    // The kinds of the graph's nodes (kernels, memsets, ...), in the driver's order.
    std::vector<CUgraphNodeType> node_types() const {
        std::size_t count = 0;
        TROPICAL_CU(cuGraphGetNodes(graph_, nullptr, &count));
        std::vector<CUgraphNode> nodes(count);
        if (count) TROPICAL_CU(cuGraphGetNodes(graph_, nodes.data(), &count));
        std::vector<CUgraphNodeType> types(count);
        for (std::size_t i = 0; i < count; ++i) TROPICAL_CU(cuGraphNodeGetType(nodes[i], &types[i]));
        return types;
    }

private:
    CUcontext context_ = nullptr;
    CUgraph graph_ = nullptr;
    CUgraphExec exec_ = nullptr;
};

// Whether `stream` is capturing now (for tests that check a capture ended).
inline bool is_capturing(const OwnedStream& stream) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    TROPICAL_CU(cuStreamIsCapturing(stream.get(), &status));
    return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

}  // namespace tropical::detail
