#include <gtest/gtest.h>

#include <string_view>

#include "cache/entry_format.hpp"

using namespace tropical::detail;

namespace {

std::vector<std::byte> payload(std::string_view text) {
    return {reinterpret_cast<const std::byte*>(text.data()),
            reinterpret_cast<const std::byte*>(text.data()) + text.size()};
}

const CacheKey kKey{0x1234, 0x5678};
const EntryKind kCubin = EntryKind::Cubin;

}  // namespace

TEST(EntryFormat, RoundTrips) {
    const auto bytes = encode_entry(EntryKind::Cubin, kKey, payload("machine code"));
    ASSERT_EQ(bytes.size(), kEntryHeaderSize + 12);
    const auto entry = decode_entry(bytes, &kKey, &kCubin);
    ASSERT_EQ(entry.check, EntryCheck::Valid);
    EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(entry.payload.data()), entry.payload.size()),
              "machine code");
}

TEST(EntryFormat, EmptyPayloadIsValid) {
    const auto bytes = encode_entry(EntryKind::Ptx, kKey, {});
    EXPECT_EQ(decode_entry(bytes).check, EntryCheck::Valid);
}

TEST(EntryFormat, EveryFlippedByteIsDetected) {
    const auto good = encode_entry(EntryKind::Cubin, kKey, payload("0123456789abcdef"));
    for (std::size_t i = 0; i < good.size(); ++i) {
        auto bad = good;
        bad[i] ^= std::byte{0x01};
        EXPECT_NE(decode_entry(bad, &kKey, &kCubin).check, EntryCheck::Valid) << "flipped byte " << i;
    }
}

TEST(EntryFormat, TruncationAndPaddingAreDetected) {
    const auto good = encode_entry(EntryKind::Cubin, kKey, payload("0123456789abcdef"));
    for (std::size_t size = 0; size < good.size(); ++size) {
        std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(size));
        EXPECT_NE(decode_entry(cut).check, EntryCheck::Valid) << "truncated to " << size;
    }
    auto padded = good;
    padded.push_back(std::byte{0});
    EXPECT_EQ(decode_entry(padded).check, EntryCheck::WrongLength);
    EXPECT_EQ(decode_entry({}).check, EntryCheck::TooShort);
}

TEST(EntryFormat, NamesWhatIsWrong) {
    auto bytes = encode_entry(EntryKind::Cubin, kKey, payload("x"));
    auto magic = bytes;
    magic[0] = std::byte{'X'};
    EXPECT_EQ(decode_entry(magic).check, EntryCheck::BadMagic);
    auto version = bytes;
    version[8] = std::byte{0};  // an older format
    EXPECT_EQ(decode_entry(version).check, EntryCheck::WrongFormatVersion);
    const CacheKey other{1, 2};
    EXPECT_EQ(decode_entry(bytes, &other).check, EntryCheck::WrongKey);
    const EntryKind ptx = EntryKind::Ptx;
    EXPECT_EQ(decode_entry(bytes, &kKey, &ptx).check, EntryCheck::WrongKind);
    bytes.back() ^= std::byte{0xff};
    EXPECT_EQ(decode_entry(bytes).check, EntryCheck::BadChecksum);
    EXPECT_EQ(to_string(EntryCheck::BadChecksum), "corrupted (checksum mismatch)");
}
