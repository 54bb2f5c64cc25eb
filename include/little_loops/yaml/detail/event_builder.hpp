// little_loops — the yaml-cpp event handler that builds a json document with positions and diagnostics
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/document.hpp>
#include <little_loops/error.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/yaml/detail/scalars.hpp>
#include <little_loops/yaml/detail/source_text.hpp>
#include <little_loops/yaml/limits.hpp>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {

/// Thrown inside the YAML event handler to stop parsing (depth or size limit, complex key).
struct yaml_abort {};

/// The hashes of a large mapping's keys (see yaml_json_builder::seen_key): open addressing
/// in one array, so that a mapping of a million keys costs one allocation per growth rather
/// than one node per key (the node-based set was a fifth of loading such a mapping, its
/// destruction included).
class key_hash_set {
 public:
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }

  /// Adds `hash`; false when it was there already (or a hash equal to it in all bits but
  /// the lowest: the caller then compares the keys themselves).
  bool insert(std::size_t hash) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    return place(hash | 1);
  }

 private:
  bool place(std::size_t h) {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = (h ^ (h >> 29)) & mask;; i = (i + 1) & mask) {
      if (slots_[i] == h) return false;
      if (slots_[i] == 0) {
        slots_[i] = h;
        ++count_;
        return true;
      }
    }
  }
  void grow() {
    std::vector<std::size_t> old(slots_.empty() ? 64 : slots_.size() * 2, 0);
    old.swap(slots_);
    count_ = 0;
    for (const std::size_t h : old)
      if (h != 0) place(h);
  }

  std::vector<std::size_t> slots_;  // 0: free; else a hash with its lowest bit set
  std::size_t count_ = 0;
};

/// Builds a json value from yaml-cpp parser events without recursion, recording positions
/// and diagnostics.
class yaml_json_builder final : public YAML::EventHandler {
 public:
  yaml_json_builder(source_map* map, const yaml_limits& limits, bool utf8_source = false,
                    std::string_view source = {})
      : map_(map), limits_(limits), utf8_source_(utf8_source), source_(source) {}

