#include "safetensors.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <unordered_map>

#include "provkit/error.hpp"
#include "provkit/util/checked.hpp"

namespace provkit::checkpoint {

namespace {

using json = nlohmann::json;

Error bad(const std::string& path, HeaderRefusal reason, const std::string& what) {
  return input_error(reason, path, 0, "not a valid safetensors file: " + what);
}

bool mul_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  auto product = util::checked_mul(a, b);
  if (product) out = *product;
  return !product;
}

// The header read as SAX events, keeping only what a FileHeader holds: a header that is one huge array, or
// nests arrays a million deep, is refused at its first wrong token instead of being built as a DOM (which
// took 17 times the header's size). Memory: the tensors' names, shapes and the metadata strings.
class HeaderReader : public nlohmann::json_sax<json> {
 public:
  HeaderReader(const std::string& path, FileHeader& h, std::uint64_t data_start, std::uint64_t data_size)
      : path_(path), h_(h), data_start_(data_start), data_size_(data_size) {}

  bool null() override { return scalar(nullptr); }
  bool boolean(bool v) override { return scalar(v); }
  bool number_integer(number_integer_t v) override { return scalar(v); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(v); }
  bool number_float(number_float_t v, const string_t&) override { return scalar(v); }
  bool string(string_t& v) override { return scalar(v); }
  bool binary(binary_t&) override { return scalar(nullptr); }

  bool start_object(std::size_t) override {
    if (depth_ == 0) return ++depth_, true;
    if (depth_ == 1) {  // a tensor, or the metadata
      ++depth_;
      if (entry_name_ != "__metadata__") start_tensor();
      return true;
    }
    if (depth_ == 2 && in_metadata())
      throw bad(path_, HeaderRefusal::malformed, "__metadata__ value '" + key_ + "' is not a string");
    return nest();
  }
  bool end_object() override {
    if (depth_ == 2 && !in_metadata()) end_tensor();
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 0) throw bad(path_, HeaderRefusal::not_this_format, "the header is not a JSON object");
    if (depth_ == 1)
      throw bad(path_, HeaderRefusal::malformed,
                entry_name_ == "__metadata__" ? "__metadata__ is not an object" : where() + " is not an object");
    if (depth_ == 2 && in_metadata())
      throw bad(path_, HeaderRefusal::malformed, "__metadata__ value '" + key_ + "' is not a string");
    if (depth_ == 2 && (key_ == "shape" || key_ == "data_offsets")) {
      array_ = key_ == "shape" ? Array::shape : Array::offsets;
      (array_ == Array::shape ? has_shape_ : has_offsets_) = true;
      if (array_ == Array::offsets) offsets_.clear();
      else tensor_.shape.clear();
      ++depth_;
      return true;
    }
    return nest();
  }
  bool end_array() override {
    if (depth_ == 3) array_ = Array::none;  // the shape's or the offsets' own end
    --depth_;
    return true;
  }
  bool key(string_t& k) override {
    if (depth_ == 1) entry_name_ = k;
    else if (depth_ == 2) key_ = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    throw bad(path_, HeaderRefusal::not_this_format, "the header is not a JSON object");
  }

  void finish() {
    std::sort(h_.tensors.begin(), h_.tensors.end(), [](const Tensor& a, const Tensor& b) { return a.name < b.name; });
  }

 private:
  enum class Array { none, shape, offsets };
  // Values nested deeper than a tensor's fields are ignored (as the safetensors crate ignores unknown
  // fields), but only this deep.
  static constexpr int kMaxDepth = 64;

  bool in_metadata() const { return entry_name_ == "__metadata__"; }
  std::string where() const { return "tensor '" + entry_name_ + "'"; }
  bool nest() {
    if (depth_ == 3 && array_ != Array::none) (array_ == Array::shape ? bad_shape_ : bad_offsets_) = true;
    if (++depth_ > kMaxDepth)
      throw bad(path_, HeaderRefusal::too_large, "the header nests more than " + std::to_string(kMaxDepth) + " levels");
    return true;
  }

