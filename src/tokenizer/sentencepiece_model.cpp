// Tokenizer::from_sentencepiece_model: reads SentencePiece's tokenizer.model,
// a protobuf ModelProto, with a small bounds-checked wire-format reader. Only
// the fields a tokenizer needs are read; all others are skipped.
#include <cstring>
#include <filesystem>

#include "base/error.h"
#include "tokenizer/hf_files.h"
#include "tokenizer/tokenizer.h"

namespace skiff {

namespace {

enum class WireType : uint8_t { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

struct ProtoField {
  uint32_t number = 0;
  WireType wire_type = WireType::Varint;
  uint64_t value = 0;      // Varint, Fixed64, Fixed32
  std::string_view bytes;  // Bytes
};

// Walks the fields of one message; every length is checked against what is left.
class ProtoReader {
 public:
  explicit ProtoReader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ == data_.size(); }

  ProtoField next() {
    const uint64_t key = varint();
    ProtoField field;
    if (key >> 3 == 0 || key >> 3 > UINT32_MAX) fail("bad protobuf field number {}", key >> 3);
    field.number = static_cast<uint32_t>(key >> 3);
    switch (key & 7) {
      case 0:
        field.wire_type = WireType::Varint;
        field.value = varint();
        break;
      case 1:
        field.wire_type = WireType::Fixed64;
        field.value = fixed(8);
        break;
      case 2: {
        field.wire_type = WireType::Bytes;
        const uint64_t length = varint();
        if (length > data_.size() - pos_) fail("protobuf field {} runs past the end of its message", field.number);
        field.bytes = data_.substr(pos_, length);
        pos_ += length;
        break;
      }
      case 5:
        field.wire_type = WireType::Fixed32;
        field.value = fixed(4);
        break;
      default:
        fail("unsupported protobuf wire type {} (field {})", key & 7, field.number);
    }
    return field;
  }

 private:
  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) fail("truncated protobuf varint");
      const auto byte = static_cast<uint8_t>(data_[pos_++]);
      value |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if (!(byte & 0x80)) return value;
    }
    fail("protobuf varint longer than 10 bytes");
  }

  uint64_t fixed(size_t size) {
    if (size > data_.size() - pos_) fail("truncated protobuf fixed-width value");
    uint64_t value = 0;
    for (size_t i = 0; i < size; ++i) value |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
    pos_ += size;
    return value;
  }

  std::string_view data_;
  size_t pos_ = 0;
};

void expect_wire_type(const ProtoField& field, WireType type, const char* message) {
  if (field.wire_type != type) fail("{} field {} has the wrong wire type", message, field.number);
}

float as_float(const ProtoField& field) {
  const auto bits = static_cast<uint32_t>(field.value);
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// int32 fields: negative values are sign-extended to 64 bits on the wire.
int32_t as_int32(const ProtoField& field) { return static_cast<int32_t>(static_cast<int64_t>(field.value)); }

// SentencePiece { piece = 1; score = 2; type = 3 }
void read_piece(std::string_view message, Vocab& vocab) {
  std::string text;
  float score = 0.0f;
  uint64_t type = static_cast<uint64_t>(TokenType::Normal);
  for (ProtoReader reader(message); !reader.done();) {
    const ProtoField field = reader.next();
    if (field.number == 1) {
      expect_wire_type(field, WireType::Bytes, "SentencePiece");
      text = field.bytes;
    } else if (field.number == 2) {
      expect_wire_type(field, WireType::Fixed32, "SentencePiece");
      score = as_float(field);
    } else if (field.number == 3) {
      expect_wire_type(field, WireType::Varint, "SentencePiece");
      type = field.value;
    }
  }
  const bool known_type = type >= 1 && type <= static_cast<uint64_t>(TokenType::Byte);
  vocab.texts.push_back(std::move(text));
  vocab.scores.push_back(score);
  vocab.types.push_back(known_type ? static_cast<TokenType>(type) : TokenType::Undefined);
}

// TrainerSpec { unk_id = 40; bos_id = 41; eos_id = 42; pad_id = 43 }
void read_trainer_spec(std::string_view message, Vocab& vocab) {
  for (ProtoReader reader(message); !reader.done();) {
    const ProtoField field = reader.next();
    int32_t* target = field.number == 40 ? &vocab.unk_id
                      : field.number == 41 ? &vocab.bos_id
                      : field.number == 42 ? &vocab.eos_id
                      : field.number == 43 ? &vocab.pad_id
                                           : nullptr;
    if (!target) continue;
    expect_wire_type(field, WireType::Varint, "TrainerSpec");
    *target = as_int32(field);
  }
}

// NormalizerSpec { add_dummy_prefix = 3 }
void read_normalizer_spec(std::string_view message, Vocab& vocab) {
  for (ProtoReader reader(message); !reader.done();) {
    const ProtoField field = reader.next();
    if (field.number != 3) continue;
    expect_wire_type(field, WireType::Varint, "NormalizerSpec");
    vocab.add_space_prefix = field.value != 0;
  }
}

// ModelProto { repeated pieces = 1; trainer_spec = 2; normalizer_spec = 3 }
Vocab read_model_proto(std::string_view data) {
  Vocab vocab;
  vocab.kind = VocabKind::Spm;
  // SentencePiece's defaults for fields the file leaves out.
  vocab.unk_id = 0;
  vocab.bos_id = 1;
  vocab.eos_id = 2;
  vocab.add_bos = true;
  vocab.add_space_prefix = true;
  for (ProtoReader reader(data); !reader.done();) {
    const ProtoField field = reader.next();
    if (field.number < 1 || field.number > 3) continue;
    expect_wire_type(field, WireType::Bytes, "ModelProto");
    if (field.number == 1) read_piece(field.bytes, vocab);
    if (field.number == 2) read_trainer_spec(field.bytes, vocab);
    if (field.number == 3) read_normalizer_spec(field.bytes, vocab);
  }
  if (vocab.texts.empty()) fail("no pieces (not a SentencePiece model?)");
  const auto n = static_cast<int32_t>(vocab.texts.size());
  for (int32_t* id : {&vocab.unk_id, &vocab.bos_id, &vocab.eos_id, &vocab.pad_id}) {
    if (*id >= n) fail("special id {} is outside the {} pieces", *id, n);
    if (*id < 0) *id = -1;
  }
  return vocab;
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_sentencepiece_model(const std::string& path) {
  return hf::load_tokenizer_file(
      path, [](const std::string& p) { return read_model_proto(hf::read_file(p)); });
}

}  // namespace skiff
