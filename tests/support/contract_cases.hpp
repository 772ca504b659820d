#pragma once
// Binary contractions for the tests of tropical::contract, and their brute-force value: a loop over
// every assignment of the labels, (x) of the two entries, (+) into C. Inputs are small integers
// (as floats, too), so that every semiring's result is exact in every type.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <tropical/contract.hpp>
#include "support/logplus_cases.hpp"

namespace tropical::testing {

// One operand: its labels (letters), sizes and strides (elements) over a buffer of `span` elements.
struct TensorSpec {
    std::string labels;
    std::vector<std::int64_t> sizes, strides;
    std::int64_t span = 0;
};

// A dense row-major tensor, or its dimensions permuted in memory (`memory_order` lists dimension
// positions, outermost first), or with `pad` elements between each outermost slice.
inline TensorSpec spec(std::string labels, std::vector<std::int64_t> sizes, std::vector<int> memory_order = {},
                       std::int64_t pad = 0) {
    TensorSpec t{labels, sizes, std::vector<std::int64_t>(sizes.size()), 0};
    if (memory_order.empty())
        for (int d = 0; d < static_cast<int>(sizes.size()); ++d) memory_order.push_back(d);
    std::int64_t stride = 1;
    for (auto it = memory_order.rbegin(); it != memory_order.rend(); ++it) {
        t.strides[static_cast<std::size_t>(*it)] = stride;
        stride *= sizes[static_cast<std::size_t>(*it)];
    }
    if (!memory_order.empty() && pad) {  // slices of the outermost dimension pad apart
        const auto outer = static_cast<std::size_t>(memory_order.front());
        t.strides[outer] += pad;
    }
    t.span = 1;
    for (std::size_t d = 0; d < sizes.size(); ++d) t.span += (sizes[d] - 1) * t.strides[d];
    for (auto s : sizes)
        if (s == 0) t.span = 1;
    return t;
}

template <class T>
TensorView<T> view_of(const TensorSpec& s, T* data) {
    TensorView<T> v;
    v.data = data;
    v.rank = static_cast<int>(s.sizes.size());
    for (int d = 0; d < v.rank; ++d) {
        const auto u = static_cast<std::size_t>(d);
        v.sizes[d] = s.sizes[u], v.strides[d] = s.strides[u], v.labels[d] = s.labels[u];
    }
    return v;
}

template <class T>
T case_zero(Semiring s) {
    using L = std::numeric_limits<T>;
    const bool max = s == Semiring::MaxPlus || s == Semiring::MaxMin || s == Semiring::LogPlus;
    if (s == Semiring::MaxMul || s == Semiring::OrAnd) return T(0);
    if (L::has_infinity) return max ? -L::infinity() : L::infinity();
    return max ? L::lowest() : L::max();
}

template <class T>
T times(Semiring s, T x, T y) {
    switch (s) {
    case Semiring::MaxPlus:
    case Semiring::MinPlus:
        if (!std::numeric_limits<T>::has_infinity && (x == case_zero<T>(s) || y == case_zero<T>(s)))
            return case_zero<T>(s);
        return x + y;
    case Semiring::MaxMul: return x * y;
    case Semiring::MaxMin: return std::min(x, y);
    case Semiring::MinMax: return std::max(x, y);
    case Semiring::Counting: break;  // pairs: tests/counting_contract_test.cpp
    case Semiring::OrAnd: return T(x != T(0) && y != T(0));
    case Semiring::LogPlus: return x + y;
    }
    return x;
}

template <class T>
T plus(Semiring s, T x, T y) {
    if (s == Semiring::OrAnd) return T(x != T(0) || y != T(0));
    if constexpr (std::numeric_limits<T>::has_infinity) {
        if (s == Semiring::LogPlus) {  // log(exp(x) + exp(y)), in the wider type
            const long double hi = std::max(x, y), lo = std::min(x, y);
            return lo == -std::numeric_limits<T>::infinity() ? T(hi) : T(hi + std::log1p(std::exp(lo - hi)));
        }
    }
    const bool max = s == Semiring::MaxPlus || s == Semiring::MaxMul || s == Semiring::MaxMin;
    return max ? std::max(x, y) : std::min(x, y);
}

// Whether a contraction's result is the brute force's: exactly, or for LogPlus (whose sums of
// exponentials the kernels and the brute force round differently) within 1e-5 x max(1, |C|) (log_equal).
template <class T>
bool same_result(Semiring s, T got, T want) {
    if constexpr (std::numeric_limits<T>::has_infinity) {
        if (s == Semiring::LogPlus) return log_equal(want, got, 1e-5);  // f32's bound, for either type
        if (std::isnan(want)) return std::isnan(got);
    }
    return got == want;
}

// `t` with its strides set to 0 on the labels `broadcast` (one element serves them all).
inline TensorSpec broadcast(TensorSpec t, const std::string& labels) {
    t.span = 1;
    for (std::size_t d = 0; d < t.sizes.size(); ++d) {
        if (labels.find(t.labels[d]) != std::string::npos) t.strides[d] = 0;
        t.span += (t.sizes[d] - 1) * t.strides[d];
    }
    return t;
}

// A counting contraction's six tensors: each operand's values and counts (same labels and sizes,
// strides of their own).
struct CountingCase {
    const char* name;
    TensorSpec a, a_counts, b, b_counts, c, c_counts;
    bool posinf = true;  // false where a label of one input alone is reduced first (counting_contract_test)
};

// One term of a contraction by brute force: a value for every label, and where the term lands in a
// dense row-major C.
struct Term {
    std::size_t position;
    const std::map<char, std::int64_t>& at;  // each label's value
    // The term's element in tensor t, by t's labels and strides.
    std::size_t offset(const TensorSpec& t) const {
        std::int64_t o = 0;
        for (std::size_t d = 0; d < t.labels.size(); ++d) o += at.at(t.labels[d]) * t.strides[d];
        return static_cast<std::size_t>(o);
    }
};

// The number of elements of a dense tensor of t's sizes.
inline std::size_t element_count(const TensorSpec& t) {
    std::int64_t n = 1;
    for (auto size : t.sizes) n *= size;
    return static_cast<std::size_t>(n);
}

// Calls f(Term) for every assignment of the labels of a, b and c (the labels C lacks are summed over),
// the labels taken in alphabetical order, the last fastest.
template <class F>
void for_each_term(const TensorSpec& a, const TensorSpec& b, const TensorSpec& c, F f) {
    std::map<char, std::int64_t> sizes;
    for (const TensorSpec* t : {&a, &b, &c})
        for (std::size_t d = 0; d < t->labels.size(); ++d) sizes[t->labels[d]] = t->sizes[d];
    std::vector<char> labels;
    std::int64_t total = 1;
    for (auto [l, n] : sizes) labels.push_back(l), total *= n;
    std::map<char, std::int64_t> at;
    for (std::int64_t n = 0; n < total; ++n) {
        std::int64_t rest = n;
        for (auto it = labels.rbegin(); it != labels.rend(); ++it) at[*it] = rest % sizes[*it], rest /= sizes[*it];
        std::int64_t pos = 0;
        for (std::size_t d = 0; d < c.labels.size(); ++d) pos = pos * c.sizes[d] + at[c.labels[d]];
        f(Term{static_cast<std::size_t>(pos), at});
    }
}

// The contraction by brute force, into a dense row-major C of c's sizes.
template <class T>
std::vector<T> brute_contract(Semiring s, const TensorSpec& a, const std::vector<T>& da, const TensorSpec& b,
                              const std::vector<T>& db, const TensorSpec& c) {
    std::vector<T> out(element_count(c), case_zero<T>(s));
    for_each_term(a, b, c, [&](const Term& t) {
        T& slot = out[t.position];
        slot = plus(s, slot, times(s, da[t.offset(a)], db[t.offset(b)]));
    });
    return out;
}

// The contraction by brute force with its argmax (tropical/contract.hpp): both dense row-major of
// c's sizes; the argmax the flat index over the contracted labels in the order A lists them, the
// smallest attaining C's value, -1 where no term beats the zero. No label may be in one input alone.
template <class T>
std::pair<std::vector<T>, std::vector<std::int32_t>> brute_contract_argmax(Semiring s, const TensorSpec& a,
                                                                           const std::vector<T>& da,
                                                                           const TensorSpec& b,
                                                                           const std::vector<T>& db,
                                                                           const TensorSpec& c) {
    std::map<char, std::int64_t> sizes;
    for (const TensorSpec* t : {&a, &b, &c})
        for (std::size_t d = 0; d < t->labels.size(); ++d) sizes[t->labels[d]] = t->sizes[d];
    std::string contracted;
    for (char l : a.labels)
        if (b.labels.find(l) != std::string::npos && c.labels.find(l) == std::string::npos &&
            contracted.find(l) == std::string::npos)
            contracted += l;
    std::vector<T> out(element_count(c), case_zero<T>(s));
    std::vector<std::int32_t> arg(out.size(), -1);
    for_each_term(a, b, c, [&](const Term& t) {
        std::int64_t k = 0;
        for (char l : contracted) k = k * sizes[l] + t.at.at(l);
        const T term = times(s, da[t.offset(a)], db[t.offset(b)]);
        T& slot = out[t.position];
        std::int32_t& best = arg[t.position];
        const bool beats = plus(s, slot, term) != slot;  // strictly better than what is there
        if (beats || (term == slot && best >= 0 && k < best)) slot = term, best = static_cast<std::int32_t>(k);
    });
    return {out, arg};
}

// Random small integers for an operand's buffer (MaxMul's non-negative; OrAnd's booleans, true a
// third of the time, as bytes from 1 to 9).
template <class T>
std::vector<T> random_values(std::int64_t count, Semiring s, std::mt19937& rng) {
    std::uniform_int_distribution<int> pick(s == Semiring::MaxMul ? 0 : -9, 9);
    std::vector<T> v(static_cast<std::size_t>(count));
    for (T& x : v) {
        const int r = pick(rng);
        x = s == Semiring::OrAnd ? static_cast<T>(r > 3 ? r : 0) : static_cast<T>(r);
    }
    return v;
}

}  // namespace tropical::testing
