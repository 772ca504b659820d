// tropical::contract and tropical::host::contract (tropical/contract.hpp): the labels classified,
// then one batched product (batch, M, K) (x) (batch, K, N) -> (batch, M, N) on views of the operands.
// The host path falls back to buffers of its own (a dense copy of an operand whose strides admit no
// view, the (+)-reduction of indices one input alone holds, the output written through a buffer);
// the GPU path allocates nothing and says what it would need instead.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tropical/contract.hpp>
#include <tropical/error.hpp>
#include "contract/tensor_views.hpp"

namespace tropical::detail {
namespace {

// The counting semiring's tensors are (value, count) pairs, which a TensorRef cannot carry.
void refuse_counting(Semiring s) {
    if (is_counting(s))
        throw InvalidArgument(
            "tropical::contract takes tensors of scalars, and the counting semiring's are (value, count) pairs: "
            "contract them with tropical_gemm.einsum(..., semiring=\"counting\") or "
            "tropical::counting_gemm_batched on matrix views");
}

using Labels = std::vector<std::int32_t>;

Labels joined(const Labels& x, const Labels& y) {
    Labels out = x;
    out.insert(out.end(), y.begin(), y.end());
    return out;
}

// Buffers of the host path, alive until the product has run.
class Scratch {
public:
    void* bytes(std::size_t n) {
        buffers_.emplace_back(n == 0 ? 1 : n);
        return buffers_.back().data();
    }

private:
    std::vector<std::vector<std::byte>> buffers_;
};

// t with the labels `gone` reduced by (+): one product (R x K) (x) one(K x 1), in a buffer.
Tensor reduce_on_host(Semiring s, DType dtype, const Tensor& t, const Labels& gone, Scratch& scratch,
                      const host::Options& options) {
    const std::size_t element = size_of(dtype);
    const Labels keep = labels_except(t, gone);
    Tensor source = t;
    auto matrix = matrix_view(source, {}, keep, gone);
    if (!matrix) {  // no (R x K) view: a dense copy has one
        void* copy = scratch.bytes(static_cast<std::size_t>(t.count()) * element);
        const Tensor dense = dense_like(t, joined(keep, gone), copy);
        copy_elements(t, copy, dense, element);
        source = dense;
        matrix = matrix_view(source, {}, keep, gone);
    }
    const std::int64_t k = matrix->cols, r = matrix->rows;
    void* ones = scratch.bytes(static_cast<std::size_t>(k) * element);
    fill_one(s, dtype, ones, k);
    void* out = scratch.bytes(static_cast<std::size_t>(r) * element);
    const OperandRef one_column{ones, k, 1, 1, Layout::RowMajor, 0};
    const OperandRef result{out, r, 1, 1, Layout::RowMajor, 0};
    host::detail::product(s, dtype, *matrix, one_column, result, nullptr, 1, options);
    return dense_like(t, keep, out);
}

// The operand as a batch of matrices; on the host, a dense copy where its strides admit no view.
OperandRef view_or_copy(Tensor& t, const Labels& batch, const Labels& rows, const Labels& cols, std::size_t element,
                        Scratch& scratch) {
    if (auto v = matrix_view(t, batch, rows, cols)) return *v;
    void* copy = scratch.bytes(static_cast<std::size_t>(t.count()) * element);
    const Tensor dense = dense_like(t, joined(joined(batch, rows), cols), copy);
    copy_elements(t, copy, dense, element);
    t = dense;
    return *matrix_view(t, batch, rows, cols);
}

std::int64_t extent(const Tensor& t, const Labels& labels) {
    std::int64_t n = 1;
    for (auto l : labels) n *= t.find(l)->size;
    return n;
}

// The operands read and classified; with an argmax, its tensor checked and the contracted labels
// put in the order A lists them, which is the order the argmax's flat index follows.
struct Parts {
    Tensor a, b, c, argmax;
    Roles r;
    bool with_argmax = false;
};

Parts read_parts(const TensorRef& a_ref, const TensorRef& b_ref, const TensorRef& c_ref, const TensorRef* argmax_ref) {
    Parts p{read_tensor(a_ref, "A", false), read_tensor(b_ref, "B", false), read_tensor(c_ref, "C", true), {}, {}};
    p.r = classify(p.a, p.b, p.c);
    if (!argmax_ref) return p;
    p.with_argmax = true;
    p.argmax = read_tensor(*argmax_ref, "argmax", true);
    bool same = p.argmax.dims.size() == p.c.dims.size();
    for (const Dim& d : p.c.dims) {
        const Dim* m = p.argmax.find(d.label);
        same = same && m && m->size == d.size;
    }
    if (!same)
        throw InvalidArgument("the argmax tensor must have C's labels with C's sizes (in any order, with any strides)");
    if (!p.r.a_only.empty() || !p.r.b_only.empty())
        throw InvalidArgument(
            fmt::format("contraction with argmax: labels {} of {} appear in no other tensor, and the argmax "
                        "covers contracted labels only: reduce them first (the contraction without argmax "
                        "does, on the host), or give them to C",
                        p.r.a_only.empty() ? p.r.b_only : p.r.a_only, p.r.a_only.empty() ? "B" : "A"));
    Labels in_a_order;
    for (const Dim& d : p.a.dims)
        if (std::find(p.r.contracted.begin(), p.r.contracted.end(), d.label) != p.r.contracted.end())
            in_a_order.push_back(d.label);
    p.r.contracted = in_a_order;
    return p;
}

// C's (or the argmax's) batched-matrix view, or one over a dense buffer of `element` bytes per
// element that `staged` describes (copied into the tensor after the product).
OperandRef output_view(const Tensor& t, const Roles& r, std::size_t element, Scratch& scratch, Tensor& staged) {
    if (auto v = matrix_view(t, r.batch, r.left, r.right, true)) return *v;
    staged = dense_like(t, joined(joined(r.batch, r.left), r.right),
                        scratch.bytes(static_cast<std::size_t>(t.count()) * element));
    return *matrix_view(staged, r.batch, r.left, r.right, true);
}

}  // namespace

void host_contract(Semiring s, DType dtype, const TensorRef& a_ref, const TensorRef& b_ref, const TensorRef& c_ref,
                   const TensorRef* argmax_ref, const host::Options& options) {
    refuse_counting(s);
    Parts p = read_parts(a_ref, b_ref, c_ref, argmax_ref);
    const Roles& r = p.r;
    const std::size_t element = size_of(dtype);
    Scratch scratch;
    if (!r.a_only.empty()) p.a = reduce_on_host(s, dtype, p.a, r.a_only, scratch, options);
    if (!r.b_only.empty()) p.b = reduce_on_host(s, dtype, p.b, r.b_only, scratch, options);
    const OperandRef va = view_or_copy(p.a, r.batch, r.left, r.contracted, element, scratch);
    const OperandRef vb = view_or_copy(p.b, r.batch, r.contracted, r.right, element, scratch);
    const std::int64_t count = extent(p.a, r.batch);
    if (count == 0 || p.c.count() == 0) return;  // nothing to write
    Tensor staged_c, staged_argmax;
    const OperandRef vc = output_view(p.c, r, element, scratch, staged_c);
    OperandRef vm;
    if (p.with_argmax) vm = output_view(p.argmax, r, sizeof(std::int32_t), scratch, staged_argmax);
    host::detail::product(s, dtype, va, vb, vc, p.with_argmax ? &vm : nullptr, count, options);
    if (staged_c.data) copy_elements(staged_c, const_cast<void*>(p.c.data), p.c, element);
    if (staged_argmax.data)
        copy_elements(staged_argmax, const_cast<void*>(p.argmax.data), p.argmax, sizeof(std::int32_t));
}

void contract(Semiring s, DType dtype, const TensorRef& a_ref, const TensorRef& b_ref, const TensorRef& c_ref,
              const TensorRef* argmax_ref, const GemmOptions& options) {
    refuse_counting(s);
    const Parts p = read_parts(a_ref, b_ref, c_ref, argmax_ref);
    const Roles& r = p.r;
    const char* no_buffers = "the GPU path allocates nothing; tropical::host::contract and the Python einsum make it";
    if (!r.a_only.empty() || !r.b_only.empty())
        throw Unsupported(
            fmt::format("tropical::contract: labels {} of {} appear in no other tensor and must be "
                        "reduced first, into a buffer: {} (or reduce them with tropical::gemm by a "
                        "vector of the semiring's one)",
                        r.a_only.empty() ? r.b_only : r.a_only, r.a_only.empty() ? "B" : "A", no_buffers));
    const auto va = matrix_view(p.a, r.batch, r.left, r.contracted);
    const auto vb = matrix_view(p.b, r.batch, r.contracted, r.right);
    const auto vc = matrix_view(p.c, r.batch, r.left, r.right, true);
    const auto vm = p.with_argmax ? matrix_view(p.argmax, r.batch, r.left, r.right, true) : std::optional<OperandRef>();
    if (!va || !vb || !vc || (p.with_argmax && !vm))
        throw Unsupported(fmt::format(
            "tropical::contract: the strides of tensor {} admit no batched-matrix view "
            "(batch {}, rows {}, columns {}{}), which needs a copy: {} (or make it dense)",
            !va   ? "A"
            : !vb ? "B"
            : !vc ? "C"
                  : "argmax",
            r.batch, !vb ? r.contracted : r.left, !va ? r.contracted : r.right,
            p.with_argmax && (!va || !vb) ? "; with the argmax, the contracted labels in the order A lists them" : "",
            no_buffers));
    const std::int64_t count = extent(p.a, r.batch);
    if (count == 0 || p.c.count() == 0) return;
    product(s, dtype, *va, *vb, *vc, p.with_argmax ? &*vm : nullptr, count, options);
}

}  // namespace tropical::detail
