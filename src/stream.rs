//! A streamed input: the rows of a model's input handed to `invoke` as they are read (from a
//! camera's line buffer, a sensor, a file), so that the whole input is never in RAM.
//!
//! A model compiled with `streamed_input = true` (`kiln_build::Model::streamed_input`,
//! `kiln plan --streamed-input`) runs its first operators one strip of rows at a time, and
//! each strip asks its [`RowSource`] for the rows of the input it reads, right before it
//! runs. Its `invoke` takes the source; it has no `input_mut()`. The outputs are those of the
//! same model run on the whole input.

/// Fills rows of the model's input on request: rows `first_row..first_row + n` in the
/// model's input layout (NHWC, batch 1: each row is `width * channels` elements, little
/// endian), `rows.len()` being `n` rows' bytes (the generated module's `INPUT_ROW_BYTES`
/// each).
///
/// Within one `invoke`, requests come in order: each starts at or after the previous one's
/// first row and ends after its last. Neighbouring strips share the rows of their
/// convolutions' windows, so a request may start before the previous one ended (by at
/// most the generated `INPUT_HALO_ROWS`): a source that reads a stream once keeps that
/// many of its last rows.
pub trait RowSource {
    /// Writes rows `first_row..` of the input into `rows` (a whole number of rows).
    fn read_rows(&mut self, first_row: usize, rows: &mut [u8]);
}

/// A whole input already in memory, as a row source (for tests, and for inputs that are
/// in flash or in a buffer anyway): `row_bytes` bytes per row.
#[derive(Clone, Copy, Debug)]
pub struct InMemory<'a> {
    pub bytes: &'a [u8],
    pub row_bytes: usize,
}

impl RowSource for InMemory<'_> {
    fn read_rows(&mut self, first_row: usize, rows: &mut [u8]) {
        let at = first_row * self.row_bytes;
        rows.copy_from_slice(&self.bytes[at..at + rows.len()]);
    }
}

impl<F: FnMut(usize, &mut [u8]) + ?Sized> RowSource for F {
    fn read_rows(&mut self, first_row: usize, rows: &mut [u8]) {
        self(first_row, rows)
    }
}
