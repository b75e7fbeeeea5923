#include "convert/quantize.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "base/error.h"
#include "base/timer.h"
#include "convert/model_source.h"
#include "gguf/gguf_writer.h"
#include "kernels/quant/quant.h"

namespace skiff::convert {
namespace {

namespace fs = std::filesystem;

bool whole_blocks(DType type, int64_t cols) {
  return cols % static_cast<int64_t>(dtype_info(type).block_size) == 0;
}

// Source row of output row r: an interleaved GGUF head holds pair i in rows
// 2i, 2i+1; the HF head holds it in rows i and i + head_dim/2
// (llama.cpp's permute() in convert_hf_to_gguf.py).
int64_t source_row(const SourceTensor& t, int64_t r) {
  if (t.interleave_heads == 0) return r;
  const int64_t head_dim = t.rows() / t.interleave_heads;
  const int64_t head = r / head_dim, i = r % head_dim;
  return head * head_dim + (i % 2) * (head_dim / 2) + i / 2;
}

std::vector<uint8_t> convert_tensor(const SourceTensor& t, DType out_type) {
  const int64_t rows = t.rows(), cols = t.cols();
  const size_t out_row = row_bytes(out_type, cols);
  std::vector<uint8_t> out(out_row * static_cast<size_t>(rows));
#pragma omp parallel
  {
    std::vector<float> row(out_type == t.type ? 0 : static_cast<size_t>(cols));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const uint8_t* src = t.row(source_row(t, r));
      uint8_t* dst = out.data() + static_cast<size_t>(r) * out_row;
      if (out_type == t.type) {
        std::memcpy(dst, src, out_row);  // no re-rounding of a type kept as it is
      } else {
        dequantize_row(t.type, src, row.data(), cols);
        quantize_row(out_type, row.data(), dst, cols);
      }
    }
  }
  return out;
}

// The output types of llama.cpp's convert_hf_to_gguf.py (--outtype), which
// writes a checkpoint's MXFP4 experts as they are under each of them.
bool hf_converter_type(DType type) {
  return type == DType::F32 || type == DType::F16 || type == DType::BF16 || type == DType::Q8_0;
}

std::string shape(const std::vector<int64_t>& ne) {
  std::string s;
  for (int64_t d : ne) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return "[" + s + "]";
}

// The file type written: a checkpoint's MXFP4 experts kept under F32, F16 or
// BF16 make it MXFP4_MOE, as convert_hf_to_gguf.py names it (under Q8_0 it
// stays Q8_0, as there).
gguf::FileType written_file_type(const ModelSource& source, const gguf::FileType& type) {
  const bool float_type = !type.medium && !type.moe &&
                          (type.base == DType::F32 || type.base == DType::F16 || type.base == DType::BF16);
  const bool keeps_mxfp4 = std::any_of(source.tensors.begin(), source.tensors.end(), [](const SourceTensor& t) {
    return t.stored_quantized && t.type == DType::MXFP4;
  });
  return float_type && keeps_mxfp4 ? gguf::FileType::mxfp4_moe() : type;
}

void set_metadata(gguf::GgufWriter& w, const ModelSource& source, const gguf::FileType& type) {
  for (const auto& [key, value] : source.metadata) w.set(key, value);
  w.set("general.file_type", gguf::make_uint(gguf::ValueType::UINT32, type.id()));
  w.set("general.quantization_version", gguf::make_uint(gguf::ValueType::UINT32, 2));
}

// What a mix's rule needs to know of the source (gguf/file_type.h).
gguf::MixModel mix_model_of(const ModelSource& source) {
  std::vector<std::string> names;
  for (const SourceTensor& t : source.tensors) names.push_back(t.name);
  gguf::MixModel model = gguf::mix_model_of(names);
  std::string arch;
  for (const auto& [key, value] : source.metadata)
    if (key == "general.architecture") arch = value.as_string();
  int64_t heads = 0, kv_heads = 0, experts = 0;
  for (const auto& [key, value] : source.metadata) {
    if (key == arch + ".attention.head_count") heads = value.as_int();
    if (key == arch + ".attention.head_count_kv") kv_heads = value.as_int();
    if (key == arch + ".expert_count") experts = value.as_int();
  }
  model.grouped_kv = kv_heads > 0 && kv_heads < heads;
  model.n_experts = static_cast<int>(std::clamp<int64_t>(experts, 0, 1 << 20));
  return model;
}

void check_paths(const std::string& in, const std::string& out) {
  std::error_code ec;
  if (fs::exists(out) && fs::equivalent(in, out, ec))
    fail("the output {} is the input; write to another file", out);
}

}  // namespace

DType fallback_type(DType target) {
  switch (target) {
    case DType::Q2_K: case DType::Q3_K: case DType::IQ4_XS: return DType::IQ4_NL;
    case DType::Q4_K: return DType::Q5_0;
    case DType::Q5_K: return DType::Q5_1;
    default: return DType::Q8_0;  // Q6_K, as llama-quantize; for the others skiff's choice
  }
}

DType tensor_type(DType target, const std::string& name, const std::vector<int64_t>& ne) {
  // Vectors and biases (gpt-oss's experts' are [n_experts, width]) stay F32, as llama-quantize keeps them.
  if (ne.size() < 2 || name.ends_with(".bias")) return DType::F32;
  if (whole_blocks(target, ne[0])) return target;
  const DType fallback = fallback_type(target);
  return whole_blocks(fallback, ne[0]) ? fallback : DType::F16;
}

QuantizeSummary quantize_model(const std::string& in, const std::string& out, const gguf::FileType& type) {
  Timer timer;
  check_paths(in, out);
  if (!can_quantize(type.base)) fail("skiff cannot write {} (it reads it)", dtype_info(type.base).name);
  const ModelSource source = open_source(in);
  gguf::GgufWriter writer;
  set_metadata(writer, source, written_file_type(source, type));
  QuantizeSummary summary;
  summary.input_bytes = source.input_bytes;
  summary.n_tensors = static_cast<int>(source.tensors.size());
  const gguf::MixModel model = mix_model_of(source);
  for (size_t i = 0; i < source.tensors.size(); ++i) {
    const SourceTensor& t = source.tensors[i];
    const DType target = type.matrix_type(t.name, model);
    const bool kept = t.stored_quantized && hf_converter_type(target);
    const DType out_type = kept ? t.type : tensor_type(target, t.name, t.ne);
    std::string note = kept ? " (stored so in the checkpoint: kept)" : "";
    const bool matrix = t.ne.size() >= 2 && !t.name.ends_with(".bias");  // vectors and biases stay F32
    if (matrix && !kept && out_type != target) {
      ++summary.n_fallbacks;
      note = fmt::format(" (rows of {} are not whole {} blocks of {}: fallback)", t.cols(),
                         dtype_info(target).name, dtype_info(target).block_size);
    }
    writer.add_tensor(t.name, out_type, t.ne, [&, i, out_type, note] {
      fmt::print(stderr, "quantize: [{:4}/{}] {:32} {:18} {:5} -> {}{}\n", i + 1, source.tensors.size(),
                 t.name, shape(t.ne), dtype_info(t.type).name, dtype_info(out_type).name, note);
      return convert_tensor(t, out_type);
    });
  }
  writer.write(out);
  summary.output_bytes = fs::file_size(out);
  summary.seconds = timer.seconds();
  return summary;
}

}  // namespace skiff::convert
