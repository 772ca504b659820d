#include "contract/tensor_views.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include <tropical/error.hpp>

namespace tropical::detail {

const Dim* Tensor::find(std::int32_t label) const {
    for (const Dim& d : dims)
        if (d.label == label) return &d;
    return nullptr;
}

std::int64_t Tensor::count() const {
    std::int64_t n = 1;
    for (const Dim& d : dims) n *= d.size;
    return n;
}

Tensor read_tensor(const TensorRef& t, const char* name, bool output) {
    if (t.rank < 0 || t.rank > max_tensor_rank)
        throw InvalidArgument(
            fmt::format("tensor {} has rank {}; it must lie in 0..{}", name, t.rank, max_tensor_rank));
    if (t.rank > 0 && (!t.sizes || !t.strides || !t.labels))
        throw InvalidArgument(
            fmt::format("tensor {} has rank {} but its sizes, strides or labels are NULL", name, t.rank));
    Tensor out{t.data, {}};
    for (int d = 0; d < t.rank; ++d) {
        if (t.sizes[d] < 0)
            throw InvalidArgument(fmt::format("tensor {} has size {} in dimension {}", name, t.sizes[d], d));
        auto same =
            std::find_if(out.dims.begin(), out.dims.end(), [&](const Dim& x) { return x.label == t.labels[d]; });
        if (same == out.dims.end()) {
            out.dims.push_back({t.sizes[d], t.strides[d], t.labels[d]});
            continue;
        }
        if (output)
            throw InvalidArgument(
                fmt::format("tensor C repeats label {}: an output holds each label once", t.labels[d]));
        if (same->size != t.sizes[d])
            throw InvalidArgument(
                fmt::format("tensor {} repeats label {} over dimensions of sizes {} and {}: a repeated "
                            "label takes a diagonal, so its sizes must be equal",
                            name, t.labels[d], same->size, t.sizes[d]));
        same->stride += t.strides[d];  // the diagonal steps along both dimensions at once
    }
    return out;
}

namespace {

void check_size(const Dim& d, const Tensor& other, const char* name, const char* other_name) {
    const Dim* o = other.find(d.label);
    if (o && o->size != d.size)
        throw InvalidArgument(
            fmt::format("label {} has size {} in tensor {} but {} in tensor {}; the sizes of one "
                        "label must be equal",
                        d.label, d.size, name, o->size, other_name));
}

// The labels in the order of t's strides, outermost first (the order in which dimensions merge).
std::vector<std::int32_t> by_stride(const Tensor& t, std::vector<std::int32_t> labels) {
    std::stable_sort(labels.begin(), labels.end(),
                     [&](std::int32_t x, std::int32_t y) { return t.find(x)->stride > t.find(y)->stride; });
    return labels;
}

}  // namespace

Roles classify(const Tensor& a, const Tensor& b, const Tensor& c) {
    for (const Dim& d : a.dims) check_size(d, b, "A", "B"), check_size(d, c, "A", "C");
    for (const Dim& d : b.dims) check_size(d, c, "B", "C");
    for (const Dim& d : c.dims)
        if (!a.find(d.label) && !b.find(d.label))
            throw InvalidArgument(fmt::format("label {} of tensor C appears in neither A nor B", d.label));
    Roles r;
    for (const Dim& d : a.dims) {
        const bool in_b = b.find(d.label) != nullptr, in_c = c.find(d.label) != nullptr;
        (in_b ? (in_c ? r.batch : r.contracted) : (in_c ? r.left : r.a_only)).push_back(d.label);
    }
    for (const Dim& d : b.dims)
        if (!a.find(d.label)) (c.find(d.label) ? r.right : r.b_only).push_back(d.label);
    r.batch = by_stride(a, r.batch), r.left = by_stride(a, r.left), r.contracted = by_stride(a, r.contracted);
    r.a_only = by_stride(a, r.a_only), r.right = by_stride(b, r.right), r.b_only = by_stride(b, r.b_only);
    return r;
}

std::vector<std::int32_t> labels_except(const Tensor& t, const std::vector<std::int32_t>& without) {
    std::vector<std::int32_t> out;
    for (const Dim& d : t.dims)
        if (std::find(without.begin(), without.end(), d.label) == without.end()) out.push_back(d.label);
    return by_stride(t, out);
}

std::optional<Merged> merge(const Tensor& t, const std::vector<std::int32_t>& labels) {
    Merged m;
    bool any = false;
    std::int64_t next = 0;  // the stride the next outer dimension must have to continue the run
    for (auto it = labels.rbegin(); it != labels.rend(); ++it) {
        const Dim& d = *t.find(*it);
        if (d.size == 0) return Merged{0, 1};  // no elements: any stride will do
        if (d.size == 1) continue;
        if (any && d.stride != next) return std::nullopt;
        if (!any) m.stride = d.stride, m.size = 1, any = true;
        m.size *= d.size;
        next = d.stride * d.size;
    }
    return m;
}

std::optional<OperandRef> matrix_view(const Tensor& t, const std::vector<std::int32_t>& batch,
                                      const std::vector<std::int32_t>& rows, const std::vector<std::int32_t>& cols,
                                      bool output) {
    const auto mb = merge(t, batch), mr = merge(t, rows), mc = merge(t, cols);
    if (!mb || !mr || !mc) return std::nullopt;
    OperandRef r;
    r.data = t.data, r.rows = mr->size, r.cols = mc->size;
    r.batch_stride = mb->size > 1 ? mb->stride : 0;
    if (r.rows == 0 || r.cols == 0) {  // no elements: their strides say nothing, any layout fits
        r.ld = std::max<std::int64_t>(r.cols, 1);
        return r;
    }
    if ((mc->size <= 1 || mc->stride == 1) && (mr->size <= 1 || mr->stride >= mc->size)) {
        r.layout = Layout::RowMajor;
        r.ld = mr->size > 1 ? mr->stride : std::max<std::int64_t>(mc->size, 1);
    } else if ((mr->size <= 1 || mr->stride == 1) && (mc->size <= 1 || mc->stride >= mr->size)) {
        r.layout = Layout::ColMajor;
        r.ld = mc->size > 1 ? mc->stride : std::max<std::int64_t>(mr->size, 1);
    } else {
        return std::nullopt;
    }
    if (r.ld < 1) return std::nullopt;  // a broadcast (stride 0) row or column: no leading dimension fits
    if (output && mb->size > 1) {
        const std::int64_t span = r.rows * r.cols == 0 ? 0
                                                       : (r.layout == Layout::RowMajor ? (r.rows - 1) * r.ld + r.cols
                                                                                       : (r.cols - 1) * r.ld + r.rows);
        if (r.batch_stride < span) return std::nullopt;
    }
    return r;
}

void copy_elements(const Tensor& from, void* to_data, const Tensor& to, std::size_t element) {
    const std::int64_t total = from.count();
    if (total == 0) return;
    const std::size_t rank = from.dims.size();
    std::vector<std::int64_t> index(rank, 0), to_stride(rank);
    for (std::size_t d = 0; d < rank; ++d) to_stride[d] = to.find(from.dims[d].label)->stride;
    auto* dst = static_cast<std::byte*>(to_data);
    const auto* src = static_cast<const std::byte*>(from.data);
    std::int64_t at_from = 0, at_to = 0;
    for (std::int64_t n = 0; n < total; ++n) {
        std::memcpy(dst + at_to * static_cast<std::int64_t>(element),
                    src + at_from * static_cast<std::int64_t>(element), element);
        for (std::size_t d = rank; d-- > 0;) {  // the odometer: the last dimension turns fastest
            at_from += from.dims[d].stride, at_to += to_stride[d];
            if (++index[d] < from.dims[d].size) break;
            at_from -= from.dims[d].stride * from.dims[d].size, at_to -= to_stride[d] * from.dims[d].size;
            index[d] = 0;
        }
    }
}

Tensor dense_like(const Tensor& t, const std::vector<std::int32_t>& labels, const void* data) {
    Tensor out{data, {}};
    std::int64_t stride = 1;
    for (auto it = labels.rbegin(); it != labels.rend(); ++it) {
        const Dim& d = *t.find(*it);
        out.dims.insert(out.dims.begin(), {d.size, stride, d.label});
        stride *= d.size;
    }
    return out;
}

void fill_one(Semiring semiring, DType dtype, void* data, std::int64_t count) {
    with_element_type(dtype, [&](auto x) {
        using T = decltype(x);
        std::fill_n(static_cast<T*>(data), count, one_of<T>(semiring));
    });
}

}  // namespace tropical::detail
