// What `blockbloom doctor FILE` reads from a program or shared library:
// whether libblockbloom_preload.so (docs/PRELOAD.md) can reach the LevelDB
// Bloom filter it asks for. Reads the file's ELF section headers, dynamic
// and static symbol tables, dynamic relocations and DT_NEEDED / DT_SONAME
// entries (64-bit little-endian ELF only: x86-64, AArch64, ...). Every read
// is bounds-checked against the bytes given; the work is linear in their
// size.
//
// Thread-safety: pure functions.
#ifndef BLOCKBLOOM_TOOL_ELF_DOCTOR_H_
#define BLOCKBLOOM_TOOL_ELF_DOCTOR_H_

#include <string>
#include <string_view>
#include <vector>

namespace blockbloom {
namespace tool {

// leveldb::NewBloomFilterPolicy(int), mangled, and LevelDB's C wrapper of it.
inline constexpr char kNewBloomSymbol[] = "_ZN7leveldb20NewBloomFilterPolicyEi";
inline constexpr char kCreateBloomSymbol[] = "leveldb_filterpolicy_create_bloom";

struct ElfReport {
  std::string error;                 // non-empty: not a 64-bit little-endian ELF file it could read
  std::string soname;                // DT_SONAME, "" if none
  std::vector<std::string> leveldb;  // DT_NEEDED entries naming a libleveldb
  // kNewBloomSymbol / kCreateBloomSymbol undefined in .dynsym: called
  // through the dynamic linker, from a shared libleveldb.
  bool imports_new_bloom = false;
  bool imports_create_bloom = false;
  // kNewBloomSymbol defined in .dynsym (exported) or in .symtab (any
  // binding; .symtab is gone from a stripped file).
  bool exports_new_bloom = false;
  bool defines_new_bloom = false;
  bool has_symtab = false;
  // A dynamic relocation (PLT slot or GOT entry) names kNewBloomSymbol: the
  // file's own calls to it go through the dynamic linker (in libleveldb:
  // leveldb_filterpolicy_create_bloom's call can be replaced).
  bool relocates_new_bloom = false;
  // The bytes "leveldb.BuiltinBloomFilter2", the built-in policy's Name(),
  // appear in the file: it contains LevelDB's Bloom filter code (or another
  // policy answering to that name, such as blockbloom's migrating one).
  bool has_builtin_name = false;
};

// `bytes` is the whole file.
ElfReport ExamineElf(std::string_view bytes);

}  // namespace tool
}  // namespace blockbloom

#endif  // BLOCKBLOOM_TOOL_ELF_DOCTOR_H_
