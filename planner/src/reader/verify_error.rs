//! The diagnostic for a flatbuffer that does not verify: which check failed, on which field
//! (as a path from the root, `subgraphs[0].tensors[3].quantization.zero_point`), and the
//! bytes concerned. Only a range or offset past the end of the file asks whether the file
//! is truncated.

use crate::diag::Diagnostic;
use flatbuffers::{ErrorTraceDetail, InvalidFlatbuffer, VerifierOptions};

/// The diagnostic for `e`, met verifying a file of `len` bytes with `opts`.
pub(super) fn diagnostic(e: &InvalidFlatbuffer, len: usize, opts: &VerifierOptions) -> Diagnostic {
    use InvalidFlatbuffer as E;
    const TRUNCATED: &str = "lies past the end of the file; is the file truncated?";
    let (what, expected, found) = match e {
        E::RangeOutOfBounds { range, error_trace } => (
            format!("{} {TRUNCATED}", path(error_trace.as_ref())),
            format!("bytes in 0..{len}"),
            format!("bytes {}..{}", range.start, range.end),
        ),
        E::SignedOffsetOutOfBounds {
            soffset,
            position,
            error_trace,
        } => {
            // A table's vtable is at its position minus the signed offset: before the table
            // (where it can only fail below byte 0) or after it (past the end).
            let (to, found) = if *soffset > 0 {
                (
                    "lies before the start of the file",
                    format!("byte {position} - {soffset}"),
                )
            } else {
                (
                    TRUNCATED,
                    format!("byte {position} + {}", soffset.unsigned_abs()),
                )
            };
            (
                format!("the vtable of {} {to}", path(error_trace.as_ref())),
                format!("a vtable in 0..{len}"),
                found,
            )
        }
        E::Unaligned {
            position,
            unaligned_type,
            error_trace,
        } => {
            let (kind, align) = aligned_kind(unaligned_type);
            (
                format!(
                    "{} is {kind} at a misaligned byte; scalars, offsets and vectors of \
                     scalars may sit at any byte, but tables, vtables, strings and vectors of \
                     tables must be aligned",
                    path(error_trace.as_ref())
                ),
                align.map_or_else(
                    || format!("an aligned {unaligned_type}"),
                    |a| format!("a multiple of {a}"),
                ),
                format!("byte {position}"),
            )
        }
        E::Utf8Error {
            error,
            range,
            error_trace,
        } => (
            format!("{} is not UTF-8", path(error_trace.as_ref())),
            "a UTF-8 string".to_string(),
            format!("bytes {}..{}: {error}", range.start, range.end),
        ),
        E::MissingNullTerminator { range, error_trace } => (
            format!(
                "the string {} lacks its terminating zero byte",
                path(error_trace.as_ref())
            ),
            format!("a zero byte at {}", range.end),
            format!(
                "bytes {}..{} and no zero after them",
                range.start, range.end
            ),
        ),
        E::MissingRequiredField {
            required,
            error_trace,
        } => (
            format!(
                "{} lacks its required field `{required}`",
                path(error_trace.as_ref())
            ),
            format!("a `{required}` field"),
            "none".to_string(),
        ),
        E::InconsistentUnion {
            field,
            field_type,
            error_trace,
        } => (
            // The crate names the union's type field `field` and its value `field_type`.
            format!(
                "{} has one of the union fields `{field}` and `{field_type}` without the other",
                path(error_trace.as_ref())
            ),
            "a union type and value, or neither".to_string(),
            "only one of them".to_string(),
        ),
        E::TooManyTables => (
            "it has too many tables".to_string(),
            format!("at most {}", opts.max_tables),
            "more".to_string(),
        ),
        E::ApparentSizeTooLarge => (
            "its tables and vectors, counted once for each reference to them, are too large"
                .to_string(),
            format!("at most {} bytes", opts.max_apparent_size),
            "more".to_string(),
        ),
        E::DepthLimitReached => (
            "its tables are nested too deep".to_string(),
            format!("at most {} levels", opts.max_depth),
            "more".to_string(),
        ),
    };
    Diagnostic::malformed(format!("the flatbuffer does not verify: {what}"))
        .expected_found(expected, found)
}

/// What an alignment check that remains is about, from the type the crate names, and the
/// alignment it wants.
fn aligned_kind(type_name: &str) -> (&'static str, Option<usize>) {
    match type_name {
        // `Verifier::visit_table` reads a table's signed offset to its vtable.
        "i32" => ("a table", Some(4)),
        // The vtable's entries, and its length (which must be even).
        "u16" => ("a vtable", Some(2)),
        // The length of a string or of a vector of tables or strings.
        "u32" => ("a string or vector of tables", Some(4)),
        t if t.contains("ForwardsUOffset") => ("a vector of tables or strings", Some(4)),
        _ => ("a value", None),
    }
}

/// Where the check failed, as a path from the root table: `subgraphs[0].tensors[3].name`.
/// The crate records the trace innermost first.
fn path(trace: &[ErrorTraceDetail]) -> String {
    let mut p = String::new();
    for d in trace.iter().rev() {
        match d {
            ErrorTraceDetail::TableField { field_name, .. } => {
                if !p.is_empty() {
                    p.push('.');
                }
                // Rust keywords get a trailing underscore in the generated code (`type_`).
                p.push_str(field_name.strip_suffix('_').unwrap_or(field_name));
            }
            ErrorTraceDetail::VectorElement { index, .. } => p.push_str(&format!("[{index}]")),
            ErrorTraceDetail::UnionVariant { variant, .. } => {
                let v = variant.rsplit("::").next().unwrap_or(variant);
                p.push_str(&format!("({v})"));
            }
        }
    }
    if p.is_empty() {
        "the root table".to_string()
    } else {
        format!("`{p}`")
    }
}
