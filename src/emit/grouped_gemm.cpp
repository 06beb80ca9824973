#include "grouped_gemm.hpp"

#include "embedded.hpp"
#include "gemm_holes.hpp"

namespace cuforge::emit {

std::string grouped_gemm_source(const library::GemmConfig& c) {
  const bool sm90 = c.arch >= 90;
  // A bias row per group (C's pointers with a leading dimension of 0): SM90 broadcasts each row in the
  // epilogue, SM80 reads C with that leading dimension.
  Holes h = sm90 ? sm90_holes(c, c.name(), {"arrays.c", "cute::_0{}"}) : sm80_holes(c, c.name());
  if (sm90) {
    h["source_arguments"] = c.bias ? "" : "\n  args.epilogue.ptr_C = arrays.c;\n  args.epilogue.dC = arrays.stride_c;";
    // Which mode of each CUTLASS 3.x stride is the leading dimension (B is indexed N x K).
    h["a_ld_mode"] = c.layout_a == Layout::RowMajor ? "0" : "1";
    h["b_ld_mode"] = c.layout_b == Layout::RowMajor ? "1" : "0";
  }
  h["launch"] = std::string(sm90 ? embedded::sm90_launch : embedded::sm80_launch);
  std::string body = render(sm90 ? embedded::grouped_sm90 : embedded::grouped_sm80, h);
  const std::string ld = sm90 ? "arrays.stride_" : "arrays.ld";  // the arrays of leading dimensions
  return body + render(embedded::grouped_entry,
                       {{"name", c.name()},
                        {"array_lda", ld + "a"},
                        {"array_ldb", ld + "b"},
                        {"array_ldc", ld + "c"},
                        {"array_ldd", ld + "d"},
                        // The offsets form cuts A by rows: a row is lda elements (row-major A) or one.
                        {"a_row_step", c.layout_a == Layout::RowMajor ? "p.lda" : "1"}});
}

}  // namespace cuforge::emit
