#include "c_api/request.hpp"

#include <string>

#include <fmt/format.h>

#include <tropical/error.hpp>

namespace tropical::detail {
namespace {

template <class Enum>
Enum checked_enum(std::int32_t value, std::int32_t count, const char* what) {
    if (value < 0 || value >= count) throw InvalidArgument(fmt::format("unknown {} ({})", what, value));
    return static_cast<Enum>(value);
}

Layout checked_layout(std::int32_t value, const char* name) {
    if (value != TROPICAL_ROW_MAJOR && value != TROPICAL_COL_MAJOR)
        throw InvalidArgument(
            fmt::format("{} has an unknown layout ({}); use TROPICAL_ROW_MAJOR or TROPICAL_COL_MAJOR", name, value));
    return static_cast<Layout>(value);
}

OperandRef operand(const tropical_matrix* m, const char* name) {
    if (!m) return {};
    return {m->data, m->rows, m->cols, m->ld, checked_layout(m->layout, name), m->batch_stride};
}

}  // namespace

Semiring semiring_from_c(std::int32_t semiring) {
    return checked_enum<Semiring>(semiring, static_cast<std::int32_t>(std::size(all_semirings)), "semiring");
}

DType dtype_from_c(std::int32_t dtype) {
    return checked_enum<DType>(dtype, static_cast<std::int32_t>(std::size(all_dtypes)), "element type");
}

GemmOptions options_from_c(const tropical_options* options) {
    GemmOptions o;
    if (!options) return o;
    if (options->device_hint < 0)
        throw InvalidArgument(
            fmt::format("options.device_hint is {}: it is 0 (no hint) or TROPICAL_DEVICE_HINT(d) "
                        "= d + 1 for CUDA device d",
                        options->device_hint));
    o.stream = static_cast<Stream>(options->stream);
    o.accumulate = options->accumulate != 0;
    o.device = options->device_hint - 1;
    return o;
}

std::string required_descriptors(Operation operation, std::int32_t semiring) {
    switch (operation) {
    case Operation::Gemm: return "11100";
    case Operation::GemmArgmax: return "11110";
    case Operation::PackBits: return "10100";   // the bytes (as a) and the words (as c)
    case Operation::Backtrack: return "10110";  // last (as a), the paths (as c), back (as argmax)
    case Operation::BackwardA:
    case Operation::BackwardB: break;
    }
    const bool of_a = operation == Operation::BackwardA;
    const bool known = semiring >= 0 && semiring < static_cast<std::int32_t>(std::size(all_semirings));
    const auto s = static_cast<Semiring>(known ? semiring : 0);
    return std::string(known && gradient_reads_a(s, of_a) ? "1" : "0") +
           (known && gradient_reads_b(s, of_a) ? "1" : "0") + "111";
}

void require_descriptors(Operation operation, std::int32_t semiring, const tropical_matrix* a, const tropical_matrix* b,
                         const tropical_matrix* c, const tropical_matrix* argmax, const tropical_matrix* grad) {
    const std::string required = required_descriptors(operation, semiring);
    const tropical_matrix* given[] = {a, b, c, argmax, grad};
    const char* names[] = {"a", "b", "c", "argmax", "grad"};
    for (int i = 0; i < 5; ++i)
        if (required[static_cast<std::size_t>(i)] == '1' && given[i] == nullptr)
            throw InvalidArgument(std::string("the matrix descriptor ") + names[i] + " is NULL");
}

Request request_from_c(Operation operation, std::int32_t semiring, std::int32_t dtype, const tropical_matrix* a,
                       const tropical_matrix* b, const tropical_matrix* c, const tropical_matrix* argmax,
                       const tropical_matrix* grad, std::int64_t batch, const tropical_options* options) {
    // Converted in this order, so that the first bad argument is the one named.
    const Semiring s = semiring_from_c(semiring);
    const DType t = dtype_from_c(dtype);
    const bool backward = operation == Operation::BackwardA || operation == Operation::BackwardB;
    const OperandRef ra = operand(a, "A"), rb = operand(b, "B"), rc = operand(c, backward ? "grad_C" : "C");
    const OperandRef rargmax = operand(argmax, "argmax");
    const OperandRef rgrad = operand(grad, operation == Operation::BackwardA ? "grad_A" : "grad_B");
    const GemmOptions o = options_from_c(options);
    switch (operation) {
    case Operation::Gemm: return product_request(s, t, ra, rb, rc, nullptr, batch, o);
    case Operation::GemmArgmax: return product_request(s, t, ra, rb, rc, &rargmax, batch, o);
    case Operation::BackwardA:
    case Operation::BackwardB:
        return backward_request(operation == Operation::BackwardA ? Gradient::OfA : Gradient::OfB, s, t, rc, rargmax,
                                ra, rb, rgrad, batch, o);
    case Operation::PackBits:
    case Operation::Backtrack: break;
    }
    throw Error(Status::Internal, "request_from_c takes products and backward passes only");
}

Request packed_request_from_c(Operation operation, std::int32_t semiring, const tropical_matrix* a,
                              const tropical_matrix* b, std::int64_t k, const tropical_matrix* c,
                              const tropical_matrix* argmax, std::int64_t batch, const tropical_options* options) {
    require_descriptors(operation, semiring, a, b, c, argmax, nullptr);
    if (k < 0) throw InvalidArgument(fmt::format("k is {}: the number of booleans packed along K is 0 or more", k));
    const Request q = request_from_c(operation, semiring, TROPICAL_U8, a, b, c, argmax, nullptr, batch, options);
    return packed_product_request(q.semiring, q.a, q.b, k, q.c,
                                  q.operation == Operation::GemmArgmax ? &q.argmax : nullptr, batch, q.options);
}

Request pack_request_from_c(const tropical_matrix* bytes, std::int32_t as, const tropical_matrix* words,
                            std::int64_t batch, const tropical_options* options) {
    if (!bytes) throw InvalidArgument("the matrix descriptor bytes is NULL");
    if (!words) throw InvalidArgument("the matrix descriptor words is NULL");
    if (as != TROPICAL_PACK_A && as != TROPICAL_PACK_B)
        throw InvalidArgument(
            fmt::format("unknown operand to pack for ({}); use TROPICAL_PACK_A or TROPICAL_PACK_B", as));
    const OperandRef from = operand(bytes, "bytes"), to = operand(words, "words");
    return pack_request(from, as == TROPICAL_PACK_A ? PackAs::A : PackAs::B, to, batch, options_from_c(options));
}

Request backtrack_request_from_c(const tropical_matrix* back, std::int64_t steps, const tropical_matrix* last,
                                 const tropical_matrix* path, const tropical_options* options) {
    if (!back) throw InvalidArgument("the matrix descriptor back is NULL");
    if (!last) throw InvalidArgument("the matrix descriptor last is NULL");
    if (!path) throw InvalidArgument("the matrix descriptor path is NULL");
    return backtrack_request(operand(back, "back"), steps, operand(last, "last"), operand(path, "path"),
                             options_from_c(options));
}

}  // namespace tropical::detail
