//! SPLIT, SPLIT_V and UNPACK (one tensor cut along an axis into several) and PACK (several
//! stacked along a new axis), as TFLM's `split.cc`, `split_v.cc`, `unpack.cc` and `pack.cc`:
//! plain copies, without requantization, so one byte kernel serves every element type.
//!
//! The tensor is seen as `[outer, extent, inner]` around the axis: for each of the `outer`
//! positions, part `j` owns a contiguous run of `chunks[j]` bytes (its extent along the axis
//! times `inner` elements times the element size). The operator module computes `outer` and
//! the chunks at build time from the static shapes.

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes() -> usize {
    0
}

/// Cuts `input` into `outputs`: for each of `outer` positions, `chunks[j]` bytes go to
/// `outputs[j]`, in order. Lengths are checked at lowering; a shorter slice ends the copy.
///
/// Output by output: part `j`'s runs sit every `row` (the sum of the chunks) bytes from its
/// offset, so its copy is a strided gather with a fixed run length.
pub fn split(outer: usize, chunks: &[usize], input: &[u8], outputs: &mut [&mut [u8]]) {
    let row: usize = chunks.iter().sum();
    if row == 0 {
        return;
    }
    // Parts of one 4- or 8-byte run each (UNPACK of the last or next-to-last axis of 32-bit
    // elements), 2 to 4 of them: a transposition whose run size and part count are
    // constants (the compiler's shuffles instead of one copy per run).
    match (chunks.first(), chunks.len()) {
        (Some(&c), 2..=4) if chunks.iter().all(|&x| x == c) => match (c, chunks.len()) {
            (4, 2) => return transpose::<4, 2>(outer, input, outputs),
            (4, 3) => return transpose::<4, 3>(outer, input, outputs),
            (4, 4) => return transpose::<4, 4>(outer, input, outputs),
            (8, 2) => return transpose::<8, 2>(outer, input, outputs),
            (8, 3) => return transpose::<8, 3>(outer, input, outputs),
            (8, 4) => return transpose::<8, 4>(outer, input, outputs),
            _ => {}
        },
        _ => {}
    }
    let mut off = 0;
    for (out, &c) in outputs.iter_mut().zip(chunks) {
        if c > 0 {
            let src = input.get(off..).unwrap_or(&[]);
            match c {
                1 => gather::<1>(out, src, row, outer),
                2 => gather::<2>(out, src, row, outer),
                4 => gather::<4>(out, src, row, outer),
                8 => gather::<8>(out, src, row, outer),
                16 => gather::<16>(out, src, row, outer),
                _ => {
                    // Slices advanced by hand: chunk iterators would divide to size the loop.
                    let (mut s, mut d) = (src, &mut **out);
                    for _ in 0..outer {
                        let (Some(h), Some((o, rest))) = (s.get(..c), d.split_at_mut_checked(c))
                        else {
                            break;
                        };
                        copy(o, h);
                        d = rest;
                        s = s.get(row..).unwrap_or(&[]);
                    }
                }
            }
        }
        off += c;
    }
}

/// The inverse of [`split`]: for each of `outer` positions, `chunks[j]` bytes of `inputs[j]`
/// are appended to `output` (input by input: a strided scatter with a fixed run length).
pub fn pack(outer: usize, chunks: &[usize], inputs: &[&[u8]], output: &mut [u8]) {
    let row: usize = chunks.iter().sum();
    if row == 0 {
        return;
    }
    // PACK's parts all have one run length: the output is written row by row, front to
    // back, each run right after the last (no offsets to compute). A run missing from its
    // input is skipped (the later ones of that input are missing too); the copy ends where
    // the output does, as below.
    if let Some(&c) = chunks.first()
        && c > 16
        && chunks.iter().all(|&x| x == c)
    {
        let mut rest = output;
        let mut at = 0;
        for _ in 0..outer {
            for input in inputs.iter().take(chunks.len()) {
                let Some((d, tail)) = core::mem::take(&mut rest).split_at_mut_checked(c) else {
                    return;
                };
                rest = tail;
                if let Some(s) = input.get(at..at + c) {
                    copy(d, s);
                }
            }
            at += c;
        }
        return;
    }
    let mut off = 0;
    for (input, &c) in inputs.iter().zip(chunks) {
        if c > 0 {
            let dst = output.get_mut(off..).unwrap_or(&mut []);
            match c {
                1 => scatter::<1>(input, dst, row, outer),
                2 => scatter::<2>(input, dst, row, outer),
                4 => scatter::<4>(input, dst, row, outer),
                8 => scatter::<8>(input, dst, row, outer),
                16 => scatter::<16>(input, dst, row, outer),
                _ => {
                    let (mut s, mut d) = (*input, dst);
                    for _ in 0..outer {
                        let (Some((h, rest)), Some(o)) = (s.split_at_checked(c), d.get_mut(..c))
                        else {
                            break;
                        };
                        copy(o, h);
                        s = rest;
                        d = d.get_mut(row..).unwrap_or(&mut []);
                    }
                }
            }
        }
        off += c;
    }
}

