#include "provkit/yamlutil.hpp"

#include <vector>

#include "provkit/error.hpp"

namespace provkit {

int yaml_line(const YAML::Node& node) { return node.Mark().is_null() ? 0 : node.Mark().line + 1; }

YAML::Node load_single_yaml_document(std::string_view text, const std::string& file) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    throw input_error(file, e.mark.is_null() ? 0 : e.mark.line + 1, "not valid YAML: " + e.msg);
  }
  if (docs.size() > 1)
    throw input_error(file, yaml_line(docs[1]),
                      "a second YAML document (after '---') starts here; the file must be one document");
  return docs.empty() ? YAML::Node() : docs.front();
}

}  // namespace provkit
