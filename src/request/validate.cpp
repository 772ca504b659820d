#include "request/validate.hpp"

#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace tropical::detail {
namespace {

[[noreturn]] void invalid(const std::string& message) { throw InvalidArgument(message); }

const char* operation_name(Operation op) {
    switch (op) {
    case Operation::Gemm: return "gemm";
    case Operation::GemmArgmax: return "gemm with argmax";
    case Operation::BackwardA: return "backward for A";
    case Operation::BackwardB: return "backward for B";
    case Operation::PackBits: return "pack_bits";
    case Operation::Backtrack: return "backtrack";
    }
    return "?";
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
    std::int64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out)) invalid(fmt::format("{} is too large: its size overflows 64 bits", what));
    return out;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what) {
    std::int64_t out = 0;
    if (__builtin_add_overflow(a, b, &out)) invalid(fmt::format("{} is too large: its size overflows 64 bits", what));
    return out;
}

// Offset in elements one past the last element of the first matrix, and of the whole batch.
struct Extent {
    std::int64_t one = 0, all = 0;
};

Extent extent_of(const UsedOperand& u, std::int64_t batch) {
    const auto& r = *u.ref;
    if (r.rows == 0 || r.cols == 0 || batch == 0) return {};
    const std::int64_t rs = r.layout == Layout::RowMajor ? r.ld : 1;
    const std::int64_t cs = r.layout == Layout::RowMajor ? 1 : r.ld;
    const std::int64_t last =
        checked_add(checked_mul(r.rows - 1, rs, u.name), checked_mul(r.cols - 1, cs, u.name), u.name);
    const std::int64_t one = checked_add(last, 1, u.name);
    const std::int64_t all = checked_add(one, checked_mul(batch - 1, r.batch_stride, u.name), u.name);
    checked_mul(all, static_cast<std::int64_t>(u.element_size), u.name);
    return {one, all};
}

void check_operand(const UsedOperand& u, std::int64_t rows, std::int64_t cols, std::int64_t batch) {
    const auto& r = *u.ref;
    if (r.rows != rows || r.cols != cols)
        invalid(fmt::format("{} is {}x{} but must be {}x{} here", u.name, r.rows, r.cols, rows, cols));
    if (r.layout != Layout::RowMajor && r.layout != Layout::ColMajor)
        invalid(fmt::format("{} has an unknown layout ({}); use row-major or column-major", u.name,
                            static_cast<int>(r.layout)));
    const bool empty = rows == 0 || cols == 0 || batch == 0;
    if (!empty) {
        const std::int64_t minimum = r.layout == Layout::RowMajor ? cols : rows;
        if (r.ld < minimum)
            invalid(fmt::format("{} is {} with {} {}, so its leading dimension must be at least {}; it is {}", u.name,
                                to_string(r.layout), minimum, r.layout == Layout::RowMajor ? "columns" : "rows",
                                minimum, r.ld));
        if (r.data == nullptr) invalid(fmt::format("{} is a null pointer but has {}x{} elements", u.name, rows, cols));
    }
    if (r.batch_stride < 0)
        invalid(fmt::format("{} has a negative batch stride ({}); batch strides are 0 (broadcast) or positive", u.name,
                            r.batch_stride));
}

// The bytes [begin, end) an operand covers, as integers: pointer arithmetic beyond an allocation
// is undefined, and a bad pointer plus a large extent would wrap around the address space.
struct ByteRange {
    std::uintptr_t begin = 0, end = 0;
};

ByteRange bytes_of(const UsedOperand& u, Extent e) {
    const auto begin = reinterpret_cast<std::uintptr_t>(u.ref->data);
    const auto size = static_cast<std::uintptr_t>(e.all) * u.element_size;  // extent_of checked it fits
    std::uintptr_t end = 0;
    if (__builtin_add_overflow(begin, size, &end))
        invalid(fmt::format("{} ({}) would run past the end of the address space: {} bytes from there", u.name,
                            u.ref->data, size));
    return {begin, end};
}