/// `outer` runs of `C` bytes, every `row` bytes of `src`, to `out` one after another (runs
/// of one element, UNPACK of the last axis, where the loop is the whole cost, or 16 bytes).
/// Two runs per step (half the loop's own instructions), each run checked.
#[inline(always)]
fn gather<const C: usize>(out: &mut [u8], src: &[u8], row: usize, outer: usize) {
    let run = |at: usize| src.get(at..).and_then(<[u8]>::first_chunk::<C>);
    let (mut at, mut left, mut d) = (0, outer, out);
    while left >= 2 {
        let Some((pair, rest)) = core::mem::take(&mut d).split_at_mut_checked(2 * C) else {
            return;
        };
        let (Some(a), Some(b)) = (run(at), run(at + row)) else {
            return;
        };
        pair[..C].copy_from_slice(a);
        pair[C..].copy_from_slice(b);
        (d, at, left) = (rest, at + 2 * row, left - 2);
    }
    if left == 1
        && let (Some(o), Some(a)) = (d.first_chunk_mut::<C>(), run(at))
    {
        o.copy_from_slice(a);
    }
}

/// [`split`] into `N` parts of one `C`-byte run each per outer position: `outputs[j]` gets
/// run `j` of every row of `N` runs. As there, a shorter slice ends a part's copy.
#[inline(always)]
fn transpose<const C: usize, const N: usize>(
    outer: usize,
    input: &[u8],
    outputs: &mut [&mut [u8]],
) {
    let (rows, rest) = input.as_chunks::<C>().0.as_chunks::<N>();
    for (j, out) in outputs.iter_mut().take(N).enumerate() {
        let out = out.as_chunks_mut::<C>().0;
        let want = outer.min(out.len());
        let n = want.min(rows.len());
        for (d, row) in out[..n].iter_mut().zip(&rows[..n]) {
            *d = row[j];
        }
        // A last, partial row (a shorter input) still holds the first parts' runs.
        if n < want
            && let Some(x) = rest.get(j)
        {
            out[n] = *x;
        }
    }
}

/// The inverse of [`gather`] (PACK on the last axis).
#[inline(always)]
fn scatter<const C: usize>(input: &[u8], dst: &mut [u8], row: usize, outer: usize) {
    let mut at = 0;
    for s in input.chunks_exact(C).take(outer) {
        let Some(h) = dst.get_mut(at..).and_then(<[u8]>::first_chunk_mut::<C>) else {
            return;
        };
        h.copy_from_slice(s);
        at += row;
    }
}

