#pragma once
// hf-fetch manifests (YAML, documented in manifests/README.md): a repository
// pinned to one commit and exactly the files to fetch, each with its size and
// sha256 and/or git blob id, plus optional assembly of split parts.
// Every refusal is provkit::input_error(ManifestRefusal, file, line, what): exit 2 (a YAML syntax error is
// util's, Reason::invalid_input).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "provkit/error.hpp"
#include "provkit/hub/client.hpp"

namespace provkit::hub {

// Why a manifest was refused (Error::is); every one exit 2, `invalid_input` in --json.
enum class ManifestRefusal {
  malformed,            // a mapping or list where another shape is needed
  unsupported_version,  // `manifest:` is not a version this library reads
  missing,              // a key it needs is absent ('files', a path, a size, an output, parts)
  unknown_key,          // a key manifests do not have
  duplicate,            // a key, a path or an output given twice
  not_pinned,           // `revision:` is not a 40-hex commit id (a branch or tag)
  unsafe_path,          // a path or output that is absolute or has '..', '.', empty segments or backslashes
  unhashed,             // a file with neither sha256 nor git_oid
  invalid_value,        // a repo id, type, ref, size or digest that is not one
  unknown_part,         // an assembly part that is not one of the files, or an output that is
  sizes_overflow,       // the sizes of its files and outputs add up past 2^64 - 1: they cannot all be right
  file_and_folder,      // a path that is a file and also a folder of another path ("x.txt", "x.txt/inner")
  gguf_split_parts,     // an assembly of gguf-split parts (each a whole GGUF): joined, no loader reads them
};
std::string_view reason_name(ManifestRefusal r);  // invalid_input, every one
ExitCode exit_code(ManifestRefusal r);
// Which refusal it is, as named above ("unsafe_path"): --json's detail.refusal beside reason invalid_input.
std::string_view refusal_name(ManifestRefusal r);

struct ManifestFile {
  std::string path;
  std::uint64_t size = 0;
  std::optional<std::string> sha256;   // 64 hex; the LFS oid for LFS files
  std::optional<std::string> git_oid;  // 40 hex; git blob id of the content (non-LFS files)
  int line = 0;                        // where it was declared (0 when built in code)
};

struct AssembleEntry {
  std::string output;
  std::vector<std::string> parts;  // paths from files, in order
  std::optional<std::string> sha256;
  std::optional<std::uint64_t> size;
  int line = 0;
};

struct Manifest {
  static constexpr int kVersion = 1;

  hub::Repo repo;
  std::string revision;  // 40-hex commit
  // The branch or tag name that was resolved to `revision` (`ref:`), when the
  // manifest was made from one: the cache's refs/<ref> is written for it.
  std::optional<std::string> ref;
  std::vector<ManifestFile> files;
  std::vector<AssembleEntry> assemble;
  std::string source;  // file name it was read from

  // Pure: parses and validates `text`; errors name `filename` and the line.
  static Manifest parse(std::string_view text, const std::string& filename);
  static Manifest load(const std::filesystem::path& path);
  // The checks parse() makes, on a manifest made in memory (pin_from_tree): every entry gets the line
  // to_yaml() gives it, and the first that fails is refused as parse() would refuse that text, naming
  // `filename` and the line. Builds no YAML (a tree of 300,000 files read back took about 2.5 KB each).
  void validate(const std::string& filename);

  // YAML that parse() reads back to the same manifest.
  std::string to_yaml() const;