bool overlaps(ByteRange x, ByteRange y) {
    return x.begin < x.end && y.begin < y.end && x.begin < y.end && y.begin < x.end;
}

// The element types a semiring takes, in words: "f32, f64, i32 or i64".
std::string types_taken_by(Semiring s) {
    std::string list;
    for (DType t : all_dtypes) {
        if (!supports(s, t)) continue;
        if (!list.empty()) list += ", ";
        list += to_string(t);
    }
    const auto last = list.rfind(", ");
    return last == std::string::npos ? list : list.replace(last, 2, " or ");
}

// Why a semiring and an element type do not go together (supports() is false).
[[noreturn]] void mismatched(Semiring s, DType t) {
    if (s == Semiring::OrAnd)
        throw Unsupported(
            fmt::format("OrAnd is Boolean: its elements are u8 (booleans in bytes, nonzero is true; "
                        "std::uint8_t or bool, uint8 or bool tensors), not {}; convert the operands "
                        "to booleans, e.g. with (x != 0)",
                        to_string(t)));
    if (is_counting(s))
        throw Unsupported(
            fmt::format("counting values are {}, not {} (counts are always f64); convert the "
                        "values to floating point",
                        types_taken_by(s), to_string(t)));
    if (t == DType::U8)
        throw Unsupported(
            fmt::format("u8 (booleans in bytes) is the element type of the OrAnd semiring alone, not of "
                        "{}; use OrAnd, or convert the operands to {}",
                        to_string(s), types_taken_by(s)));
    throw Unsupported(fmt::format("{} takes {}, not {}; convert the operands to one of those", to_string(s),
                                  types_taken_by(s), to_string(t)));
}

// PackBits: a (bytes) packed into c (words) as an A (along its columns) or a B (along its rows). The
// shape is that of a product whose operand it is: the outer dimension in m, K in k.
void check_pack(const Request& q, ValidatedRequest& v) {
    if (q.semiring != Semiring::OrAnd || q.dtype != DType::U8)
        throw Unsupported(fmt::format("pack_bits packs booleans (u8) for OrAnd; it was asked for {} {}",
                                      to_string(q.dtype), to_string(q.semiring)));
    if (q.pack != PackAs::A && q.pack != PackAs::B)
        invalid(fmt::format("unknown operand to pack for ({}); pack as A or B", static_cast<int>(q.pack)));
    if (q.options.accumulate) invalid("pack_bits cannot accumulate: it overwrites the words");
    if (q.a.rows < 0 || q.a.cols < 0)
        invalid(fmt::format("sizes must be 0 or more; the bytes are {}x{}", q.a.rows, q.a.cols));
    const bool as_a = q.pack == PackAs::A;
    v.shape = as_a ? Shape{q.a.rows, 0, q.a.cols} : Shape{q.a.cols, 0, q.a.rows};
    const std::int64_t words = (v.shape.k + 31) / 32;
    const std::int64_t rows = as_a ? q.a.rows : words, cols = as_a ? words : q.a.cols;
    if (q.c.rows != rows || q.c.cols != cols)
        invalid(
            fmt::format("the words are {}x{} but must be {}x{}: {}x{} booleans packed as {} make {} words of 32 "
                        "along K ({})",
                        q.c.rows, q.c.cols, rows, cols, q.a.rows, q.a.cols, as_a ? "an A" : "a B", words,
                        as_a ? "their columns" : "their rows"));
    v.operands[v.operand_count] = {"words", &q.c, sizeof(std::uint32_t), true};
    check_operand(v.operands[v.operand_count++], rows, cols, q.batch);
    v.operands[v.operand_count] = {"bytes", &q.a, 1, false};
    check_operand(v.operands[v.operand_count++], q.a.rows, q.a.cols, q.batch);
}

