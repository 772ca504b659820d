#pragma once
// Device inputs for benchmarks: random values of the right range for each type and semiring,
// several copies so that consecutive runs read memory that is not in L2.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include <tropical/device_buffer.hpp>
#include <tropical/types.hpp>

namespace tropical::bench {

// SplitMix64: a fast, well-mixed stream, so that filling gigabytes of inputs takes a fraction of
// a second instead of the minutes a std::mt19937 + distribution pair needs.
inline std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Values a user would multiply: floats in [-8, 8] ([0, 8] for MaxMul), integers in [-1000, 1000]
// ([0, 1000] for MaxMul, keeping i32 products in range).
template <class T>
std::vector<T> random_values(std::size_t count, Semiring semiring, std::uint64_t seed) {
    std::vector<T> out(count);
    const bool nonnegative = semiring == Semiring::MaxMul;
    for (auto& v : out) {
        const std::uint64_t r = splitmix64(seed);
        if constexpr (is_floating_element_v<T>) {
            const double unit = static_cast<double>(r >> 11) * 0x1.0p-53;  // [0, 1)
            v = T(static_cast<arithmetic_t<T>>(nonnegative ? 8.0 * unit : 16.0 * unit - 8.0));
        } else {
            const auto small = static_cast<T>(r % 1001);
            v = nonnegative || (r >> 63) ? small : static_cast<T>(-small);
        }
    }
    return out;
}

// A rotating set of `copies` device buffers of `count` elements each, all holding random data.
template <class T>
class RotatingInput {
public:
    RotatingInput(std::size_t count, int copies, Semiring semiring, std::uint64_t seed) {
        const auto host = random_values<T>(count, semiring, seed);
        for (int i = 0; i < copies; ++i)
            buffers_.push_back(std::make_unique<DeviceBuffer<T>>(std::span<const T>(host)));
    }
    // Replaces the contents of every copy.
    void upload(std::span<const T> host) {
        for (auto& buffer : buffers_) buffer->upload(host);
    }
    T* operator[](std::size_t i) const { return buffers_[i % buffers_.size()]->data(); }
    std::size_t copies() const { return buffers_.size(); }

private:
    std::vector<std::unique_ptr<DeviceBuffer<T>>> buffers_;
};

// How many copies of a working set of `bytes` make consecutive runs miss an L2 of `l2_bytes`.
inline int copies_to_defeat_l2(std::size_t bytes, std::size_t l2_bytes) {
    if (bytes == 0) return 1;
    return static_cast<int>(std::clamp<std::size_t>((3 * l2_bytes + bytes - 1) / bytes, 1, 8));
}

}  // namespace tropical::bench
