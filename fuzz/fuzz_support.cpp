#include "fuzz_support.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include "gguf/gguf.h"

namespace skiff::fuzz {

MemoryFile::MemoryFile(const uint8_t* data, size_t size) {
  fd_ = memfd_create("fuzz-input", MFD_CLOEXEC);
  if (fd_ < 0) std::abort();  // the harness cannot run at all: not a finding
  for (size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd_, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

MemoryFile::~MemoryFile() { ::close(fd_); }

std::string models_dir() {
  const char* env = std::getenv("SKIFF_MODELS");
  return env && *env ? env : SKIFF_MODELS_DIR;
}

std::string shared_dir() { return models_dir() + "/.."; }

std::pair<std::string_view, std::string_view> split_at(std::string_view input, std::string_view sep) {
  const size_t at = input.find(sep);
  if (at == std::string_view::npos) return {input, {}};
  return {input.substr(0, at), input.substr(at + sep.size())};
}

namespace {

std::vector<int32_t> ids_of_bytes(std::string_view bytes, int32_t n_vocab, bool any_value) {
  std::vector<int32_t> ids(bytes.size() / 4);
  if (!ids.empty()) std::memcpy(ids.data(), bytes.data(), ids.size() * 4);
  if (!any_value)
    for (int32_t& id : ids) id = static_cast<int32_t>(static_cast<uint32_t>(id) % static_cast<uint32_t>(n_vocab));
  return ids;
}

void decode_streamed(const Tokenizer& tokenizer, const std::vector<int32_t>& ids, bool at_text_start) {
  StreamDecoder stream(tokenizer, at_text_start);
  for (int32_t id : ids) stream.push(id);
  stream.flush();
}

}  // namespace

void exercise_tokenizer(const Tokenizer& tokenizer, std::string_view text, uint8_t flags) {
  const bool add_special = flags & 1, parse_special = flags & 2, render_control = flags & 4;
  refusing_errors([&] {
    const std::vector<int32_t> ids = tokenizer.encode(text, add_special, parse_special);
    tokenizer.decode(ids, render_control);
    decode_streamed(tokenizer, ids, !add_special);
  });
  const std::vector<int32_t> ids = ids_of_bytes(text, tokenizer.n_vocab(), flags & 8);
  refusing_errors([&] { tokenizer.decode(ids, render_control); });
  refusing_errors([&] { decode_streamed(tokenizer, ids, true); });
  for (int32_t id : ids) {
    refusing_errors([&] { tokenizer.token_to_piece(id, render_control); });
    refusing_errors([&] { tokenizer.token_text(id); });
  }
}

void fuzz_tokenizer_file(const uint8_t* data, size_t size,
                         std::unique_ptr<Tokenizer> (*load)(const std::string& path)) {
  const MemoryFile input(data, size);
  refusing_errors([&] { exercise_tokenizer(*load(input.path()), kSampleText, 3); });
}

void fuzz_vocabularies(std::span<const char* const> files, const uint8_t* data, size_t size) {
  if (size < 2) return;
  static std::map<size_t, std::unique_ptr<Tokenizer>> loaded;
  const size_t pick = data[0] % files.size();
  std::unique_ptr<Tokenizer>& tokenizer = loaded[pick];
  if (!tokenizer) tokenizer = Tokenizer::from_gguf(gguf::GgufFile(models_dir() + "/vocab/" + files[pick]));
  exercise_tokenizer(*tokenizer, {reinterpret_cast<const char*>(data) + 2, size - 2}, data[1]);
}

}  // namespace skiff::fuzz
