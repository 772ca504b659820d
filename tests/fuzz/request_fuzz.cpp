// Product, backward and backtrack requests with random shapes, strides, layouts, pointers and enum
// values (a backtrack's tables in argmax, its last states in a, its paths in c, its steps the batch):
// validation must
// answer every one with a clear error or a pass, never a crash or undefined behaviour (64-bit size
// arithmetic is where it would hide), and the C ABI must give the same verdict as a status code.
// The pointers are never dereferenced: no driver is loaded (TROPICAL_GEMM_CUDA_DRIVER points
// nowhere), so a request that passes validation ends at NO_DRIVER, even on a machine with a GPU.
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include <tropical/c_api.h>
#include <tropical/error.hpp>
#include "request/validate.hpp"
#include "targets.hpp"

extern "C" int tropical_fuzz_call_c_abi(int operation, int semiring, int dtype, const tropical_matrix* a,
                                        const tropical_matrix* b, const tropical_matrix* c,
                                        const tropical_matrix* argmax, const tropical_matrix* grad, int64_t batch,
                                        const tropical_options* options);
extern "C" const char* tropical_fuzz_status_string(int status);

namespace tropical::fuzz {
namespace {

// Reads the input a field at a time; past its end every field is 0.
class Reader {
public:
    Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

    std::uint8_t byte() { return size_ ? (--size_, *data_++) : 0; }
    std::uint64_t raw() {
        std::uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v = v << 8 | byte();
        return v;
    }
    // Mostly small counts, sometimes the edges of 32- and 64-bit arithmetic, sometimes anything.
    std::int64_t count() {
        static constexpr std::int64_t kEdges[] = {std::numeric_limits<std::int64_t>::max(),
                                                  std::numeric_limits<std::int64_t>::min(),
                                                  std::int64_t{1} << 31,
                                                  (std::int64_t{1} << 32) + 1,
                                                  std::int64_t{1} << 62,
                                                  std::numeric_limits<std::int32_t>::max(),
                                                  (std::int64_t{1} << 61) - 1,
                                                  3037000500};
        const std::uint8_t b = byte();
        switch (b % 8) {
        case 5: return -1 - b / 8;
        case 6: return kEdges[b / 8 % 8];
        case 7: return static_cast<std::int64_t>(raw());
        default: return b / 8;
        }
    }
    // An enum value as a C caller might pass it: mostly in range, sometimes any int.
    int enumerator(int count) {
        const std::uint8_t b = byte();
        return b < 240 ? b % count : static_cast<int>(static_cast<std::uint32_t>(raw()));
    }

private:
    const std::uint8_t* data_;
    std::size_t size_;
};

// Two's-complement arithmetic, as the input's values may overflow: the library must cope, not this.
std::int64_t wrap(std::uint64_t value) { return static_cast<std::int64_t>(value); }

// A few separate "allocations", so that operands overlap only when the input says so.
const void* pointer(Reader& in) {
    const std::uint8_t b = in.byte();
    if (b % 8 == 0) return nullptr;
    if (b % 8 == 7) return reinterpret_cast<const void*>(static_cast<std::uintptr_t>(in.raw()));
    return reinterpret_cast<const void*>(std::uintptr_t{0x100000000} * (b % 8) + std::uintptr_t{in.byte()} * 4);
}

// An operand that mostly has the shape its role needs, so that the later checks are reached.
tropical_matrix matrix(Reader& in, std::int64_t rows, std::int64_t cols) {
    tropical_matrix m{};
    const std::uint8_t how = in.byte();
    m.layout = how & 1 ? in.enumerator(2) : how >> 1 & 1;
    const bool row_major = m.layout == TROPICAL_ROW_MAJOR;
    m.rows = how & 4 ? in.count() : rows;
    m.cols = how & 8 ? in.count() : cols;
    m.ld = how & 16 ? in.count() : wrap(static_cast<std::uint64_t>(row_major ? m.cols : m.rows) + in.byte() % 3);
    const std::uint64_t elements = static_cast<std::uint64_t>(m.rows) * static_cast<std::uint64_t>(m.cols);
    m.batch_stride = how & 32 ? in.count() : wrap(elements * (in.byte() % 3));
    m.data = pointer(in);
    return m;
}

detail::OperandRef operand_of(const tropical_matrix* m) {
    if (!m) return {};
    return {m->data, m->rows, m->cols, m->ld, static_cast<Layout>(m->layout), m->batch_stride};
}

}  // namespace

int request(const std::uint8_t* data, std::size_t size) {
    static const bool no_driver = ::setenv("TROPICAL_GEMM_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1) == 0;
    if (!no_driver) fail("cannot point TROPICAL_GEMM_CUDA_DRIVER nowhere");
    Reader in(data, size);
    const int operation = in.byte() % 5;  // gemm, gemm_argmax, backward A, backward B, backtrack
    const bool backtrack = operation == 4;
    // Every semiring and type (OrAnd and U8 last), valid pairs and not.
    const int semiring = in.enumerator(static_cast<int>(std::size(all_semirings))),
              dtype = in.enumerator(static_cast<int>(std::size(all_dtypes)));
    const std::int64_t m = in.count(), n = in.count(), k = in.count();
    // Every operand by its role's shape (grad is M x K for backward A, K x N for backward B; a
    // backtrack's last states M x 1 and its paths M x (K + 1), K its steps).
    const std::int64_t k_plus_one = wrap(static_cast<std::uint64_t>(k) + 1);
    tropical_matrix mats[5] = {backtrack ? matrix(in, m, 1) : matrix(in, m, k), matrix(in, k, n),
                               backtrack ? matrix(in, m, k_plus_one) : matrix(in, m, n), matrix(in, m, n),
                               operation == 3 ? matrix(in, k, n) : matrix(in, m, k)};
    if (!tropical_fuzz_status_string(in.enumerator(10))) fail("a status has no name");
    const std::uint8_t present = in.byte();  // which descriptors are passed (not NULL)
    const tropical_matrix* given[5];
    for (int i = 0; i < 5; ++i) given[i] = present >> i & 1 ? &mats[i] : nullptr;
    const std::int64_t batch = backtrack && in.byte() % 4 ? k : in.count();  // a backtrack's steps: mostly K
    const tropical_options options{nullptr, in.byte() & 1, 0};
    const bool with_options = in.byte() & 1;

    const int status = tropical_fuzz_call_c_abi(operation, semiring, dtype, given[0], given[1], given[2], given[3],
                                                given[4], batch, with_options ? &options : nullptr);
    if (status < TROPICAL_SUCCESS || status > TROPICAL_INTERNAL_ERROR || status == TROPICAL_INTERNAL_ERROR)
        fail("the C ABI returned an unexpected status");
    if ((status == TROPICAL_SUCCESS) != (*tropical_last_error_message() == '\0'))
        fail("a failed call left no message, or a successful one left one");

    // The same request, as the C ABI builds it, straight into validation.
    detail::Request q;
    q.operation = backtrack ? detail::Operation::Backtrack : static_cast<detail::Operation>(operation);
    q.semiring = backtrack ? Semiring::MaxPlus : static_cast<Semiring>(static_cast<std::uint8_t>(semiring));
    q.dtype = backtrack ? DType::I32 : static_cast<DType>(static_cast<std::uint8_t>(dtype));
    q.a = operand_of(given[0]), q.b = operand_of(given[1]), q.c = operand_of(given[2]);
    q.argmax = operand_of(given[3]), q.grad = operand_of(given[4]);
    q.batch = batch;
    q.options.accumulate = with_options && options.accumulate;
    int expected = -1;  // -1: passes validation
    detail::Shape shape;
    try {
        shape = detail::validate(q).shape;
    } catch (const InvalidArgument&) {
        expected = TROPICAL_INVALID_ARGUMENT;
    } catch (const Unsupported&) {
        expected = TROPICAL_UNSUPPORTED;
    }  // anything else escapes, and the fuzzer reports it

    // Compare only where the C ABI passes the request on unchanged: enums in range, every
    // descriptor it needs given, every layout it converts valid.
    // The descriptors each operation needs (a b c argmax grad): a backward pass reads A and B where its
    // semiring's gradient does, as the semiring table says (MaxMul the other operand; MaxMin, MinMax and
    // LogPlus both).
    const bool known = semiring >= 0 && semiring < static_cast<int>(std::size(all_semirings));
    const auto backward_needs = [&](bool of_a) {
        const auto s = static_cast<Semiring>(known ? semiring : 0);
        return std::string(known && gradient_reads_a(s, of_a) ? "1" : "0") +
               (known && gradient_reads_b(s, of_a) ? "1" : "0") + "111";
    };
    const std::string backward_a = backward_needs(true), backward_b = backward_needs(false);
    const char* required[] = {"11100", "11110", backward_a.c_str(), backward_b.c_str(), "10110"};
    bool comparable = backtrack || (known && dtype >= 0 && dtype < static_cast<int>(std::size(all_dtypes)));
    for (int i = 0; i < 5; ++i) {
        if (required[operation][i] == '1' && !given[i]) comparable = false;
        if (given[i] && given[i]->layout != TROPICAL_ROW_MAJOR && given[i]->layout != TROPICAL_COL_MAJOR)
            comparable = false;
    }
    if (!comparable) {
        if (status != TROPICAL_INVALID_ARGUMENT && status != TROPICAL_UNSUPPORTED && status != TROPICAL_SUCCESS &&
            status != TROPICAL_NO_DRIVER)
            fail("a malformed C request failed with an unexpected status");
        return 0;
    }
    if (expected >= 0 && status != expected) fail("the C ABI and validate disagree about an invalid request");
    if (expected < 0 && status != TROPICAL_SUCCESS && status != TROPICAL_NO_DRIVER)
        fail("a valid request failed for another reason than the missing driver");
    if (!backtrack && expected < 0 && status == TROPICAL_SUCCESS && shape.m != 0 && shape.n != 0 && shape.k != 0 &&
        batch != 0)
        fail("a non-empty product succeeded without a driver");
    if (backtrack && expected < 0 && status == TROPICAL_SUCCESS && shape.m != 0)
        fail("a backtrack with rows succeeded without a driver");
    return 0;
}

}  // namespace tropical::fuzz