// Backtrack: argmax holds the T = batch back-pointer tables (B x S each), a the B x 1 last states, c
// the B x (T + 1) paths. The shape: m = B, n = S, k = T.
void check_backtrack(const Request& q, ValidatedRequest& v) {
    if (q.dtype != DType::I32)
        throw Unsupported(
            fmt::format("backtrack follows int32 indices (the argmax of the products), not {}", to_string(q.dtype)));
    if (q.options.accumulate) invalid("backtrack cannot accumulate: it overwrites the paths");
    const OperandRef& back = q.argmax;
    if (back.rows < 0 || back.cols < 0)
        invalid(fmt::format("sizes must be 0 or more; the back-pointer tables are {}x{}", back.rows, back.cols));
    v.shape = {back.rows, back.cols, q.batch};
    const std::int64_t rows = back.rows, path_length = checked_add(q.batch, 1, "the paths");
    if (q.a.rows != rows || q.a.cols != 1)
        invalid(
            fmt::format("the last states are {}x{} but must be {}x1: one per row of the back-pointer tables "
                        "({}x{})",
                        q.a.rows, q.a.cols, rows, back.rows, back.cols));
    if (q.c.rows != rows || q.c.cols != path_length)
        invalid(
            fmt::format("the paths are {}x{} but must be {}x{}: a row per row of the back-pointer tables, "
                        "{} steps and the last state",
                        q.c.rows, q.c.cols, rows, path_length, q.batch));
    const std::size_t index = sizeof(std::int32_t);
    v.operands[v.operand_count] = {"path", &q.c, index, true, true};
    check_operand(v.operands[v.operand_count++], rows, path_length, 1);
    v.operands[v.operand_count] = {"last", &q.a, index, false, true};
    check_operand(v.operands[v.operand_count++], rows, 1, 1);
    v.operands[v.operand_count] = {"back", &back, index, false};
    check_operand(v.operands[v.operand_count++], rows, back.cols, q.batch);
}

