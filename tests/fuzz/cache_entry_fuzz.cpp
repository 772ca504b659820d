// Bytes read from a cache file, which anything may have written: the reader must reject what does
// not verify without reading out of bounds, and accept exactly what the writer produces.
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "cache/entry_format.hpp"
#include "cache/identity_record.hpp"
#include "targets.hpp"

namespace tropical::fuzz {

using namespace tropical::detail;

void fail(const char* what) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
    std::abort();
}

namespace {

void check_identity(std::string_view text) {
    const auto record = parse_identity(text);
    if (!record) return;
    // What parses, written again, parses to the same record.
    const auto again = parse_identity(serialise_identity(*record));
    if (!again || again->major != record->major || again->minor != record->minor || !(again->stamp == record->stamp))
        fail("identity record does not survive serialise/parse");
}

}  // namespace

int cache_entry(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::byte> bytes{reinterpret_cast<const std::byte*>(data), size};

    const DecodedEntry plain = decode_entry(bytes);
    if (plain.check != EntryCheck::Valid) {
        if (!plain.payload.empty()) fail("a rejected entry hands out a payload");
    } else {
        if (plain.payload.data() != bytes.data() + kEntryHeaderSize || plain.payload.size() != size - kEntryHeaderSize)
            fail("a valid entry's payload is not the bytes after the header");
        // Whatever verifies is exactly what the writer produces for that kind, key and payload.
        if (encode_entry(plain.kind, plain.key, plain.payload) != std::vector<std::byte>(bytes.begin(), bytes.end()))
            fail("a valid entry differs from its re-encoding");
    }
    // Expecting the header's own key and kind reaches the length and checksum checks; expecting
    // another key must reject.
    if (plain.check != EntryCheck::TooShort && plain.check != EntryCheck::BadMagic &&
        plain.check != EntryCheck::WrongFormatVersion) {
        const DecodedEntry same = decode_entry(bytes, &plain.key, &plain.kind);
        if (same.check != plain.check) fail("expecting the header's own key and kind changes the verdict");
        const CacheKey other{plain.key.high ^ 1, plain.key.low};
        if (decode_entry(bytes, &other, &plain.kind).check == EntryCheck::Valid) fail("another key's entry verifies");
    }
    if (plain.check == EntryCheck::Valid && plain.kind == EntryKind::Identity)
        check_identity({reinterpret_cast<const char*>(plain.payload.data()), plain.payload.size()});
    // The record's text on its own, too: a payload whose checksum matches may still be any text.
    check_identity({reinterpret_cast<const char*>(data), size});
    return 0;
}

}  // namespace tropical::fuzz