  const ManifestFile* find(std::string_view path) const;
};

// The pre-flight check: exactly the manifest's files against the live tree.
// Files upstream that the manifest does not name are not looked at. Two files
// the tree gives one blob name although the manifest says their contents
// differ are `changed` (the later one), before a byte is fetched.
enum class UpstreamState { ok, not_in_tree, changed };
struct UpstreamCheck {
  std::string path;
  UpstreamState state = UpstreamState::ok;
  std::string detail;                     // what differs, for `changed`
  const hub::TreeEntry* entry = nullptr;  // into the tree given (ok and changed)
  // For ok files, the blob's name (huggingface_hub's etag), decided here and
  // only here: the sha256 the manifest pins for an LFS file, the git oid it
  // pins for any other. A non-LFS file the manifest pins by sha256 alone gets
  // the tree's git oid, and `git_oid_to_verify` says the downloaded content
  // must have that id before it is stored under it.
  std::string etag;
  std::optional<std::string> git_oid_to_verify;
  // Set by a fetch's pre-flight on a file that is not ok: every file of the manifest is in place here and
  // verifies against it (hub::UpstreamRefusal::moved), so the copy here can still be served.
  bool local_copy_verifies = false;
};
std::vector<UpstreamCheck> compare_with_tree(const Manifest& manifest, const std::vector<hub::TreeEntry>& tree);
std::string upstream_state_name(UpstreamState s);  // "OK", "NOT IN HUB TREE", "UPSTREAM CHANGED"

// A repository-relative path a manifest may name: util::is_safe_relative_path, the one rule.
bool is_safe_relative_path(std::string_view path);

// "REPO[@REVISION]" as {repo id, revision} (revision main when not given); nothing when it is not one.
std::optional<std::pair<std::string, std::string>> split_repo_revision(const std::string& text);
// A name refs/<name> may be written for: a safe relative path, not a 40-hex commit.
bool is_valid_ref_name(std::string_view name);
// The ref a run that resolved `revision` to `commit` records, as huggingface_hub
// does: the name itself, none when `revision` was the commit.
std::optional<std::string> ref_for_revision(const std::string& revision, const std::string& commit);
// split_repo_revision, or Error(usage) saying the form.
std::pair<std::string, std::string> parse_repo_revision(const std::string& text);

// An assembly of `m`'s files written as OUTPUT=PART,PART,...[:SHA256], its size the parts' sum.
struct AssemblySpecError : Error {
  std::optional<std::string> part;  // the part that is not one of the manifest's files; none: `spec` is not of the form
  AssemblySpecError(const std::string& spec, std::optional<std::string> part);
  // A spec of the right form whose OUTPUT's sha256 cannot be taken from the repo's SHA256SUMS: "OUTPUT: why".
  // The tool says which flag gave the spec.
  static AssemblySpecError no_sum(const std::string& output, const std::string& why);
  // Parts that are gguf-split parts (gguf_split_refusal): "OUTPUT: refusal", ManifestRefusal::gguf_split_parts.
  static AssemblySpecError gguf_split(const std::string& output, const std::string& refusal);

 private:
  AssemblySpecError(const ReasonId& reason, const std::string& message) : Error(reason, message) {}
};
// Also OUTPUT=GLOB: the files matching it (RepoPattern) in natural order; and a
// trailing ":SHA256SUMS" takes OUTPUT's sha256 from the repo's own SHA256SUMS
// (its text from `repo_sums`, asked only then).
AssembleEntry parse_assembly(const Manifest& m, std::string spec, const std::function<std::string()>& repo_sums = {});
// llama.cpp's gguf-split names its parts NAME-00001-of-00003.gguf (each a whole GGUF, split.no/split.count in
// its metadata). An assembly of such parts joins files no loader reads as one: the sentence saying so and what
// to do instead (llama.cpp loads the first part; llama-gguf-split --merge makes one file), else nothing.
std::optional<std::string> gguf_split_refusal(const AssembleEntry& e);
// The second half of that sentence alone: what joining does and what to do instead.
std::string gguf_split_advice(const AssembleEntry& e);
// "part-2" before "part-10": runs of digits compare as numbers.
bool natural_less(std::string_view a, std::string_view b);
// The sha256 a `sha256sum` list gives `name`, lower case: the line of that exact relative path, else the one
// line whose basename is name's. Several such lines (BF16/model.gguf and Q8_0/model.gguf for model.gguf) with
// different sums: no sha256, and `candidates` names them (the caller refuses; a guess would fail good parts).
struct SumsMatch {
  std::optional<std::string> sha256;
  std::vector<std::string> candidates;
};
SumsMatch checksum_from_sums(std::string_view sums, const std::string& name);

}  // namespace provkit::hub