  template <class T>
  bool scalar(T&& v) {
    if (depth_ == 0) throw bad(path_, HeaderRefusal::not_this_format, "the header is not a JSON object");
    if (depth_ == 1)
      throw bad(path_, HeaderRefusal::malformed,
                in_metadata() ? "__metadata__ is not an object" : where() + " is not an object");
    if (depth_ == 2 && in_metadata()) {
      if constexpr (!std::is_same_v<std::decay_t<T>, std::string>) {
        throw bad(path_, HeaderRefusal::malformed, "__metadata__ value '" + key_ + "' is not a string");
      } else {
        h_.metadata[key_] = std::forward<T>(v);
        return true;
      }
    }
    if (depth_ == 2 && key_ == "dtype") {
      if constexpr (std::is_same_v<std::decay_t<T>, std::string>) {
        tensor_.dtype = v, has_dtype_ = true;
      } else {
        has_dtype_ = false;
        bad_dtype_ = true;
      }
    }
    if (depth_ == 3 && array_ != Array::none) {
      if constexpr (std::is_same_v<std::decay_t<T>, std::uint64_t>) {
        if (array_ == Array::shape) tensor_.shape.push_back(v);
        else offsets_.push_back(v);
      } else {
        (array_ == Array::shape ? bad_shape_ : bad_offsets_) = true;
      }
    }
    return true;
  }

  void start_tensor() {
    tensor_ = Tensor{};
    offsets_.clear();
    has_dtype_ = has_shape_ = has_offsets_ = bad_dtype_ = bad_shape_ = bad_offsets_ = false;
  }

  void end_tensor() {
    const std::string w = where();
    if (!has_dtype_) throw bad(path_, HeaderRefusal::missing_field, w + " has no dtype");
    if (!has_shape_) throw bad(path_, HeaderRefusal::missing_field, w + " has no shape");
    if (!has_offsets_ || bad_offsets_ || offsets_.size() != 2)
      throw bad(path_, HeaderRefusal::missing_field, w + " has no data_offsets [begin, end]");
    Tensor& t = tensor_;
    t.name = entry_name_;
    auto bits = safetensors_dtype_bits(t.dtype);
    if (!bits) throw bad(path_, HeaderRefusal::unknown_dtype, w + " has the unknown dtype '" + t.dtype + "'");
    if (bad_shape_) throw bad(path_, HeaderRefusal::malformed, w + " has a shape that is not a list of sizes");
    t.elements = 1;
    for (auto d : t.shape)
      if (mul_overflows(t.elements, d, t.elements))
        throw bad(path_, HeaderRefusal::malformed, w + "'s shape overflows");
    std::uint64_t begin = offsets_[0], end = offsets_[1];
    if (begin > end || end > data_size_)
      throw bad(path_, HeaderRefusal::outside_data,
                w + " has data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] outside the " +
                    std::to_string(data_size_) + " bytes of data (safetensors: " +
                    (begin > end ? "InvalidOffset" : "MetadataIncompleteBuffer") + ")");
    std::uint64_t total_bits = 0;
    if (mul_overflows(t.elements, *bits, total_bits) || total_bits % 8 != 0 || total_bits / 8 != end - begin)
      throw bad(path_, HeaderRefusal::size_mismatch,
                w + " is " + std::to_string(end - begin) + " bytes, but " + std::to_string(t.elements) +
                    " elements of " + t.dtype + " need " +
                    (total_bits % 8 ? "a whole number of bytes" : std::to_string(total_bits / 8)) +
                    " (safetensors: TensorInvalidInfo)");
    t.bytes = end - begin;
    t.offset = data_start_ + begin;
    // A name given twice: the last one counts, as in a JSON object read whole.
    auto at = index_.find(t.name);
    if (at != index_.end()) h_.tensors[at->second] = std::move(t);
    else index_.emplace(t.name, h_.tensors.size()), h_.tensors.push_back(std::move(t));
  }

  const std::string& path_;
  FileHeader& h_;
  std::uint64_t data_start_, data_size_;
  int depth_ = 0;
  std::string entry_name_, key_;
  Array array_ = Array::none;
  Tensor tensor_;
  std::vector<std::uint64_t> offsets_;
  bool has_dtype_ = false, has_shape_ = false, has_offsets_ = false;
  bool bad_dtype_ = false, bad_shape_ = false, bad_offsets_ = false;
  std::unordered_map<std::string, std::size_t> index_;
};

