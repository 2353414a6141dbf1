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
pub fn split(outer: usize, chunks: &[usize], input: &[u8], outputs: &mut [&mut [u8]]) {
    let mut src = input;
    for o in 0..outer {
        for (out, &c) in outputs.iter_mut().zip(chunks) {
            let Some((part, rest)) = src.split_at_checked(c) else {
                return;
            };
            if let Some(dst) = out.get_mut(o * c..(o + 1) * c) {
                copy(dst, part);
            }
            src = rest;
        }
    }
}

/// The inverse of [`split`]: for each of `outer` positions, `chunks[j]` bytes of `inputs[j]`
/// are appended to `output`.
pub fn pack(outer: usize, chunks: &[usize], inputs: &[&[u8]], output: &mut [u8]) {
    let mut dst = output;
    for o in 0..outer {
        for (input, &c) in inputs.iter().zip(chunks) {
            let Some((part, rest)) = dst.split_at_mut_checked(c) else {
                return;
            };
            if let Some(src) = input.get(o * c..(o + 1) * c) {
                copy(part, src);
            }
            dst = rest;
        }
    }
}

/// `dst.copy_from_slice(src)` (equal lengths), byte by byte for short runs, where the call
/// of a general copy costs more than the copy (UNPACK and PACK of an inner axis).
#[inline(always)]
fn copy(dst: &mut [u8], src: &[u8]) {
    if dst.len() <= 16 {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = *s;
        }
    } else {
        dst.copy_from_slice(src);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn short_slices_end_the_copy_without_panicking() {
        let mut a = [0u8; 1];
        split(3, &[2], &[1, 2, 3], &mut [&mut a]);
        let mut y = [0u8; 2];
        pack(2, &[2], &[&[7]], &mut y);
        assert_eq!(y, [0, 0]);
    }
}