/// `dst.copy_from_slice(src)` (equal lengths), for short runs with two possibly overlapping
/// fixed-size copies, where the call of a general copy costs more than the copy (UNPACK and
/// PACK of an inner axis).
#[inline(always)]
pub(crate) fn copy(dst: &mut [u8], src: &[u8]) {
    let n = dst.len();
    let Some(src) = src.get(..n) else { return };
    /// The first and the last `K` bytes (`K <= n <= 2 K`).
    #[inline(always)]
    fn ends<const K: usize>(dst: &mut [u8], src: &[u8]) {
        let n = dst.len();
        dst[..K].copy_from_slice(&src[..K]);
        dst[n - K..].copy_from_slice(&src[n - K..]);
    }
    match n {
        0 => {}
        1 => dst[0] = src[0],
        2..=3 => ends::<2>(dst, src),
        4..=7 => ends::<4>(dst, src),
        8..=15 => ends::<8>(dst, src),
        16..=32 => ends::<16>(dst, src),
        33..=64 => ends::<32>(dst, src),
        _ => dst.copy_from_slice(src),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn split_then_pack_is_the_identity() {
        // [2, 5] cut on axis 1 into extents 2 and 3 (one byte per element).
        let x: [u8; 10] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
        let (mut a, mut b) = ([0u8; 4], [0u8; 6]);
        split(2, &[2, 3], &x, &mut [&mut a, &mut b]);
        assert_eq!(a, [0, 1, 5, 6]);
        assert_eq!(b, [2, 3, 4, 7, 8, 9]);
        let mut y = [0u8; 10];
        pack(2, &[2, 3], &[&a, &b], &mut y);
        assert_eq!(x, y);
    }

    /// The copy of every run length up to 70 (each path of `copy`), against a plain
    /// element loop, for several parts of unequal runs.
    #[test]
    fn every_run_length_matches_a_plain_copy() {
        for (c, outer) in (0..70usize).flat_map(|c| [1, 2, 3, 4, 7].map(|o| (c, o))) {
            let chunks = [c, 1, c + 3];
            let row: usize = chunks.iter().sum();
            let x: Vec<u8> = (0..outer * row).map(|i| (i * 7 + 1) as u8).collect();
            let mut parts: Vec<Vec<u8>> = chunks.iter().map(|&k| vec![0; outer * k]).collect();
            let mut refs: Vec<&mut [u8]> = parts.iter_mut().map(Vec::as_mut_slice).collect();
            split(outer, &chunks, &x, &mut refs);
            let mut at = 0;
            for o in 0..outer {
                for (p, &k) in parts.iter().zip(&chunks) {
                    assert_eq!(&p[o * k..(o + 1) * k], &x[at..at + k], "run {c}");
                    at += k;
                }
            }
            let ins: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
            let mut y = vec![0u8; x.len()];
            pack(outer, &chunks, &ins, &mut y);
            assert_eq!(x, y, "run {c}");
        }
    }

    /// Parts of one 4- or 8-byte run each (the transposition for 2 to 4 parts) or of 24
    /// bytes (PACK's row by row copy), 1 to 5 parts, against a plain copy that stops at the
    /// first run missing from the input or the output.
    #[test]
    fn one_run_per_part_matches_a_plain_copy() {
        let shapes = (1..=5usize)
            .flat_map(|p| (0..9usize).flat_map(move |o| [(p, o, 4), (p, o, 8), (p, o, 24)]));
        for (parts, outer, c) in shapes {
            let chunks = vec![c; parts];
            let row = c * parts;
            // Short slices only for the transposition (2 to 4 parts); the pairwise copy of
            // other part counts may stop a run earlier there.
            let cuts: &[(usize, usize)] = if (2..=4).contains(&parts) {
                &[(0, 0), (3, 0), (row + 2, 0), (0, 4), (0, 5)]
            } else {
                &[(0, 0)]
            };
            for &(cut_in, cut_out) in cuts {
                let x: Vec<u8> = (0..(outer * row).saturating_sub(cut_in))
                    .map(|i| (i * 13 + 5) as u8)
                    .collect();
                let len = (outer * c).saturating_sub(cut_out);
                let mut got: Vec<Vec<u8>> = (0..parts).map(|_| vec![0xAA; len]).collect();
                let mut want = got.clone();
                let mut refs: Vec<&mut [u8]> = got.iter_mut().map(Vec::as_mut_slice).collect();
                split(outer, &chunks, &x, &mut refs);
                for (j, w) in want.iter_mut().enumerate() {
                    for o in 0..outer {
                        let at = o * row + j * c;
                        let (Some(src), Some(dst)) =
                            (x.get(at..at + c), w.get_mut(o * c..o * c + c))
                        else {
                            break;
                        };
                        dst.copy_from_slice(src);
                    }
                }
                assert_eq!(
                    got, want,
                    "{parts} parts, outer {outer}, cuts {cut_in} {cut_out}"
                );
                // PACK of the parts (as cut) back into a row-major buffer, likewise.
                let ins: Vec<&[u8]> = got.iter().map(Vec::as_slice).collect();
                let mut y = vec![0x55u8; x.len()];
                let mut z = y.clone();
                pack(outer, &chunks, &ins, &mut y);
                for (j, input) in ins.iter().enumerate() {
                    for o in 0..outer {
                        let at = o * row + j * c;
                        let (Some(src), Some(dst)) =
                            (input.get(o * c..o * c + c), z.get_mut(at..at + c))
                        else {
                            break;
                        };
                        dst.copy_from_slice(src);
                    }
                }
                assert_eq!(
                    y, z,
                    "PACK: {parts} parts, outer {outer}, cuts {cut_in} {cut_out}"
                );
            }
        }
    }

    #[test]
    fn short_slices_end_the_copy_without_panicking() {
        let mut a = [0u8; 1];
        split(3, &[2], &[1, 2, 3], &mut [&mut a]);
        let mut y = [0u8; 2];
        pack(2, &[2], &[&[7]], &mut y);
        assert_eq!(y, [0, 0]);
    }
}
