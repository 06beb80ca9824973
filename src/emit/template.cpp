#include "cuforge/emit/template.hpp"

#include <set>
#include <stdexcept>

namespace cuforge::emit {

std::string render(std::string_view text, const Holes& holes) {
  std::string out;
  out.reserve(text.size() + 1024);
  std::set<std::string_view> used;
  size_t pos = 0;
  while (true) {
    size_t open = text.find("${", pos);
    if (open == std::string_view::npos) break;
    size_t close = text.find('}', open);
    if (close == std::string_view::npos) throw std::logic_error("unterminated ${ in template");
    std::string_view name = text.substr(open + 2, close - open - 2);
    auto it = holes.find(name);
    if (it == holes.end()) throw std::logic_error("template hole ${" + std::string(name) + "} has no value");
    used.insert(it->first);
    out.append(text.substr(pos, open - pos)).append(it->second);
    pos = close + 1;
  }
  out.append(text.substr(pos));
  for (const auto& [name, value] : holes)
    if (!used.count(name)) throw std::logic_error("value for ${" + name + "} fills no hole");
  return out;
}

}  // namespace cuforge::emit