// The operands and shape of a product or a backward pass.
void check_operation(const Request& q, ValidatedRequest& v) {
    const std::size_t t = size_of(q.dtype);
    const std::size_t index = sizeof(std::int32_t);
    const bool backward = q.operation == Operation::BackwardA || q.operation == Operation::BackwardB;
    if (backward && !is_floating(q.dtype))
        throw Unsupported(
            fmt::format("backward is implemented for f32 and f64, not {}: gradients of integer products "
                        "are not defined; convert the operands to floating point",
                        to_string(q.dtype)));
    if (backward && size_of(q.dtype) == 2)
        throw Unsupported(
            fmt::format("backward of {} products is not built yet (issue 35): convert the operands "
                        "to f32 for the gradients",
                        to_string(q.dtype)));
    if (is_counting(q.semiring) && !q.with_counts)
        invalid(
            "the counting semiring multiplies (value, count) pairs, which need a count matrix beside each value "
            "matrix: call tropical::counting_gemm (tropical/counting.hpp) or tropical_counting_gemm");
    if (q.with_counts && !is_counting(q.semiring))
        invalid(fmt::format("count matrices go with the counting semiring only, not {}", to_string(q.semiring)));
    if (q.with_counts && q.operation != Operation::Gemm)
        throw Unsupported(
            fmt::format("the counting semiring offers the product alone, not {}: its counts already say "
                        "how many k attain each result",
                        operation_name(q.operation)));
    if (q.operation == Operation::GemmArgmax && !info(q.semiring).selects())
        throw Unsupported(
            fmt::format("{}'s (+) is {}: it combines every term, so no single k attains a result and "
                        "there is no argmax; call the product without one",
                        to_string(q.semiring), info(q.semiring).plus == PlusKind::LogSumExp ? "log-sum-exp" : "a sum"));
    if (q.operation == Operation::GemmArgmax && size_of(q.dtype) == 2)
        throw Unsupported(
            fmt::format("the argmax of {} products is not built yet (issue 35): compute the product "
                        "without it, or convert the operands to f32 or i32",
                        to_string(q.dtype)));
    if (q.operation == Operation::GemmArgmax && q.options.accumulate)
        throw Unsupported(
            "gemm with argmax cannot accumulate into C: the argmax of earlier terms is unknown; "
            "compute into a fresh C (accumulate = false)");
    const bool packed = q.packed_k >= 0;
    if (packed && (backward || q.semiring != Semiring::OrAnd))
        throw Unsupported(fmt::format("packed operands are OrAnd's alone, not {}'s", to_string(q.semiring)));

    auto use = [&](const char* name, const OperandRef& ref, std::size_t size, bool output) -> const UsedOperand& {
        v.operands[v.operand_count] = {name, &ref, size, output};
        return v.operands[v.operand_count++];
    };
    Shape& s = v.shape;
    switch (q.operation) {
    case Operation::Gemm:
    case Operation::GemmArgmax:
        if (packed) {
            // A is M x ceil(K/32) words, B ceil(K/32) x N.
            s = {q.a.rows, q.b.cols, q.packed_k};
            const std::int64_t words = (s.k + 31) / 32;
            if (q.a.cols != words || q.b.rows != words)
                invalid(
                    fmt::format("A is {}x{} and B {}x{} words, but K = {} packed along K takes {} words: A must "
                                "be M x {} and B {} x N",
                                q.a.rows, q.a.cols, q.b.rows, q.b.cols, s.k, words, words, words));
            if (q.c.rows != s.m || q.c.cols != s.n)
                invalid(
                    fmt::format("C is {}x{} but must be {}x{}: the rows of A ({}x{} words) by the columns of B "
                                "({}x{} words)",
                                q.c.rows, q.c.cols, s.m, s.n, q.a.rows, q.a.cols, q.b.rows, q.b.cols));
            check_operand(use("C", q.c, t, true), s.m, s.n, q.batch);
            check_operand(use("A (packed)", q.a, sizeof(std::uint32_t), false), s.m, words, q.batch);
            check_operand(use("B (packed)", q.b, sizeof(std::uint32_t), false), words, s.n, q.batch);
        } else {
            // The shape follows from the inputs, so that a wrong C is named as the culprit.
            s = {q.a.rows, q.b.cols, q.a.cols};
            if (q.b.rows != s.k)
                invalid(fmt::format("B is {}x{} but must be {}x{}: its rows must equal the columns of A ({}x{})",
                                    q.b.rows, q.b.cols, s.k, q.b.cols, q.a.rows, q.a.cols));
            if (q.c.rows != s.m || q.c.cols != s.n)
                invalid(fmt::format("C is {}x{} but must be {}x{}, the shape of A ({}x{}) times B ({}x{})", q.c.rows,
                                    q.c.cols, s.m, s.n, q.a.rows, q.a.cols, q.b.rows, q.b.cols));
            check_operand(use("C", q.c, t, true), s.m, s.n, q.batch);
            check_operand(use("A", q.a, t, false), s.m, s.k, q.batch);
            check_operand(use("B", q.b, t, false), s.k, s.n, q.batch);
        }
        if (q.operation == Operation::GemmArgmax)
            check_operand(use("argmax", q.argmax, index, true), s.m, s.n, q.batch);
        if (q.with_counts) {
            check_operand(use("C_count", q.c_count, sizeof(double), true), s.m, s.n, q.batch);
            check_operand(use("A_count", q.a_count, sizeof(double), false), s.m, s.k, q.batch);
            check_operand(use("B_count", q.b_count, sizeof(double), false), s.k, s.n, q.batch);
        }
        break;
    case Operation::BackwardA:
    case Operation::BackwardB: {
        // grad_C is M x N; the gradient is M x K (of A) or K x N (of B); A and B are read where the
        // semiring's gradient needs them (the reference says which).
        const bool of_a = q.operation == Operation::BackwardA;
        s = of_a ? Shape{q.grad.rows, q.c.cols, q.grad.cols} : Shape{q.c.rows, q.grad.cols, q.grad.rows};
        check_operand(use(of_a ? "grad_A" : "grad_B", q.grad, t, true), of_a ? s.m : s.k, of_a ? s.k : s.n, q.batch);
        check_operand(use("grad_C", q.c, t, false), s.m, s.n, q.batch);
        // LogPlus reads the forward's C where the others read its argmax.
        if (gradient_reads_result(q.semiring)) check_operand(use("C", q.argmax, t, false), s.m, s.n, q.batch);
        else check_operand(use("argmax", q.argmax, index, false), s.m, s.n, q.batch);
        if (gradient_reads_a(q.semiring, of_a)) check_operand(use("A", q.a, t, false), s.m, s.k, q.batch);
        if (gradient_reads_b(q.semiring, of_a)) check_operand(use("B", q.b, t, false), s.k, s.n, q.batch);
        break;
    }
    default: invalid(fmt::format("unknown operation ({})", static_cast<int>(q.operation)));
    }
    if (s.m < 0 || s.n < 0 || s.k < 0)
        invalid(fmt::format("sizes must be 0 or more; got M={}, N={}, K={}", s.m, s.n, s.k));
    if ((q.operation == Operation::GemmArgmax || backward) && s.k > INT32_MAX)
        invalid(fmt::format("K = {} does not fit the int32 argmax indices; split the product along K", s.k));
    // The backward kernels walk all M x N x batch entries of grad_C with one 64-bit index.
    if (backward) checked_mul(checked_mul(s.m, s.n, "grad_C"), q.batch, "grad_C");
}

}  // namespace

