// tropical::contract, tropical::host::contract and their counting forms (tropical/contract.hpp): the
// labels classified, then one batched product (batch, M, K) (x) (batch, K, N) -> (batch, M, N) on
// views of the operands. An operand is one tensor in a scalar semiring and two in the counting one
// (its values and its counts: the "parts", with the same labels and sizes): one grouping of the
// labels serves every part, and each part gets its view, copy or buffer of its own. The host path
// falls back to buffers (a dense copy of a part whose strides admit no view, the (+)-reduction of
// indices one input alone holds, the output written through a buffer); the GPU path allocates
// nothing and says what it would need instead.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tropical/contract.hpp>
#include <tropical/counting.hpp>
#include <tropical/error.hpp>
#include "contract/tensor_views.hpp"
#include "request/validate.hpp"

namespace tropical::detail {
namespace {

// The counting semiring's tensors are (value, count) pairs, which one TensorRef cannot carry.
void refuse_counting(Semiring s) {
    if (is_counting(s))
        throw InvalidArgument(
            "tropical::contract takes tensors of scalars, and the counting semiring's are (value, count) pairs: "
            "contract them with tropical::counting_contract (C: tropical_counting_contract), which takes each "
            "tensor's values and counts");
}

using Labels = std::vector<std::int32_t>;

Labels joined(const Labels& x, const Labels& y) {
    Labels out = x;
    out.insert(out.end(), y.begin(), y.end());
    return out;
}

// What the drivers need of the algebra: how many parts an operand has, and each part's type.
struct Algebra {
    Semiring semiring;
    DType dtype;

