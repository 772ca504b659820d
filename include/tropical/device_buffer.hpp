#pragma once
// A small owning buffer of device memory, for examples, tests and benchmarks. Real applications
// usually own their memory elsewhere (PyTorch, the CUDA runtime) and pass views of it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include <tropical/export.hpp>
#include <tropical/matrix.hpp>

namespace tropical {

namespace detail {

// Frees device memory of one device; declared outside DeviceAllocation so that it is complete
// (and default-constructible) where DeviceAllocation's members are declared.
struct TROPICAL_GEMM_EXPORT DeviceFree {
    int device = 0;
    void operator()(void* pointer) const noexcept;
};

// Untyped device memory from cuMemAlloc on a device's primary context; freed on destruction.
class TROPICAL_GEMM_EXPORT DeviceAllocation {
public:
    DeviceAllocation() = default;
    DeviceAllocation(std::size_t bytes, int device);  // throws OutOfMemory, NoDriver, NoDevice
    void* data() const { return memory_.get(); }
    std::size_t bytes() const { return bytes_; }
    int device() const { return device_; }
    void copy_from_host(const void* source, std::size_t bytes, std::size_t offset = 0);
    void copy_to_host(void* destination, std::size_t bytes, std::size_t offset = 0) const;
    void fill_bytes(unsigned char value);

private:
    std::unique_ptr<void, DeviceFree> memory_;
    std::size_t bytes_ = 0;
    int device_ = 0;
};

}  // namespace detail

template <class T>
class DeviceBuffer {
    static_assert(std::is_trivially_copyable_v<T>);

public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t count, int device = 0) : memory_(count * sizeof(T), device), count_(count) {}
    // Allocates and uploads (synchronously).
    explicit DeviceBuffer(std::span<const T> host, int device = 0) : DeviceBuffer(host.size(), device) { upload(host); }

    T* data() const { return static_cast<T*>(memory_.data()); }
    std::size_t size() const { return count_; }
    int device() const { return memory_.device(); }

    void upload(std::span<const T> host, std::size_t offset = 0) {
        memory_.copy_from_host(host.data(), host.size_bytes(), offset * sizeof(T));
    }
    void download(std::span<T> host, std::size_t offset = 0) const {
        memory_.copy_to_host(host.data(), host.size_bytes(), offset * sizeof(T));
    }
    std::vector<T> to_host() const {
        std::vector<T> out(count_);
        download(out);
        return out;
    }
    // Sets every byte (e.g. 0xff to poison an output before a test).
    void fill_bytes(unsigned char value) { memory_.fill_bytes(value); }

    MatrixView<T> row_major(std::int64_t rows, std::int64_t cols, std::int64_t ld = 0) const {
        return tropical::row_major(data(), rows, cols, ld);
    }
    MatrixView<T> col_major(std::int64_t rows, std::int64_t cols, std::int64_t ld = 0) const {
        return tropical::col_major(data(), rows, cols, ld);
    }

private:
    detail::DeviceAllocation memory_;
    std::size_t count_ = 0;
};

}  // namespace tropical
