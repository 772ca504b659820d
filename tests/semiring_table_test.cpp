// The semiring and element-type tables (tropical/semiring_table.h): the facts the C++ vocabulary
// derives from them against the semantics README.md states, and the C ABI's copies of the rows
// (tropical_semiring_facts_of, tropical_dtype_facts_of) against the C++ ones. Needs no GPU.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include <tropical/c_api.h>
#include <tropical/types.hpp>

namespace {

using namespace tropical;

TEST(SemiringTable, ZerosAndOnesAreTheDocumentedOnes) {
    constexpr float inf = std::numeric_limits<float>::infinity();
    constexpr std::int32_t lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max();
    EXPECT_EQ(zero_of<float>(Semiring::MaxPlus), -inf);
    EXPECT_EQ(zero_of<std::int32_t>(Semiring::MaxPlus), lo);
    EXPECT_EQ(one_of<float>(Semiring::MaxPlus), 0.0f);
    EXPECT_EQ(zero_of<float>(Semiring::MinPlus), inf);
    EXPECT_EQ(zero_of<std::int64_t>(Semiring::MinPlus), std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(zero_of<double>(Semiring::MaxMul), 0.0);
    EXPECT_EQ(one_of<std::int32_t>(Semiring::MaxMul), 1);
    EXPECT_EQ(zero_of<float>(Semiring::MaxMin), -inf);
    EXPECT_EQ(one_of<float>(Semiring::MaxMin), inf);
    EXPECT_EQ(one_of<std::int32_t>(Semiring::MaxMin), hi);
    EXPECT_EQ(zero_of<std::int32_t>(Semiring::MinMax), hi);
    EXPECT_EQ(one_of<std::int32_t>(Semiring::MinMax), lo);
    EXPECT_EQ(zero_of<double>(Semiring::Counting), -std::numeric_limits<double>::infinity());
    EXPECT_EQ(one_of<double>(Semiring::Counting), 0.0);
    EXPECT_EQ(zero_of<std::uint8_t>(Semiring::OrAnd), 0);
    EXPECT_EQ(one_of<std::uint8_t>(Semiring::OrAnd), 1);
    EXPECT_EQ(zero_of<float>(Semiring::LogPlus), -inf);
    EXPECT_EQ(one_of<double>(Semiring::LogPlus), 0.0);
}

TEST(SemiringTable, WhatEachSemiringTakesAndOffers) {
    for (Semiring s : all_semirings) {
        const bool orand = s == Semiring::OrAnd, counting = s == Semiring::Counting, log = s == Semiring::LogPlus;
        EXPECT_EQ(info(s).selects(), !counting && !log) << to_string(s);  // the argmax exists
        EXPECT_EQ(is_counting(s), counting) << to_string(s);
        EXPECT_EQ(has_gradient(s), !orand && !counting) << to_string(s);
        EXPECT_EQ(gradient_reads_result(s), log) << to_string(s);  // its weights need C
        for (DType t : all_dtypes) {
            // The 16-bit types: every scalar semiring but int16's MaxMul; LogPlus and counting not yet
            // (issue 35).
            const bool sixteen = size_of(t) == 2;
            bool expected = orand ? t == DType::U8 : counting || log ? is_floating(t) && !sixteen : t != DType::U8;
            if (s == Semiring::MaxMul && t == DType::I16) expected = false;
            EXPECT_EQ(supports(s, t), expected) << to_string(s) << " " << to_string(t);
        }
    }
    EXPECT_EQ(info(Semiring::MinPlus).plus, PlusKind::Min);
    EXPECT_EQ(info(Semiring::MinMax).plus, PlusKind::Min);
    EXPECT_EQ(info(Semiring::MaxMin).plus, PlusKind::Max);
    EXPECT_EQ(info(Semiring::OrAnd).plus, PlusKind::Or);
    EXPECT_EQ(info(Semiring::LogPlus).plus, PlusKind::LogSumExp);
}

TEST(SemiringTable, GradientsReadWhatTheirRouteNeeds) {
    // MaxPlus and MinPlus read neither operand; MaxMul the other one; MaxMin, MinMax and LogPlus both.
    for (bool of_a : {true, false}) {
        EXPECT_FALSE(gradient_reads_a(Semiring::MaxPlus, of_a) || gradient_reads_b(Semiring::MinPlus, of_a));
        EXPECT_EQ(gradient_reads_a(Semiring::MaxMul, of_a), !of_a);
        EXPECT_EQ(gradient_reads_b(Semiring::MaxMul, of_a), of_a);
        for (Semiring s : {Semiring::MaxMin, Semiring::MinMax, Semiring::LogPlus})
            EXPECT_TRUE(gradient_reads_a(s, of_a) && gradient_reads_b(s, of_a));
    }
}

TEST(SemiringTable, ElementTypes) {
    EXPECT_EQ(size_of(DType::F32), 4u);
    EXPECT_EQ(size_of(DType::I64), 8u);
    EXPECT_EQ(size_of(DType::U8), 1u);
    EXPECT_TRUE(is_floating(DType::F64));
    EXPECT_FALSE(is_floating(DType::I32));
    EXPECT_EQ(dtype_of<float>(), DType::F32);
    EXPECT_EQ(dtype_of<std::int64_t>(), DType::I64);
    EXPECT_EQ(dtype_of<bool>(), DType::U8);
    EXPECT_EQ(info(DType::I32).device_type, "int");
    EXPECT_EQ(identity_bits(Identity::Lowest, DType::F32), 0xff800000u);
    EXPECT_EQ(identity_bits(Identity::Highest, DType::I64), 0x7fffffffffffffffu);
    EXPECT_EQ(identity_bits(Identity::Highest, DType::U8), 1u);
}

TEST(SemiringTable, TheCAbiCopiesEachRow) {
    for (Semiring s : all_semirings) {
        tropical_semiring_facts f{};
        ASSERT_EQ(tropical_semiring_facts_of(static_cast<tropical_semiring>(s), &f), TROPICAL_SUCCESS);
        const SemiringInfo& row = info(s);
        EXPECT_EQ(std::string(f.name), row.name);
        if (!row.pairs()) {  // "counting" is no pair of words
            EXPECT_EQ(std::string(f.name), std::string(f.plus_word) + f.times_word) << "the name is (+) then (x)";
        }
        EXPECT_EQ(f.plus, static_cast<int32_t>(row.plus));
        EXPECT_EQ(f.times, static_cast<int32_t>(row.times));
        EXPECT_EQ(f.zero, static_cast<int32_t>(row.zero));
        EXPECT_EQ(f.one, static_cast<int32_t>(row.one));
        EXPECT_EQ(f.gradient, static_cast<int32_t>(row.gradient));
        EXPECT_EQ(f.selects, row.selects() ? 1 : 0);
        EXPECT_EQ(f.pairs, row.pairs() ? 1 : 0);
        EXPECT_EQ(f.prefers, info(s).plus == PlusKind::Min ? -1 : 1);
        EXPECT_EQ(f.dtypes, row.dtypes);
        EXPECT_EQ(tropical_semiring_has_gradient(static_cast<tropical_semiring>(s)), row.has_gradient() ? 1 : 0);
    }
    tropical_semiring_facts f{};
    EXPECT_EQ(std::string(tropical_semiring_facts_of(TROPICAL_MAXMUL, &f) == TROPICAL_SUCCESS ? f.times_symbol : ""),
              "x");
    for (DType t : all_dtypes) {
        tropical_dtype_facts d{};
        ASSERT_EQ(tropical_dtype_facts_of(static_cast<tropical_dtype>(t), &d), TROPICAL_SUCCESS);
        EXPECT_EQ(std::string(d.tag), info(t).tag);
        EXPECT_EQ(std::string(d.name), info(t).name);
        EXPECT_EQ(static_cast<std::size_t>(d.size), size_of(t));
        EXPECT_EQ(d.kind, static_cast<int32_t>(info(t).kind));
        EXPECT_EQ(std::string(d.kind_word), is_floating(t) ? "float" : t == DType::U8 ? "boolean" : "signed");
        for (int i = 0; i < 4; ++i) EXPECT_EQ(d.identity_bits[i], identity_bits(static_cast<Identity>(i), t));
    }
    tropical_dtype_facts d{};
    ASSERT_EQ(tropical_dtype_facts_of(TROPICAL_F64, &d), TROPICAL_SUCCESS);
    EXPECT_EQ(std::bit_cast<double>(d.identity_bits[TROPICAL_IDENTITY_LOWEST]),
              -std::numeric_limits<double>::infinity());
}

TEST(SemiringTable, TheCAbiRefusesWhatIsNoRow) {
    tropical_semiring_facts f{};
    tropical_dtype_facts d{};
    EXPECT_EQ(tropical_semiring_facts_of(static_cast<tropical_semiring>(std::size(all_semirings)), &f),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_NE(std::string(tropical_last_error_message()).find("semiring"), std::string::npos);
    EXPECT_EQ(tropical_semiring_facts_of(static_cast<tropical_semiring>(-1), &f), TROPICAL_INVALID_ARGUMENT);
    EXPECT_EQ(tropical_semiring_facts_of(TROPICAL_MAXPLUS, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_EQ(tropical_dtype_facts_of(static_cast<tropical_dtype>(std::size(all_dtypes)), &d),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_EQ(tropical_dtype_facts_of(TROPICAL_F32, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_EQ(tropical_semiring_name(static_cast<tropical_semiring>(std::size(all_semirings))), nullptr);
}

}  // namespace