    int parts() const { return is_counting(semiring) ? 2 : 1; }
    std::size_t element(int part) const { return part == 0 ? size_of(dtype) : sizeof(double); }
};

using Operand = std::vector<Tensor>;    // one tensor per part
using Views = std::vector<OperandRef>;  // one batched-matrix view per part

// The parts' names in messages: "A", and "A's counts" beside it.
const char* part_name(const char* name, int part) {
    if (part == 0) return name;
    return name[0] == 'A' ? "A's counts" : name[0] == 'B' ? "B's counts" : "C's counts";
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

// The product on the host: the semiring's, or the counting one on values and counts.
void host_product(const Algebra& k, const Views& a, const Views& b, const Views& c, const OperandRef* argmax,
                  std::int64_t batch, const host::Options& options) {
    if (k.parts() == 2) host_counting_product(k.dtype, {a[0], a[1]}, {b[0], b[1]}, {c[0], c[1]}, batch, options);
    else host::detail::product(k.semiring, k.dtype, a[0], b[0], c[0], argmax, batch, options);
}

// The part as a batch of matrices; on the host, a dense copy where its strides admit no view.
OperandRef view_or_copy(Tensor& t, const Labels& batch, const Labels& rows, const Labels& cols, std::size_t element,
                        Scratch& scratch) {
    if (auto v = matrix_view(t, batch, rows, cols)) return *v;
    void* copy = scratch.bytes(static_cast<std::size_t>(t.count()) * element);
    const Tensor dense = dense_like(t, joined(joined(batch, rows), cols), copy);
    copy_elements(t, copy, dense, element);
    t = dense;
    return *matrix_view(t, batch, rows, cols);
}

// t with the labels `gone` reduced by (+): one product (R x K) (x) one(K x 1), in buffers.
Operand reduce_on_host(const Algebra& k, Operand t, const Labels& gone, Scratch& scratch,
                       const host::Options& options) {
    const Labels keep = labels_except(t[0], gone);
    Views matrix, ones, out;
    Operand reduced;
    for (int part = 0; part < k.parts(); ++part) {
        const std::size_t element = k.element(part);
        const OperandRef m = view_or_copy(t[part], {}, keep, gone, element, scratch);
        void* one = scratch.bytes(static_cast<std::size_t>(m.cols) * element);
        if (part == 0) fill_one(k.semiring, k.dtype, one, m.cols);
        else std::fill_n(static_cast<double*>(one), m.cols, 1.0);  // the counts' one
        void* result = scratch.bytes(static_cast<std::size_t>(m.rows) * element);
        matrix.push_back(m);
        ones.push_back({one, m.cols, 1, 1, Layout::RowMajor, 0});
        out.push_back({result, m.rows, 1, 1, Layout::RowMajor, 0});
        reduced.push_back(dense_like(t[part], keep, result));
    }
    host_product(k, matrix, ones, out, nullptr, 1, options);
    return reduced;
}

std::int64_t extent(const Tensor& t, const Labels& labels) {
    std::int64_t n = 1;
    for (auto l : labels) n *= t.find(l)->size;
    return n;
}

// The parts of one operand read; a part after the first must have the first's labels and sizes,
// dimension by dimension (its strides are its own).
Operand read_operand(const Algebra& k, const TensorRef* refs, const char* name, bool output) {
    Operand out;
    for (int part = 0; part < k.parts(); ++part) {
        out.push_back(read_tensor(refs[part], part_name(name, part), output));
        const TensorRef &v = refs[0], &x = refs[part];
        bool same = v.rank == x.rank;
        for (int d = 0; same && d < v.rank; ++d) same = v.sizes[d] == x.sizes[d] && v.labels[d] == x.labels[d];
        if (!same)
            throw InvalidArgument(fmt::format(
                "the counts of tensor {} must have its values' sizes and labels, dimension by dimension (strides "
                "may differ): the values have sizes [{}] and labels [{}], the counts sizes [{}] and labels [{}]",
                name, fmt::join(v.sizes, v.sizes + v.rank, ", "), fmt::join(v.labels, v.labels + v.rank, ", "),
                fmt::join(x.sizes, x.sizes + x.rank, ", "), fmt::join(x.labels, x.labels + x.rank, ", ")));
    }
    return out;
}

// The operands read and classified (by their first parts); with an argmax, its tensor checked and
// the contracted labels put in the order A lists them, which is the order the argmax's flat index
// follows.
struct Problem {
    Operand a, b, c;
    Tensor argmax;
    Roles r;
    bool with_argmax = false;
};

Problem read_problem(const Algebra& k, const TensorRef* a_refs, const TensorRef* b_refs, const TensorRef* c_refs,
                     const TensorRef* argmax_ref) {
    check_supported(k.semiring, k.dtype);
    Problem p{read_operand(k, a_refs, "A", false),
              read_operand(k, b_refs, "B", false),
              read_operand(k, c_refs, "C", true),
              {},
              {}};
    p.r = classify(p.a[0], p.b[0], p.c[0]);
    if (!argmax_ref) return p;
    p.with_argmax = true;
    p.argmax = read_tensor(*argmax_ref, "argmax", true);
    bool same = p.argmax.dims.size() == p.c[0].dims.size();
    for (const Dim& d : p.c[0].dims) {
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
    for (const Dim& d : p.a[0].dims)
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

void host_run(const Algebra& k, const TensorRef* a_refs, const TensorRef* b_refs, const TensorRef* c_refs,
              const TensorRef* argmax_ref, const host::Options& options) {
    Problem p = read_problem(k, a_refs, b_refs, c_refs, argmax_ref);
    const Roles& r = p.r;
    Scratch scratch;
    if (!r.a_only.empty()) p.a = reduce_on_host(k, p.a, r.a_only, scratch, options);
    if (!r.b_only.empty()) p.b = reduce_on_host(k, p.b, r.b_only, scratch, options);
    Views va, vb, vc;
    for (int part = 0; part < k.parts(); ++part) {
        va.push_back(view_or_copy(p.a[part], r.batch, r.left, r.contracted, k.element(part), scratch));
        vb.push_back(view_or_copy(p.b[part], r.batch, r.contracted, r.right, k.element(part), scratch));
    }
    const std::int64_t count = extent(p.a[0], r.batch);
    if (count == 0 || p.c[0].count() == 0) return;  // nothing to write
    Operand staged(static_cast<std::size_t>(k.parts()));
    for (int part = 0; part < k.parts(); ++part)
        vc.push_back(output_view(p.c[part], r, k.element(part), scratch, staged[part]));
    Tensor staged_argmax;
    OperandRef vm;
    if (p.with_argmax) vm = output_view(p.argmax, r, sizeof(std::int32_t), scratch, staged_argmax);
    host_product(k, va, vb, vc, p.with_argmax ? &vm : nullptr, count, options);
    for (int part = 0; part < k.parts(); ++part)
        if (staged[part].data)
            copy_elements(staged[part], const_cast<void*>(p.c[part].data), p.c[part], k.element(part));
    if (staged_argmax.data)
        copy_elements(staged_argmax, const_cast<void*>(p.argmax.data), p.argmax, sizeof(std::int32_t));
}

void gpu_run(const Algebra& k, const TensorRef* a_refs, const TensorRef* b_refs, const TensorRef* c_refs,
             const TensorRef* argmax_ref, const GemmOptions& options) {
    const Problem p = read_problem(k, a_refs, b_refs, c_refs, argmax_ref);
    const Roles& r = p.r;
    const char* no_buffers = "the GPU path allocates nothing; tropical::host::contract and the Python einsum make it";
    if (!r.a_only.empty() || !r.b_only.empty())
        throw Unsupported(
            fmt::format("tropical::contract: labels {} of {} appear in no other tensor and must be "
                        "reduced first, into a buffer: {} (or reduce them with tropical::gemm by a "
                        "vector of the semiring's one)",
                        r.a_only.empty() ? r.b_only : r.a_only, r.a_only.empty() ? "B" : "A", no_buffers));
    // Each part's view, or the first that has none: its name, rows and columns.
    Views va, vb, vc;
    const char* refused = nullptr;
    const Labels *rows = nullptr, *cols = nullptr;
    auto view = [&](Views& into, const Tensor& t, const char* name, const Labels& x, const Labels& y, bool output) {
        if (refused) return;
        if (auto v = matrix_view(t, r.batch, x, y, output)) into.push_back(*v);
        else refused = name, rows = &x, cols = &y;
    };
    for (int part = 0; part < k.parts(); ++part) {
        view(va, p.a[part], part_name("A", part), r.left, r.contracted, false);
        view(vb, p.b[part], part_name("B", part), r.contracted, r.right, false);
    }
    for (int part = 0; part < k.parts(); ++part) view(vc, p.c[part], part_name("C", part), r.left, r.right, true);
    Views vm;
    if (p.with_argmax) view(vm, p.argmax, "argmax", r.left, r.right, true);
    if (refused)
        throw Unsupported(
            fmt::format("tropical::contract: the strides of tensor {} admit no batched-matrix view "
                        "(batch {}, rows {}, columns {}{}), which needs a copy: {} (or make it dense)",
                        refused, r.batch, *rows, *cols,
                        p.with_argmax && (refused[0] == 'A' || refused[0] == 'B')
                            ? "; with the argmax, the contracted labels in the order A lists them"
                            : "",
                        no_buffers));
    const std::int64_t count = extent(p.a[0], r.batch);
    if (count == 0 || p.c[0].count() == 0) return;
    if (k.parts() == 2) counting_product(k.dtype, {va[0], va[1]}, {vb[0], vb[1]}, {vc[0], vc[1]}, count, options);
    else product(k.semiring, k.dtype, va[0], vb[0], vc[0], p.with_argmax ? &vm[0] : nullptr, count, options);
}

}  // namespace

void host_contract(Semiring s, DType dtype, const TensorRef& a, const TensorRef& b, const TensorRef& c,
                   const TensorRef* argmax, const host::Options& options) {
    refuse_counting(s);
    host_run({s, dtype}, &a, &b, &c, argmax, options);
}

void contract(Semiring s, DType dtype, const TensorRef& a, const TensorRef& b, const TensorRef& c,
              const TensorRef* argmax, const GemmOptions& options) {
    refuse_counting(s);
    gpu_run({s, dtype}, &a, &b, &c, argmax, options);
}

void host_counting_contract(DType dtype, const CountingTensorRef& a, const CountingTensorRef& b,
                            const CountingTensorRef& c, const host::Options& options) {
    const TensorRef ra[] = {a.values, a.counts}, rb[] = {b.values, b.counts}, rc[] = {c.values, c.counts};
    host_run({Semiring::Counting, dtype}, ra, rb, rc, nullptr, options);
}

void counting_contract(DType dtype, const CountingTensorRef& a, const CountingTensorRef& b, const CountingTensorRef& c,
                       const GemmOptions& options) {
    const TensorRef ra[] = {a.values, a.counts}, rb[] = {b.values, b.counts}, rc[] = {c.values, c.counts};
    gpu_run({Semiring::Counting, dtype}, ra, rb, rc, nullptr, options);
}

}  // namespace tropical::detail
