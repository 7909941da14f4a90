#include "common/kube/yaml_json.h"

#include <fmt/format.h>
#include <yaml.h>

#include <memory>

namespace rdmanet::kube {
namespace {

using json = nlohmann::json;

struct ParserDeleter {
  void operator()(yaml_parser_t* p) const {
    yaml_parser_delete(p);
    delete p;
  }
};
struct DocumentDeleter {
  void operator()(yaml_document_t* d) const {
    yaml_document_delete(d);
    delete d;
  }
};

// Depth-limited: a hostile file with deeply nested (or alias-recursive) nodes cannot blow the
// stack. Kubeconfig nesting is 4 levels.
constexpr int kMaxDepth = 64;

Result<json> convert(yaml_document_t* doc, yaml_node_t* node, int depth) {
  if (node == nullptr) return json();
  if (depth > kMaxDepth) return makeError(ErrorCode::kDecodeFailure, "YAML nested too deeply");
  switch (node->type) {
    case YAML_SCALAR_NODE:
      return json(std::string(reinterpret_cast<const char*>(node->data.scalar.value),
                              node->data.scalar.length));
    case YAML_SEQUENCE_NODE: {
      json arr = json::array();
      for (yaml_node_item_t* it = node->data.sequence.items.start;
           it < node->data.sequence.items.top; ++it) {
        RDMANET_ASSIGN_OR_RETURN(json v, convert(doc, yaml_document_get_node(doc, *it), depth + 1));
        arr.push_back(std::move(v));
      }
      return arr;
    }
    case YAML_MAPPING_NODE: {
      json obj = json::object();
      for (yaml_node_pair_t* p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
           ++p) {
        yaml_node_t* k = yaml_document_get_node(doc, p->key);
        if (k == nullptr || k->type != YAML_SCALAR_NODE) {
          return makeError(ErrorCode::kDecodeFailure, "YAML mapping key is not a scalar");
        }
        std::string key(reinterpret_cast<const char*>(k->data.scalar.value), k->data.scalar.length);
        RDMANET_ASSIGN_OR_RETURN(json v,
                                 convert(doc, yaml_document_get_node(doc, p->value), depth + 1));
        obj[key] = std::move(v);
      }
      return obj;
    }
    case YAML_NO_NODE:
      break;
  }
  return json();
}

}  // namespace

Result<json> yamlToJson(const std::string& text) {
  std::unique_ptr<yaml_parser_t, ParserDeleter> parser(new yaml_parser_t);
  if (yaml_parser_initialize(parser.get()) == 0) {
    delete parser.release();
    return makeError(ErrorCode::kInternal, "cannot initialise the YAML parser");
  }
  yaml_parser_set_input_string(parser.get(), reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
  std::unique_ptr<yaml_document_t, DocumentDeleter> doc(new yaml_document_t);
  if (yaml_parser_load(parser.get(), doc.get()) == 0) {
    std::string why = parser->problem != nullptr ? parser->problem : "syntax error";
    const auto& m = parser->problem_mark;
    delete doc.release();  // not initialised by a failed load: nothing to free inside
    return makeError(ErrorCode::kDecodeFailure,
                     fmt::format("YAML: {} at line {} column {}", why, m.line + 1, m.column + 1));
  }
  return convert(doc.get(), yaml_document_get_root_node(doc.get()), 0);
}

}  // namespace rdmanet::kube
