//! `kiln::include_model!`: the proc-macro front end of Kiln.
//!
//! It will parse the macro arguments, call the one emitter in `kiln-build` and turn
//! diagnostics into spanned compile errors. Code generation is not implemented yet, so this
//! crate exports nothing.
