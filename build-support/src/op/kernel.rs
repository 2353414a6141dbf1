//! [`Kernel`]: one kernel call with its constant parameters, the trait an operator module
//! implements for each kernel it can choose: `emit` writes its statement in `invoke()`
//! through a [`Call`], `run` runs it on the host (feature `exec`) through an `Io`.

use super::call::Call;
#[cfg(feature = "exec")]
use super::io::Io;
use kiln_planner::diag::Result;
use proc_macro2::TokenStream;

/// One kernel call with its constant parameters, as an operator module chose it: how the call
/// is written in `invoke()` and how it runs on the host. Each operator module implements it
/// for its kernels (an operator may choose among several: per type, per shape, per target).
pub trait Kernel: std::fmt::Debug {
    /// The statement calling the kernel in `invoke()`. `call` gives the operands' tokens,
    /// emits constants (parameters, tables) and says whether the plan runs it in place.
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream>;

    /// Runs the ordinary (not in-place) form on the host, on `io`'s operands.
    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>);

    /// For the kernel that reads rows of a streamed input (KILN_READ_ROWS): its first row
    /// and number of rows. Its statement reads them from `invoke`'s row source; the host
    /// executor copies them from the input it is given.
    fn streamed_rows(&self) -> Option<(usize, usize)> {
        None
    }
}
