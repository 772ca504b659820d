#pragma once
// What ptxas recorded of one kernel in a CUBIN (a 64-bit little-endian ELF file): the block size its
// launch bounds promise, its registers, its register cap and its static shared memory. The tests hold
// them against the kernel's catalogue row; bench/compare_machine_code.py reads the same records.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tropical::testing {

struct KernelResources {
    std::optional<std::uint32_t> max_threads;    // EIATTR_MAX_THREADS (.nv.info.<kernel>): x of the launch bounds
    std::optional<std::uint32_t> max_registers;  // EIATTR_MAXREG_COUNT: the cap the launch bounds give ptxas
    std::optional<std::uint32_t> registers;      // EIATTR_REGCOUNT (.nv.info): what the kernel uses
    std::uint64_t static_shared_bytes = 0;       // the size of .nv.shared.<kernel>
};

namespace cubin_detail {

template <class T>
T read(std::span<const std::byte> bytes, std::size_t at) {
    T value{};
    if (at + sizeof(T) <= bytes.size()) std::memcpy(&value, bytes.data() + at, sizeof(T));
    return value;
}

// Each record of an .nv.info section: a format byte, an attribute byte, then (format 4) a 16-bit size
// and that many bytes, or (other formats) two bytes. Calls f(attribute, value bytes).
template <class F>
void for_each_record(std::span<const std::byte> data, F&& f) {
    for (std::size_t i = 0; i + 2 <= data.size();) {
        const auto form = static_cast<std::uint8_t>(data[i]), attribute = static_cast<std::uint8_t>(data[i + 1]);
        const std::size_t size = form == 4 ? read<std::uint16_t>(data, i + 2) : 2;
        const std::size_t start = i + (form == 4 ? 4 : 2);
        if (start + size > data.size()) return;
        f(attribute, data.subspan(start, size));
        i = start + size;
    }
}

}  // namespace cubin_detail

// The records of `kernel`, or nothing where `elf` is no 64-bit little-endian ELF file.
inline std::optional<KernelResources> kernel_resources(std::span<const std::byte> elf, std::string_view kernel) {
    using cubin_detail::read;
    if (elf.size() < 64 ||
        std::memcmp(elf.data(),
                    "\x7f"
                    "ELF",
                    4) != 0 ||
        read<std::uint8_t>(elf, 4) != 2 || read<std::uint8_t>(elf, 5) != 1)
        return std::nullopt;
    const auto shoff = read<std::uint64_t>(elf, 0x28);
    const auto shentsize = read<std::uint16_t>(elf, 0x3A), shnum = read<std::uint16_t>(elf, 0x3C),
               shstrndx = read<std::uint16_t>(elf, 0x3E);
    struct Section {
        std::string name;
        std::uint32_t type;
        std::uint64_t offset, size;
    };
    std::vector<Section> sections;
    const auto header = [&](std::size_t i) { return shoff + i * shentsize; };
    const auto names_at = read<std::uint64_t>(elf, header(shstrndx) + 0x18);
    for (std::size_t i = 0; i < shnum; ++i) {
        const auto h = header(i);
        std::string name;
        for (auto at = names_at + read<std::uint32_t>(elf, h); at < elf.size() && elf[at] != std::byte{0}; ++at)
            name += static_cast<char>(elf[at]);
        sections.push_back({name, read<std::uint32_t>(elf, h + 4), read<std::uint64_t>(elf, h + 0x18),
                            read<std::uint64_t>(elf, h + 0x20)});
    }
    const auto bytes_of = [&](const std::string& name) -> std::span<const std::byte> {
        for (const auto& s : sections)
            if (s.name == name && s.type != 8 /* NOBITS */ && s.offset + s.size <= elf.size())
                return elf.subspan(s.offset, s.size);
        return {};
    };
    // The kernel's symbol index, for the records of .nv.info that name it.
    std::optional<std::uint32_t> symbol;
    const auto symtab = bytes_of(".symtab"), strtab = bytes_of(".strtab");
    for (std::size_t i = 0; i * 24 + 24 <= symtab.size(); ++i) {
        std::string name;
        for (auto at = read<std::uint32_t>(symtab, i * 24); at < strtab.size() && strtab[at] != std::byte{0}; ++at)
            name += static_cast<char>(strtab[at]);
        if (name == kernel) symbol = static_cast<std::uint32_t>(i);
    }

    KernelResources out;
    const std::string own = std::string(".nv.info.") + std::string(kernel);
    cubin_detail::for_each_record(bytes_of(own), [&](std::uint8_t attribute, std::span<const std::byte> value) {
        if (attribute == 0x05 && value.size() >= 4) out.max_threads = read<std::uint32_t>(value, 0);
        if (attribute == 0x1b && value.size() >= 2) out.max_registers = read<std::uint16_t>(value, 0);
    });
    cubin_detail::for_each_record(bytes_of(".nv.info"), [&](std::uint8_t attribute, std::span<const std::byte> value) {
        if (attribute == 0x2f && value.size() == 8 && symbol && read<std::uint32_t>(value, 0) == *symbol)
            out.registers = read<std::uint32_t>(value, 4);
    });
    for (const auto& s : sections)
        if (s.name == std::string(".nv.shared.") + std::string(kernel)) out.static_shared_bytes = s.size;
    return out;
}

}  // namespace tropical::testing
