//===- build_id.cc - The build of the running code -------------------------===//
#include "axle/base/build_id.h"

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace axle {
namespace {

struct Search {
  uintptr_t address = 0;  // an address inside the object we look for
  std::string id;
};

// The build ID note among the PT_NOTE segments of `info`, if `info` is the
// object holding search->address.
int FindBuildId(struct dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  bool contains = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + phdr.p_vaddr;
    if (phdr.p_type == PT_LOAD && search->address >= start &&
        search->address < start + phdr.p_memsz) {
      contains = true;
    }
  }
  if (!contains) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + phdr.p_vaddr);
    const uint8_t* end = p + phdr.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof(note));
      const uint8_t* name = p + sizeof(note);
      const uint8_t* desc = name + ((note.n_namesz + 3) & ~3u);
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0 && desc + note.n_descsz <= end) {
        static constexpr char kDigits[] = "0123456789abcdef";
        for (uint32_t k = 0; k < note.n_descsz; ++k) {
          search->id.push_back(kDigits[desc[k] >> 4]);
          search->id.push_back(kDigits[desc[k] & 15]);
        }
        return 1;
      }
      p = desc + ((note.n_descsz + 3) & ~3u);
    }
  }
  return 1;  // the right object, without a note
}

}  // namespace

const std::string& AxleBuildId() {
  static const std::string* id = [] {
    Search search;
    search.address = reinterpret_cast<uintptr_t>(&AxleBuildId);
    dl_iterate_phdr(FindBuildId, &search);
    return new std::string(std::move(search.id));
  }();
  return *id;
}

}  // namespace axle
