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

struct EventDeleter {
  void operator()(yaml_event_t* e) const {
    yaml_event_delete(e);
    delete e;
  }
};

using Parser = std::unique_ptr<yaml_parser_t, ParserDeleter>;

// A parser over `text`, which must outlive it.
Result<Parser> parserOver(const std::string& text) {
  Parser parser(new yaml_parser_t);
  if (yaml_parser_initialize(parser.get()) == 0) {
    delete parser.release();
    return makeError(ErrorCode::kInternal, "cannot initialise the YAML parser");
  }
  yaml_parser_set_input_string(parser.get(), reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
  return parser;
}

// A YAML anchor names a node that each alias repeats, so a few hundred bytes of nested aliases
// ("billion laughs") expand to gigabytes of nodes once converted. Kubeconfig files never use
// them (kubectl writes none), so the first anchor or alias is refused outright, before the
// document is loaded, rather than bounded. Error 7 naming where it is; a syntax error is left
// for the loader to report.
Status refuseAnchorsAndAliases(const std::string& text) {
  RDMANET_ASSIGN_OR_RETURN(Parser parser, parserOver(text));
  for (;;) {
    std::unique_ptr<yaml_event_t, EventDeleter> ev(new yaml_event_t);
    if (yaml_parser_parse(parser.get(), ev.get()) == 0) {
      delete ev.release();  // not initialised by a failed parse
      return okStatus();
    }
    const yaml_mark_t& m = ev->start_mark;
    const unsigned char* anchor = nullptr;
    switch (ev->type) {
      case YAML_ALIAS_EVENT:
        return makeError(ErrorCode::kInvalidConfig,
                         fmt::format("YAML alias at line {} column {}: anchors and aliases are "
                                     "not accepted (they can expand without bound)",
                                     m.line + 1, m.column + 1));
      case YAML_SCALAR_EVENT:
        anchor = ev->data.scalar.anchor;
        break;
      case YAML_SEQUENCE_START_EVENT:
        anchor = ev->data.sequence_start.anchor;
        break;
      case YAML_MAPPING_START_EVENT:
        anchor = ev->data.mapping_start.anchor;
        break;
      case YAML_DOCUMENT_END_EVENT:  // only the first document is read
      case YAML_STREAM_END_EVENT:
        return okStatus();
      default:
        break;
    }
    if (anchor != nullptr) {
      return makeError(
          ErrorCode::kInvalidConfig,
          fmt::format("YAML anchor &{} at line {} column {}: anchors and aliases "
                      "are not accepted (they can expand without bound)",
                      reinterpret_cast<const char*>(anchor), m.line + 1, m.column + 1));
    }
  }
}

}  // namespace

Result<json> yamlToJson(const std::string& text) {
  RDMANET_RETURN_IF_ERROR(refuseAnchorsAndAliases(text));
  RDMANET_ASSIGN_OR_RETURN(Parser parser, parserOver(text));
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