  json root;
  bool have_root = false;
  diagnostics found;

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    note_node(mark, anchor);
    // `[a, , b]`: yaml-cpp reads the empty entry as null; PyYAML (and YAML) refuse it.
    if (!frames_.empty() && !frames_.back().is_map && frames_.back().flow && mark.pos >= 0 &&
        static_cast<std::size_t>(mark.pos) < source_.size() &&
        source_[static_cast<std::size_t>(mark.pos)] == ',')
      fail(value_path(mark), mark, "parse-error", "expected the node content, but found ','");
    if (key_expected()) {
      begin_key("null", mark);
      return;
    }
    const std::string& path = value_path(mark);
    complete(json(nullptr), 0, anchor, path, mark);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    note_node(mark, 0);
    const auto it = anchors_.find(anchor);
    if (key_expected()) {
      if (it != anchors_.end() && !it->second.value.is_structured()) {
        std::string key = it->second.value.is_string() ? it->second.value.get<std::string>()
                                                       : it->second.value.dump();
        frames_.back().bytes += key.size();
        count_nodes(0, key.size(), frames_.back().path, mark);
        begin_key(std::move(key), mark);
        return;
      }
      fail(frames_.back().path, mark, "complex-key", "mapping keys must be scalars");
    }
    const std::string& path = value_path(mark);
    if (it == anchors_.end()) {
      fail(path, mark, "yaml-alias", "unknown alias");
    }
    const std::size_t nodes = it->second.nodes;
    const std::size_t bytes = it->second.bytes;
    count_nodes(nodes, bytes, path, mark);  // before the copy: refused in bounded memory
    attach(json(it->second.value), nodes, bytes);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& text) override {
    const std::size_t content = note_node(mark, anchor);
    if (content < source_.size()) {
      const char first = source_[content];
      std::size_t end = std::string_view::npos;  // just past the scalar's text, when known
      if (first == '"' || first == '\'') {
        end = quoted_scalar_end(source_, content);
        if (end == std::string_view::npos)
          fail(key_expected() ? frames_.back().path : value_path(mark), mark, "parse-error",
               "while scanning a quoted scalar: found unexpected end of stream");
        verbatim_.emplace_back(content, end);
      } else if (tag == "?" && source_.compare(content, text.size(), text) == 0) {
        end = content + text.size();  // a plain scalar on one line, as every simple key is
      }
      if (end != std::string_view::npos && key_expected() && !frames_.back().flow &&
          !simple_key_closed(end) && !explicit_key(content))
        fail(frames_.back().path, mark, "parse-error",
             "while scanning a simple key: could not find expected ':'");
      if (first == '|' || first == '>') {
        // The content starts after the header line (`|-2 # comment`, read as any other
        // line) and ends where the next node's line starts.
        const std::size_t eol = source_.find('\n', content);
        block_start_ = eol == std::string_view::npos ? source_.size() : eol;
      }
    }
    if (tag == "?" && text == "=" && !key_expected())  // PyYAML resolves it to !!value, which
                                                        // safe_load cannot build (a key stays "=")
      diag(value_path(mark), mark, "yaml-tag",
           "could not determine a constructor for the tag 'tag:yaml.org,2002:value' (a plain = "
           "is YAML's value indicator: quote it, '=')");
    std::string value = text;
    if (utf8_source_) reencode_yaml_escapes(value);
    if (key_expected()) {
      if (anchor != 0) anchors_[anchor] = anchored{json(value), 1, value.size()};  // `&k a: 1`, then `*k`
      frames_.back().bytes += value.size();
      count_nodes(0, value.size(), frames_.back().path, mark);
      begin_key(std::move(value), mark, tag == "?");
      frames_.back().key_explicit = content < source_.size() && explicit_key(content);
      return;
    }
    // A scalar value of a block mapping on a later line is indented more than its key
    // (yaml-cpp took `a:\n"b"` as a: b; PyYAML reads the "b" as a key without ':').
    if (!frames_.empty() && frames_.back().is_map && !frames_.back().flow &&
        !frames_.back().key_explicit && mark.line > frames_.back().key_mark.line &&
        mark.column <= frames_.back().key_mark.column)
      fail(frames_.back().path, mark, "parse-error",
           "while scanning a simple key: could not find expected ':'");
    const std::string& path = value_path(mark);
    const std::size_t bytes = value.size();
    complete(scalar_value(tag, std::move(value), path, mark), bytes, anchor, path, mark);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    open(mark, tag, anchor, false, "seq", style == YAML::EmitterStyle::Flow);
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    open(mark, tag, anchor, true, "map", style == YAML::EmitterStyle::Flow);
  }
  void OnMapEnd() override { close(); }

  /// The [begin, end) offsets of the quoted and block scalars of the source, in document
  /// order (see find_stray_tab); call once the document has been parsed.
  const std::vector<std::pair<std::size_t, std::size_t>>& verbatim_ranges() {
    if (block_start_ != std::string_view::npos) {
      verbatim_.emplace_back(block_start_, source_.size());
      block_start_ = std::string_view::npos;
    }
    return verbatim_;
  }

 private:
  struct frame {
    json value;
    bool is_map = false;
    bool flow = false;  // written `[...]` / `{...}`
    bool has_key = false;
    bool key_is_merge = false;
    bool key_is_duplicate = false;  // the current key appeared before (diagnosed; first value kept)
    YAML::Mark key_mark;            // where the current key starts
    bool key_explicit = false;      // written `? key` (its value may follow on a `:` line)
    std::string key;
    std::string key_path;  // the path of the current key (not of a `<<` key)
    std::string path;
    YAML::anchor_t anchor = 0;
    std::size_t nodes = 1;
    std::size_t bytes = 0;  // of its scalars and keys, aliases expanded (count_nodes)
    key_hash_set key_hashes;  // filled once the mapping is large (seen_key())
    std::vector<json> merges;  // `<<` sources, in document order
  };
  struct anchored {
    json value;
    std::size_t nodes = 1;
    std::size_t bytes = 0;
  };

  source_map* map_;
  yaml_limits limits_;
  bool utf8_source_ = false;  // the source is well-formed UTF-8 (see reencode_yaml_escapes)
  std::string_view source_;   // the text, when its byte offsets are yaml-cpp's positions
  std::vector<frame> frames_;
  std::unordered_map<YAML::anchor_t, anchored> anchors_;
  // Anchor names as written → where first defined (yaml-cpp numbers every definition anew,
  // so a name defined twice is found in the source text).
  std::unordered_map<std::string_view, YAML::Mark> anchor_names_;
  std::vector<std::pair<std::size_t, std::size_t>> verbatim_;  // see verbatim_ranges()
  std::size_t block_start_ = std::string_view::npos;  // a block scalar whose end is not known yet
  struct {
    std::size_t pos = 0;         // read up to here
    std::size_t line_start = 0;  // the start of the line holding `pos`
    bool indicator = false;      // a `?` followed by a blank in [line_start, pos)
  } key_scan_;                   // explicit_key()
  std::size_t total_nodes_ = 0;
  std::size_t total_bytes_ = 0;
  std::string item_path_;  // see value_path()
  const std::string no_path_;

  static int one_based(int v) { return v < 0 ? 0 : v + 1; }

  // A block mapping's key without `?` is a simple key: `:` follows it on its line (PyYAML:
  // "could not find expected ':'"; yaml-cpp read `a:\nb` as the keys a and b, b null).
  bool simple_key_closed(std::size_t end) const {
    while (end < source_.size() && (source_[end] == ' ' || source_[end] == '\t')) ++end;
    return end < source_.size() && source_[end] == ':';
  }
  // Whether the key starting at `content` follows a `?` indicator on its line (properties
  // such as `? &a !t key` included).
  // Whether the line holding `content` has a `?` indicator before it: a `?` followed by a
  // blank, or just before `content`. Keys come in document order, so the line is read
  // forward once, from where the last call stopped (a one-line flow mapping with n keys
  // costs O(n), not O(n²)); a position before that is read backwards.
  bool explicit_key(std::size_t content) {
    if (content < key_scan_.pos) {
      std::size_t i = content;
      while (i > 0 && source_[i - 1] != '\n') {
        --i;
        if (source_[i] == '?' && (i + 1 == content || source_[i + 1] == ' ' || source_[i + 1] == '\t'))
          return true;
      }
      return false;
    }
    for (; key_scan_.pos < content; ++key_scan_.pos) {
      const char c = source_[key_scan_.pos];
      if (c == '\n') {
        key_scan_.line_start = key_scan_.pos + 1;
        key_scan_.indicator = false;
      } else if (c == '?' && key_scan_.pos + 1 < content &&
                 (source_[key_scan_.pos + 1] == ' ' || source_[key_scan_.pos + 1] == '\t')) {
        key_scan_.indicator = true;
      }
    }
    return key_scan_.indicator || (content > key_scan_.line_start && source_[content - 1] == '?');
  }

  // Every event that has a position comes here first: ends a pending block scalar (at the
  // start of this node's line), refuses an anchor name defined before (PyYAML's "found
  // duplicate anchor"). Returns the offset where the node's content starts (after its
  // properties), or npos without a source text.
  std::size_t note_node(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= source_.size())
      return std::string_view::npos;
    const auto pos = static_cast<std::size_t>(mark.pos);
    if (block_start_ != std::string_view::npos) {
      const std::size_t line_start = source_.rfind('\n', pos);
      verbatim_.emplace_back(block_start_, line_start == std::string_view::npos ? pos : line_start + 1);
      block_start_ = std::string_view::npos;
    }
    std::string_view name;
    const std::size_t content = skip_node_properties(source_, pos, &name);
    if (anchor != 0 && !name.empty()) {
      const auto [it, fresh] = anchor_names_.try_emplace(name, mark);
      if (!fresh)
        diag(frames_.empty() ? std::string() : frames_.back().path, mark, "yaml-anchor",
             fmt::format("found duplicate anchor '{}': it is defined first at line {}, column {} and again",
                         name, one_based(it->second.line), one_based(it->second.column)));
    }
    return content;
  }

  void record(std::string_view path, const YAML::Mark& mark) {
    if (map_ != nullptr) map_->add(path, one_based(mark.line), one_based(mark.column));
  }

  void diag(std::string path, const YAML::Mark& mark, std::string code, std::string message) {
    message += fmt::format(" (line {}, column {})", one_based(mark.line), one_based(mark.column));
    found.push_back(diagnostic{severity::error, std::move(path), std::move(message), std::move(code)});
  }

  [[noreturn]] void fail(std::string path, const YAML::Mark& mark, std::string code,
                         std::string message) {
    diag(std::move(path), mark, std::move(code), std::move(message));
    throw yaml_abort{};
  }

  bool key_expected() const { return !frames_.empty() && frames_.back().is_map && !frames_.back().has_key; }

  void begin_key(std::string text, const YAML::Mark& mark, bool plain = false) {
    frame& top = frames_.back();
    top.has_key = true;
    top.key_mark = mark;
    top.key_explicit = false;
    top.key_is_merge = plain && text == "<<";
    if (top.key_is_merge) return;
    top.key_path = member_path(top.path, text);
    top.key_is_duplicate = seen_key(top, text);
    if (top.key_is_duplicate)
      diag(top.key_path, mark, "duplicate-key",
           "duplicate key " + quote_excerpt(text) + ": a key may appear only once in a mapping");
    else
      record(top.key_path, mark);
    top.key = std::move(text);
  }

  // Whether `text` is a key of `top` already. Keys whose value was attached are in the
  // mapping; a small mapping is searched, a large one keeps the hashes of its keys (no copy
  // of each key: a set of strings cost a third of loading a mapping of a million keys) and
  // is searched only when a hash is seen again. The common mapping of a few keys costs no
  // allocation and a huge one stays O(n).
  static bool seen_key(frame& top, const std::string& text) {
    static constexpr std::size_t search_limit = 16;
    const auto& members = top.value.get_ref<const json::object_t&>();
    const auto search = [&] {
      for (const auto& member : members)
        if (member.first == text) return true;
      return false;
    };
    if (top.key_hashes.empty() && members.size() < search_limit) return search();
    const std::hash<std::string_view> hash;
    if (top.key_hashes.empty())
      for (const auto& member : members) top.key_hashes.insert(hash(member.first));
    return !top.key_hashes.insert(hash(text)) && search();
  }

  // The path of the value that starts now (valid until the next event); records positions
  // of list items and the root. A mapping's value has its key's path, made once.
  const std::string& value_path(const YAML::Mark& mark) {
    if (frames_.empty()) {
      record("", mark);
      return no_path_;
    }
    frame& top = frames_.back();
    if (top.is_map) return top.key_is_merge ? top.path : top.key_path;
    item_path_ = index_path(top.path, top.value.size());
    record(item_path_, mark);
    return item_path_;
  }

  // Counts `n` values and `bytes` bytes more; refuses the document once either limit is
  // crossed.
  void count_nodes(std::size_t n, std::size_t bytes, const std::string& path, const YAML::Mark& mark) {
    total_nodes_ += n;
    total_bytes_ += bytes;
    if (total_nodes_ > limits_.max_nodes)
      fail(path, mark, "yaml-too-large",
           fmt::format("document has more than {} values (after alias expansion)", limits_.max_nodes));
    if (total_bytes_ > limits_.max_bytes)
      fail(path, mark, "yaml-too-large",
           fmt::format("document has more than {} bytes of text (after alias expansion)", limits_.max_bytes));
  }

  json scalar_value(const std::string& tag, std::string&& text, const std::string& path,
                    const YAML::Mark& mark) {
    if (tag == "?") return resolve_plain_scalar(std::move(text));
    if (tag == "!" || tag.empty()) return json(std::move(text));
    std::string_view name = tag;
    if (name.substr(0, yaml_tag_prefix.size()) == yaml_tag_prefix) {
      name.remove_prefix(yaml_tag_prefix.size());
      if (name == "str") return json(std::move(text));
      if (name == "null") {
        if (yaml11_null(text)) return json(nullptr);
      } else if (name == "bool") {
        if (auto b = yaml11_bool(text)) return json(*b);
      } else if (name == "int") {
        if (auto i = yaml11_int(text)) return *i;
      } else if (name == "float") {
        if (auto f = yaml11_float(text)) return *f;
        if (auto i = yaml11_int(text)) return json(i->get<double>());
      } else {
        diag(path, mark, "yaml-tag", "unsupported tag !!" + std::string(name));
        return json(text);
      }
      diag(path, mark, "yaml-tag",
           fmt::format("{} is not a valid !!{}", quote_excerpt(text), name));
      return json(text);
    }
    diag(path, mark, "yaml-tag", "unsupported tag " + quote_excerpt(tag));
    return json(text);
  }

  void open(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, bool is_map,
            std::string_view kind, bool flow) {
    note_node(mark, anchor);
    if (key_expected())
      fail(frames_.back().path, mark, "complex-key", "mapping keys must be scalars");
    std::string path = value_path(mark);
    if (frames_.size() >= limits_.max_depth)
      fail(path, mark, "too-deep", fmt::format("nesting deeper than {} levels", limits_.max_depth));
    count_nodes(1, 0, path, mark);
    if (!(tag == "?" || tag == "!" || tag.empty() ||
          tag == std::string(yaml_tag_prefix) + std::string(kind)))
      diag(path, mark, "yaml-tag", "unsupported tag " + quote_excerpt(tag));
    frame f;
    f.value = is_map ? json::object() : json::array();
    f.is_map = is_map;
    f.flow = flow;
    f.path = std::move(path);
    f.anchor = anchor;
    frames_.push_back(std::move(f));
  }

  void close() {
    frame f = std::move(frames_.back());
    frames_.pop_back();
    if (f.is_map && !f.merges.empty()) {
      // PyYAML semantics: explicit keys win over merged ones; among `<<` sources the
      // earlier wins; a key keeps the position of its first appearance.
      json merged = json::object();
      for (auto it = f.merges.rbegin(); it != f.merges.rend(); ++it)
        for (auto& [k, v] : it->items()) merged[k] = v;
      for (auto& [k, v] : f.value.items()) merged[k] = std::move(v);
      f.value = std::move(merged);
    }
    complete_frame(std::move(f));
  }

  void complete_frame(frame&& f) {
    if (f.anchor != 0) anchors_[f.anchor] = anchored{f.value, f.nodes, f.bytes};
    attach(std::move(f.value), f.nodes, f.bytes);
  }

  // A scalar value is complete.
  void complete(json value, std::size_t bytes, YAML::anchor_t anchor, const std::string& path,
                const YAML::Mark& mark) {
    count_nodes(1, bytes, path, mark);
    if (anchor != 0) anchors_[anchor] = anchored{value, 1, bytes};
    attach(std::move(value), 1, bytes);
  }

  void attach(json value, std::size_t nodes, std::size_t bytes) {
    if (frames_.empty()) {
      root = std::move(value);
      have_root = true;
      return;
    }
    frame& top = frames_.back();
    top.nodes += nodes;
    top.bytes += bytes;
    if (!top.is_map) {
      top.value.push_back(std::move(value));
      return;
    }
    top.has_key = false;
    if (top.key_is_merge) {
      top.key_is_merge = false;
      if (value.is_object()) {
        top.merges.push_back(std::move(value));
      } else if (value.is_array() && !value.empty()) {
        bool all_maps = true;
        for (const auto& v : value) all_maps = all_maps && v.is_object();
        if (all_maps) {
          for (auto& v : value) top.merges.push_back(std::move(v));
        } else {
          found.push_back(diagnostic{severity::error, top.path,
                                     "expected a mapping or list of mappings for merging (<<)",
                                     "yaml-merge"});
        }
      } else {
        found.push_back(diagnostic{severity::error, top.path,
                                   "expected a mapping or list of mappings for merging (<<)",
                                   "yaml-merge"});
      }
      return;
    }
    // Keys are unique here (top.keys): appended without a search (a mapping of n keys is
    // O(n)); merged keys come in at close().
    if (!top.key_is_duplicate) detail::append_new_key(top.value.get_ref<json::object_t&>(), top.key, std::move(value));
  }
};

inline error yaml_error(std::string message, std::string_view file_name, diagnostics found = {}) {
  if (found.empty()) found.push_back(diagnostic{severity::error, "", message, "parse-error"});
  return error{errc::parse_error, std::move(message), std::string(file_name), std::move(found)};
}

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END
