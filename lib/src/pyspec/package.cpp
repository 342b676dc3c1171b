#include "provkit/pyspec/package.hpp"

namespace provkit::pyspec {

bool PackageVersion::operator==(const PackageVersion& o) const {
  if (parsed_ && o.parsed_) return compare(*parsed_, *o.parsed_) == 0;
  return same_version(text_, o.text_);
}

}  // namespace provkit::pyspec
