"""A tiny x86-64 Linux program, built here so that the attacks need no binary
from outside their folder (the sandbox lets a strategy read only its own)."""
import struct

LOADER = b"/lib64/ld-linux-x86-64.so.2"  # the x86-64 ABI's fixed path


def tiny_elf(message, exit_code=0):
    """Returns a position-independent ELF executable that writes message to
    stdout and exits with exit_code, linked like any dynamic program (an
    interpreter, a dynamic section with an empty symbol table) so that both
    the kernel (execve FILE) and the dynamic loader (ld.so FILE) run it. The
    loader maps it itself: the file needs no execute permission. (glibc's
    loader hands a program without an interpreter back to execve.)"""
    code = bytearray()
    code += b"\xbf\x01\x00\x00\x00"  # mov edi, 1
    code += b"\x48\x8d\x35\x00\x00\x00\x00"  # lea rsi, [rip + message]
    lea_end = len(code)
    code += b"\xba" + struct.pack("<I", len(message))  # mov edx, len(message)
    code += b"\xb8\x01\x00\x00\x00"  # mov eax, 1 (write)
    code += b"\x0f\x05"  # syscall
    code += b"\xbf" + struct.pack("<I", exit_code)  # mov edi, exit_code
    code += b"\xb8\x3c\x00\x00\x00"  # mov eax, 60 (exit)
    code += b"\x0f\x05"  # syscall
    code[lea_end - 4:lea_end] = struct.pack("<i", len(code) - lea_end)
    code += message
    code += b"\0" * (-len(code) % 8)
    interp = LOADER + b"\0" * (8 - len(LOADER) % 8)
    headers = 64 + 5 * 56
    entry = headers + len(interp)
    symtab = entry + len(code)  # one null symbol (24 bytes); its first byte is also the empty string table
    dynamic = symtab + 24
    entries = ((5, symtab), (6, symtab), (10, 1), (11, 24), (0, 0))  # DT_STRTAB, DT_SYMTAB, DT_STRSZ, DT_SYMENT, DT_NULL
    size = dynamic + 16 * len(entries)
    elf_header = struct.pack("<4s5B7xHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0,  # 64-bit, little-endian
                             3, 62, 1, entry, 64, 0, 0, 64, 56, 5, 0, 0, 0)  # ET_DYN, x86-64, 5 program headers
    program_headers = b"".join(struct.pack("<IIQQQQQQ", *h) for h in (
        (6, 4, 64, 64, 64, headers - 64, headers - 64, 8),  # PT_PHDR
        (3, 4, headers, headers, headers, len(LOADER) + 1, len(LOADER) + 1, 1),  # PT_INTERP
        # PT_LOAD of the whole file, writable because the loader relocates
        # the dynamic section in place.
        (1, 7, 0, 0, 0, size, size, 0x1000),
        (2, 6, dynamic, dynamic, dynamic, size - dynamic, size - dynamic, 8),  # PT_DYNAMIC
        (0x6474E551, 6, 0, 0, 0, 0, 0, 16),  # PT_GNU_STACK, not executable
    ))
    return (elf_header + program_headers + interp + bytes(code) + b"\0" * 24
            + b"".join(struct.pack("<qQ", tag, value) for tag, value in entries))
