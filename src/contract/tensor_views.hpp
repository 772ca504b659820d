#pragma once
// The pieces of tropical::contract (tropical/contract.hpp) that know nothing of the hardware: its
// operands read and checked, their labels classified, groups of dimensions merged into the rows,
// columns and batch of one matrix view, and strided copies for the host path's fallbacks.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <tropical/contract.hpp>

namespace tropical::detail {

struct Dim {
    std::int64_t size = 0;
    std::int64_t stride = 0;
    std::int32_t label = 0;
};

// A tensor with each label once: a repeated input label became one dimension (its diagonal).
struct Tensor {
    const void* data = nullptr;
    std::vector<Dim> dims;

    const Dim* find(std::int32_t label) const;
    std::int64_t count() const;  // the number of elements
};

// The operand checked (rank, sizes, pointers) and its diagonals taken; `name` is "A", "B" or "C".
// An output may not repeat a label. Throws InvalidArgument saying what is wrong.
Tensor read_tensor(const TensorRef& t, const char* name, bool output);

// Every label of the contraction, by its role; each group in the order of the strides of the operand
// that decides it (A for batch, left, contracted, A-only; B for right, B-only), outermost first.
struct Roles {
    std::vector<std::int32_t> batch, left, right, contracted, a_only, b_only;
};

// Classifies the labels, checking that sizes agree and that C's labels come from A or B.
Roles classify(const Tensor& a, const Tensor& b, const Tensor& c);

// The labels of t in the given order, but those in `without`.
std::vector<std::int32_t> labels_except(const Tensor& t, const std::vector<std::int32_t>& without);

// The dimensions `labels` of t merged into one of (size, stride), or nothing where the strides do not
// allow it. Size-1 dimensions never stand in the way; no labels give (1, 0).
struct Merged {
    std::int64_t size = 1;
    std::int64_t stride = 0;
};
std::optional<Merged> merge(const Tensor& t, const std::vector<std::int32_t>& labels);

// t as a batch of matrices with rows `rows` and columns `cols` (row- or column-major, the batch
// stride 0 for a batch of one), or nothing where no view of the library's products fits. An output's
// matrices must also lie one after another (the products check that none overwrites another).
std::optional<OperandRef> matrix_view(const Tensor& t, const std::vector<std::int32_t>& batch,
                                      const std::vector<std::int32_t>& rows, const std::vector<std::int32_t>& cols,
                                      bool output = false);

// Copies the elements of `from` into `to` (same labels, any strides), `element` bytes each.
void copy_elements(const Tensor& from, void* to_data, const Tensor& to, std::size_t element);

// A dense tensor of t's labels in the order `labels` (the last contiguous) over `data`.
Tensor dense_like(const Tensor& t, const std::vector<std::int32_t>& labels, const void* data);

// Fills `count` elements at `data` with the semiring's one (x (x) one = x) of type `dtype`.
void fill_one(Semiring semiring, DType dtype, void* data, std::int64_t count);

}  // namespace tropical::detail
