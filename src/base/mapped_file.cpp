#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/byte_size.h"
#include "base/error.h"

namespace skiff {
namespace {

// Closes the descriptor however the constructor exits.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

}  // namespace

MappedFile::MappedFile(const std::string& path, FileLoad mode) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) fail("cannot open {}: {}", path, std::strerror(errno));
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) fail("cannot open {}: not a regular file", path);
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) return;
  if (mode == FileLoad::kCopy) {
    read_into_anonymous_memory(fd);
    return;
  }
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) fail("cannot map {}: {}", path, std::strerror(errno));
  mapping_ = p;
  data_ = static_cast<const uint8_t*>(p);
}

void MappedFile::read_into_anonymous_memory(int fd) {
  // Refused before reading, not killed part way through it.
  const size_t available = available_memory_bytes();
  if (available && size_ > available)
    fail("{} needs {:.2f} GiB in memory but {:.2f} GiB is available: free memory, or use --mmap to read "
         "the weights from the file as they are used",
         path_, size_ / 1073741824.0, available / 1073741824.0);
  copy_ = HugePageBuffer(size_);
  uint8_t* dst = copy_.data();
  for (size_t done = 0; done < size_;) {
    const ssize_t n = ::pread(fd, dst + done, size_ - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot read {}: {}", path_, n < 0 ? std::strerror(errno) : "unexpected end of file");
    done += static_cast<size_t>(n);
  }
  ::mprotect(dst, size_, PROT_READ);
  data_ = dst;
}

uint8_t* MappedFile::unseal() {
  if (!copy_.data()) return nullptr;
  if (::mprotect(copy_.data(), size_, PROT_READ | PROT_WRITE) != 0)
    fail("cannot make {} writable: {}", path_, std::strerror(errno));
  unsealed_ = true;
  return copy_.data();
}

void MappedFile::seal() {
  // A failure leaves the copy writable: only the guard against stray writes is lost.
  if (unsealed_) ::mprotect(copy_.data(), size_, PROT_READ);
  unsealed_ = false;
}

void MappedFile::release(const uint8_t* begin, size_t n) const {
  if (begin < data_ || n > size_ || begin - data_ > static_cast<ptrdiff_t>(size_ - n))
    fail("{}: bytes to release lie outside the file", path_);
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(begin) + n) / page * page;
  // A failure only keeps the memory in use.
  if (end > first) ::madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (mapping_) ::munmap(mapping_, size_);
}

}  // namespace skiff
