#include "elf_doctor.h"

#include <elf.h>

#include <cstdint>
#include <cstring>

namespace blockbloom {
namespace tool {
namespace {

// A section's bytes, or empty if its header points outside the file.
struct Section {
  Elf64_Shdr header{};
  std::string_view bytes;
};

// Reads a T at `offset` if the whole T lies inside `bytes`.
template <typename T>
bool ReadAt(std::string_view bytes, uint64_t offset, T* out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(out, bytes.data() + offset, sizeof(T));
  return true;
}

// The NUL-terminated string at `offset` of a string table; "" when it is
// outside the table or not terminated inside it.
std::string_view StringAt(std::string_view table, uint64_t offset) {
  if (offset >= table.size()) return {};
  const std::string_view rest = table.substr(offset);
  const size_t end = rest.find('\0');
  return end == std::string_view::npos ? std::string_view() : rest.substr(0, end);
}

bool IsLevelDb(std::string_view library) { return library.rfind("libleveldb", 0) == 0; }

}  // namespace

ElfReport ExamineElf(std::string_view bytes) {
  ElfReport report;
  Elf64_Ehdr eh;
  if (!ReadAt(bytes, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    report.error = "not an ELF file";
    return report;
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    report.error = "not a 64-bit little-endian ELF file";
    return report;
  }
  if (eh.e_shnum == 0 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > bytes.size() ||
      (bytes.size() - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum) {
    report.error = "no section headers inside the file";
    return report;
  }
  std::vector<Section> sections(eh.e_shnum);
  for (size_t i = 0; i < sections.size(); ++i) {
    Section& s = sections[i];
    ReadAt(bytes, eh.e_shoff + i * sizeof(Elf64_Shdr), &s.header);
    if (s.header.sh_type != SHT_NOBITS && s.header.sh_offset <= bytes.size() &&
        bytes.size() - s.header.sh_offset >= s.header.sh_size) {
      s.bytes = bytes.substr(s.header.sh_offset, s.header.sh_size);
    }
  }
  auto linked = [&](const Section& s) -> std::string_view {
    return s.header.sh_link < sections.size() ? sections[s.header.sh_link].bytes
                                              : std::string_view();
  };
  // The symbol tables; .dynsym's indices are what dynamic relocations name.
  std::vector<std::string_view> dynsym_names;
  for (const Section& s : sections) {
    const bool dynamic = s.header.sh_type == SHT_DYNSYM;
    if (!dynamic && s.header.sh_type != SHT_SYMTAB) continue;
    if (!dynamic) report.has_symtab = true;
    const std::string_view names = linked(s);
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= s.bytes.size(); off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      ReadAt(s.bytes, off, &sym);
      const std::string_view name = StringAt(names, sym.st_name);
      if (dynamic) dynsym_names.push_back(name);
      const bool defined = sym.st_shndx != SHN_UNDEF;
      if (name == kNewBloomSymbol) {
        if (defined) {
          report.defines_new_bloom = true;
          if (dynamic) report.exports_new_bloom = true;
        } else if (dynamic) {
          report.imports_new_bloom = true;
        }
      } else if (name == kCreateBloomSymbol && !defined && dynamic) {
        report.imports_create_bloom = true;
      }
    }
  }
  for (const Section& s : sections) {
    const bool rela = s.header.sh_type == SHT_RELA;
    if (s.header.sh_type == SHT_DYNAMIC) {
      const std::string_view names = linked(s);
      for (uint64_t off = 0; off + sizeof(Elf64_Dyn) <= s.bytes.size(); off += sizeof(Elf64_Dyn)) {
        Elf64_Dyn dyn;
        ReadAt(s.bytes, off, &dyn);
        if (dyn.d_tag == DT_NULL) break;
        const std::string_view name = StringAt(names, dyn.d_un.d_val);
        if (dyn.d_tag == DT_NEEDED && IsLevelDb(name)) report.leveldb.emplace_back(name);
        if (dyn.d_tag == DT_SONAME) report.soname = std::string(name);
      }
    } else if ((rela || s.header.sh_type == SHT_REL) && s.header.sh_link < sections.size() &&
               sections[s.header.sh_link].header.sh_type == SHT_DYNSYM) {
      const size_t entry = rela ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
      for (uint64_t off = 0; off + entry <= s.bytes.size(); off += entry) {
        Elf64_Rel rel;  // r_offset and r_info lead both layouts
        ReadAt(s.bytes, off, &rel);
        const uint64_t index = ELF64_R_SYM(rel.r_info);
        if (index != 0 && index < dynsym_names.size() && dynsym_names[index] == kNewBloomSymbol) {
          report.relocates_new_bloom = true;
        }
      }
    }
  }
  report.has_builtin_name = bytes.find("leveldb.BuiltinBloomFilter2") != std::string_view::npos;
  return report;
}

}  // namespace tool
}  // namespace blockbloom
