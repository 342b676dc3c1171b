#include "provkit/util/yaml.hpp"

#include <yaml-cpp/eventhandler.h>

#include <sstream>

#include "provkit/error.hpp"

namespace provkit::util {

namespace {
// Remembers where a document starts and ignores the rest: enough to tell
// whether anything follows the first document.
struct DocumentStart : YAML::EventHandler {
  YAML::Mark mark = YAML::Mark::null_mark();
  void OnDocumentStart(const YAML::Mark& m) override { mark = m; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};
}  // namespace

int yaml_line(const YAML::Node& node) { return node.Mark().is_null() ? 0 : node.Mark().line + 1; }

YAML::Node load_single_yaml_document(std::string_view text, const std::string& file) {
  std::string s(text);
  try {
    // Not YAML::LoadAll: on some input (a lone ",") it finds documents
    // without end. The parser is asked for at most two.
    std::istringstream in(s);
    YAML::Parser parser(in);
    DocumentStart first, second;
    if (parser.HandleNextDocument(first) && parser.HandleNextDocument(second))
      throw input_error(file, second.mark.is_null() ? 0 : second.mark.line + 1,
                        "more YAML after the first document (a second document after '---', or a stray character) "
                        "starts here; the file must be one document");
    return YAML::Load(s);
  } catch (const YAML::Exception& e) {
    throw input_error(file, e.mark.is_null() ? 0 : e.mark.line + 1, "not valid YAML: " + e.msg);
  }
}

}  // namespace provkit::util