// safetensors' own rule (safetensors/src/tensor.rs, Metadata::validate and
// SafeTensors::read_metadata): sorted by offsets, each tensor starts where the
// previous one ends, the first at 0, and the last ends where the file does.
// Anything else safetensors (and so transformers and vLLM) refuses to load.
void check_contiguous(const FileHeader& h, const std::string& path) {
  std::vector<const Tensor*> by_offset;
  by_offset.reserve(h.tensors.size());
  for (const auto& t : h.tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const Tensor* a, const Tensor* b) {
    return a->offset != b->offset ? a->offset < b->offset : a->bytes < b->bytes;
  });
  const std::uint64_t data_start = h.header_bytes;
  std::uint64_t end = data_start;
  for (const Tensor* t : by_offset) {
    if (t->offset != end)
      throw bad(path, HeaderRefusal::not_contiguous,
                "tensor '" + t->name + "' starts at byte " + std::to_string(t->offset - data_start) +
                    " of the data, not at " + std::to_string(end - data_start) +
                    (end == data_start ? " (the data's start)" : " where the tensor before it ends") +
                    " (safetensors: InvalidOffset)");
    end = t->offset + t->bytes;
  }
  if (end != h.file_size)
    throw bad(path, HeaderRefusal::not_contiguous,
              "the tensors' data ends at byte " + std::to_string(end - data_start) +
                  " of the data, but the file holds " + std::to_string(h.file_size - data_start) + " (" +
                  std::to_string(h.file_size - end) + " trailing bytes; safetensors: MetadataIncompleteBuffer)");
}

}  // namespace

std::optional<unsigned> safetensors_dtype_bits(std::string_view d) {
  // safetensors 0.8.0's Dtype (safetensors/src/tensor.rs), bits per element; the FNUZ fp8 pair is AMD's.
  static const std::pair<std::string_view, unsigned> table[] = {
      {"BOOL", 8},        {"U8", 8},          {"I8", 8},      {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8},
      {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"I16", 16},    {"U16", 16},    {"F16", 16},    {"BF16", 16},
      {"I32", 32},        {"U32", 32},        {"F32", 32},    {"F64", 64},    {"I64", 64},    {"U64", 64},
      {"F4", 4},          {"F6_E2M3", 6},     {"F6_E3M2", 6}, {"C64", 64}};
  for (const auto& [name, bits] : table)
    if (name == d) return bits;
  return std::nullopt;
}

ParseResult parse_safetensors(std::string_view have, std::uint64_t file_size, const std::string& path) {
  if (file_size < 8)
    throw bad(path, HeaderRefusal::truncated,
              "the file is " + std::to_string(file_size) + " bytes, shorter than the 8-byte header length");
  if (have.size() < 8) return NeedBytes{8};
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(have[i]);
  if (n > kMaxSafetensorsHeader)
    throw bad(path, HeaderRefusal::too_large,
              "the header length " + std::to_string(n) + " is over the format's limit of " +
                  std::to_string(kMaxSafetensorsHeader) + " bytes");
  if (n + 8 > file_size)
    throw bad(path, HeaderRefusal::truncated,
              "the header length " + std::to_string(n) + " runs past the end of the file (" +
                  std::to_string(file_size) + " bytes)");
  if (have.size() < n + 8) return NeedBytes{n + 8};

  FileHeader h;
  h.path = path;
  h.format = Format::safetensors;
  h.file_size = file_size;
  h.header_bytes = n + 8;
  HeaderReader reader(path, h, n + 8, file_size - n - 8);
  json::sax_parse(have.substr(8, n), &reader, json::input_format_t::json, true, false);
  reader.finish();
  if (auto o = first_overlap(h.tensors))
    throw bad(path, HeaderRefusal::overlap,
              "tensors '" + o->first->name + "' and '" + o->second->name + "' overlap (safetensors: InvalidOffset)");
  check_contiguous(h, path);
  return h;
}

}  // namespace provkit::checkpoint
