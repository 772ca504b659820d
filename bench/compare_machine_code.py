#!/usr/bin/env python3
"""Compares the machine code of every kernel between two builds, with no GPU.

A redesign of the host side or of how the device code is put together must not change what the GPU
runs. Each build's warm-up tool compiles every kernel into an empty cache for one architecture; this
script reads each CUBIN (an ELF file) and compares, kernel by kernel, what decides what runs and how
it is launched: the machine code (.text.<kernel>) and its relocations, the kernel's attributes
(.nv.info.<kernel>: parameters, barriers, ...), its registers, stack and frame (.nv.info) and its
static shared memory (.nv.shared.<kernel>); symbol indices, which move when unrelated symbols are
added, are compared by name. Identical machine code and resources mean identical speed.

    python3 bench/compare_machine_code.py OLD/src/tools/tropical-gemm-warmup NEW/src/tools/tropical-gemm-warmup [--arch 90]

Prints one line per kernel and exits 1 if any differs or is missing from one side.

NVRTC's PTX for the Wide kernels is not the same from run to run (the same instructions with other
virtual register numbers; seen with CUDA 13.0 at b4b4591 and after), and ptxas now and then turns
that into other machine code for one of them. A Wide kernel that differs is a change only if it
differs again in a second run.
"""

from __future__ import annotations

import argparse
import pathlib
import struct
import subprocess
import sys
import tempfile

HEADER = 48  # the cache entry's header (src/cache/entry_format.hpp); the CUBIN follows it

# .nv.info attributes (format 4: symbol index, value) that describe one kernel's resources.
RESOURCES = {0x2F: "registers", 0x23: "max stack", 0x12: "min stack", 0x11: "frame size"}
PARAM_CBANK = 0x0A  # per-kernel: the symbol of its parameter bank, then offset and size


class Cubin:
    """The sections and symbols of a CUBIN (a 64-bit little-endian ELF file)."""

    def __init__(self, elf: bytes):
        if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
            raise ValueError("not a 64-bit little-endian ELF file")
        shoff, = struct.unpack_from("<Q", elf, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
        headers = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
        names = elf[headers[shstrndx][4]:]
        self.sections: dict[str, bytes] = {}
        self.sizes: dict[str, int] = {}
        for (name, kind, _flags, _addr, offset, size, *_rest) in headers:
            title = names[name:names.index(b"\0", name)].decode()
            self.sizes[title] = size
            self.sections[title] = b"" if kind == 8 else elf[offset:offset + size]  # 8: NOBITS, no bytes in the file
        strtab, symtab = self.sections.get(".strtab", b""), self.sections.get(".symtab", b"")
        self.symbols = [strtab[n:strtab.index(b"\0", n)].decode()
                        for (n, *_rest) in struct.iter_unpack("<IBBHQQ", symtab)]

    def info_records(self, section: str) -> list[tuple[int, bytes]]:
        data, out, i = self.sections.get(section, b""), [], 0
        while i < len(data):
            form, attr = data[i], data[i + 1]
            size = struct.unpack_from("<H", data, i + 2)[0] if form == 4 else 2
            start = i + 4 if form == 4 else i + 2
            out.append((attr, data[start:start + size]))
            i = start + size
        return out

    def machine_code(self, kernel: str) -> dict[str, object]:
        """What decides how the kernel runs, with symbol indices replaced by names."""
        named = lambda index: self.symbols[index] if index < len(self.symbols) else index
        out: dict[str, object] = {
            "code": self.sections.get(f".text.{kernel}"),
            "shared memory": self.sizes.get(f".nv.shared.{kernel}", 0),
            "relocations": [(offset, named(info >> 32), info & 0xFFFFFFFF, addend) for offset, info, addend
                            in struct.iter_unpack("<QQq", self.sections.get(f".rela.text.{kernel}", b""))],
        }
        records = []
        for attr, value in self.info_records(f".nv.info.{kernel}"):
            if attr == PARAM_CBANK:
                value = (named(struct.unpack_from("<I", value)[0]), value[4:])
            records.append((attr, value))
        out["attributes"] = records
        for attr, value in self.info_records(".nv.info"):
            if attr in RESOURCES and len(value) == 8:
                symbol, amount = struct.unpack("<II", value)
                if named(symbol) == kernel:
                    out[RESOURCES[attr]] = amount
        return out


def warm(tool: str, arch: int, folder: pathlib.Path) -> dict[str, bytes]:
    """Kernel name -> CUBIN, as this tool compiles every kernel into an empty cache."""
    subprocess.run([tool, "--cache-dir", str(folder), "--arch", f"sm_{arch}", "-q"], check=True)
    out = {}
    for entry in (folder / "v1" / f"sm_{arch}").glob("*.cubin"):
        kernel = entry.name.rsplit("-", 1)[0]
        out[kernel] = entry.read_bytes()[HEADER:]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old_tool")
    parser.add_argument("new_tool")
    parser.add_argument("--arch", type=int, default=90)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as old_dir, tempfile.TemporaryDirectory() as new_dir:
        old = warm(args.old_tool, args.arch, pathlib.Path(old_dir))
        new = warm(args.new_tool, args.arch, pathlib.Path(new_dir))
    differ = 0
    for kernel in sorted(old.keys() | new.keys()):
        if kernel not in old or kernel not in new:
            print(f"{kernel:36} only in the {'new' if kernel in new else 'old'} build")
            differ += 1
            continue
        a, b = Cubin(old[kernel]).machine_code(kernel), Cubin(new[kernel]).machine_code(kernel)
        changed = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
        summary = f"{len(a['code'] or b'')} bytes of code, {a.get('registers', '?')} registers"
        print(f"{kernel:36} {'same' if not changed else 'DIFFERS in ' + ', '.join(changed)} ({summary})")
        differ += bool(changed)
    print(f"{len(old | new)} kernels for sm_{args.arch}: {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
