#include "c_request.hpp"

#include <string>

#include <tropical/error.hpp>

namespace tropical::detail {
namespace {

// Range-checked before they become the C++ enums (which are 8 bits wide, so an unchecked 256
// would quietly turn into 0).
template <class Enum>
Enum checked_enum(long long value, long long count, const char* what) {
    if (value < 0 || value >= count)
        throw InvalidArgument(std::string("unknown ") + what + " (" + std::to_string(value) + ")");
    return static_cast<Enum>(value);
}

Layout checked_layout(std::int32_t value, const char* name) {
    if (value != TROPICAL_ROW_MAJOR && value != TROPICAL_COL_MAJOR)
        throw InvalidArgument(std::string(name) + " has an unknown layout (" + std::to_string(value) +
                              "); use TROPICAL_ROW_MAJOR or TROPICAL_COL_MAJOR");
    return static_cast<Layout>(value);
}

OperandRef operand(const tropical_matrix* m, const char* name) {
    if (!m) return {};
    return {m->data, m->rows, m->cols, m->ld, checked_layout(m->layout, name), m->batch_stride};
}

}  // namespace

Request request_from_c(Operation operation, std::int32_t semiring, std::int32_t dtype, const tropical_matrix* a,
                       const tropical_matrix* b, const tropical_matrix* c, const tropical_matrix* argmax,
                       const tropical_matrix* grad, std::int64_t batch, const tropical_options* options) {
    Request q;
    q.operation = operation;
    q.semiring = checked_enum<Semiring>(semiring, 3, "semiring");
    q.dtype = checked_enum<DType>(dtype, 4, "element type");
    const bool backward = operation == Operation::BackwardA || operation == Operation::BackwardB;
    q.a = operand(a, "A"), q.b = operand(b, "B"), q.c = operand(c, backward ? "grad_C" : "C");
    q.argmax = operand(argmax, "argmax");
    q.grad = operand(grad, operation == Operation::BackwardA ? "grad_A" : "grad_B");
    q.batch = batch;
    if (options) {
        q.options.stream = static_cast<Stream>(options->stream);
        q.options.accumulate = options->accumulate != 0;
    }
    return q;
}

}  // namespace tropical::detail