void check_supported(Semiring s, DType t) {
    if (!supports(s, t)) mismatched(s, t);
}

ValidatedRequest validate(const Request& q) {
    if (static_cast<std::size_t>(q.dtype) >= std::size(all_dtypes))
        invalid(fmt::format("unknown element type ({})", static_cast<int>(q.dtype)));
    if (static_cast<std::size_t>(q.semiring) >= std::size(all_semirings))
        invalid(fmt::format("unknown semiring ({})", static_cast<int>(q.semiring)));
    if (q.batch < 0)
        invalid(fmt::format("the {} is {}; it must be 0 or more",
                            q.operation == Operation::Backtrack ? "number of steps" : "batch count", q.batch));
    const bool backward = q.operation == Operation::BackwardA || q.operation == Operation::BackwardB;
    if (backward && q.semiring == Semiring::OrAnd)
        throw Unsupported(
            "OrAnd is Boolean: it has no gradient (its products are true or false), so there is no backward pass");

    ValidatedRequest v;
    if (q.operation == Operation::PackBits) {
        check_pack(q, v);
    } else if (q.operation == Operation::Backtrack) {
        check_backtrack(q, v);
    } else {
        if (!supports(q.semiring, q.dtype)) mismatched(q.semiring, q.dtype);
        check_operation(q, v);
    }

    Extent extents[kMaxOperands];
    ByteRange ranges[kMaxOperands];
    for (int i = 0; i < v.operand_count; ++i) {
        const auto& u = v.operands[i];
        const std::int64_t batch = u.one_matrix ? 1 : q.batch;
        extents[i] = extent_of(u, batch);
        ranges[i] = bytes_of(u, extents[i]);
        if (u.output && batch > 1 && u.ref->batch_stride < extents[i].one)
            invalid(
                fmt::format("{}'s batch stride is {} elements, less than one {} matrix spans ({}): the products "
                            "of the batch would overwrite each other",
                            u.name, u.ref->batch_stride, u.name, extents[i].one));
    }
    for (int i = 0; i < v.operand_count; ++i)
        for (int j = 0; j < v.operand_count; ++j)
            if (i != j && v.operands[i].output && (j > i || !v.operands[j].output) && overlaps(ranges[i], ranges[j]))
                invalid(
                    fmt::format("{} overlaps {} in memory: an output of {} must not share memory with another operand",
                                v.operands[i].name, v.operands[j].name, operation_name(q.operation)));
    return v;
}

}  // namespace tropical::detail
