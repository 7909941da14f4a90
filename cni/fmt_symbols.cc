// libfmt's compiled part, for the static `rdmanet` binary only (cni/CMakeLists.txt).
//
// Debian ships libfmt as a shared library only (no libfmt.a). The CNI binary is linked as a
// static PIE so that each of kubelet's execs skips the dynamic loader; the objects it links were
// compiled against the shared libfmt and reference its few out-of-line functions. Including
// <fmt/format-inl.h> without FMT_HEADER_ONLY defines those functions here (FMT_FUNC expands to
// nothing), and the explicit instantiations below provide the templates <fmt/format.h> declares
// `extern`. The tests and the other binaries keep linking the shared libfmt.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl<char>(locale_ref) -> char;

}  // namespace detail
FMT_END_NAMESPACE
