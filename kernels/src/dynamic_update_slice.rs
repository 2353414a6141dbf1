//! DYNAMIC_UPDATE_SLICE: the operand with a block replaced by the update, at start indices
//! given at run time (TFLM's `dynamic_update_slice.cc`, any element type, up to 6 dimensions).
//!
//! As TFLM, each start index is clamped to `0..=operand_dim - update_dim` (so the update always
//! fits), and an update as large as the operand replaces it whole.

use crate::quant::PrepareError;

/// Largest rank TFLM's DYNAMIC_UPDATE_SLICE accepts.
pub const MAX_DIMS: usize = 6;

/// Constant parameters of a DYNAMIC_UPDATE_SLICE node, right-aligned to [`MAX_DIMS`]
/// dimensions (leading ones of extent 1 in both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub operand_dims: [usize; MAX_DIMS],
    pub update_dims: [usize; MAX_DIMS],
    /// The tensors' rank (the number of start indices).
    pub rank: usize,
}

impl Params {
    pub fn operand_size(&self) -> usize {
        self.operand_dims.iter().product()
    }

    pub fn update_size(&self) -> usize {
        self.update_dims.iter().product()
    }
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the operand and update shapes: one rank (1 to [`MAX_DIMS`]),
/// each update dimension at most the operand's (TFLM's `Prepare`).
pub fn prepare(operand: &[usize], update: &[usize]) -> Result<Params, PrepareError> {
    let n = operand.len();
    if n == 0 || n > MAX_DIMS || update.len() != n {
        return Err(PrepareError::InvalidShape);
    }
    let mut p = Params {
        operand_dims: [1; MAX_DIMS],
        update_dims: [1; MAX_DIMS],
        rank: n,
    };
    for k in 0..n {
        if update[k] > operand[k] {
            return Err(PrepareError::InvalidShape);
        }
        p.operand_dims[MAX_DIMS - n + k] = operand[k];
        p.update_dims[MAX_DIMS - n + k] = update[k];
    }
    Ok(p)
}

/// DYNAMIC_UPDATE_SLICE: `output` is `operand` with `update` written at the clamped
/// `start` (`rank` indices, int32 or int64).
pub fn dynamic_update_slice<T: Copy, I: Copy + Into<i64>>(
    p: &Params,
    operand: &[T],
    update: &[T],
    start: &[I],
    output: &mut [T],
) {
    debug_assert_eq!(operand.len(), p.operand_size());
    debug_assert_eq!(update.len(), p.update_size());
    debug_assert_eq!(output.len(), p.operand_size());
    if update.len() == operand.len() {
        output.copy_from_slice(update);
        return;
    }
    output.copy_from_slice(operand);
    let (od, ud) = (&p.operand_dims, &p.update_dims);
    let inner = ud[MAX_DIMS - 1];
    if update.is_empty() || inner == 0 {
        return;
    }
    let mut begin = [0usize; MAX_DIMS];
    let pad = MAX_DIMS - p.rank;
    for k in 0..p.rank {
        let j = pad + k;
        let raw = start.get(k).map_or(0, |&s| s.into());
        let hi = (od[j] - ud[j]) as i64;
        begin[j] = raw.clamp(0, hi) as usize;
    }
    let mut strides = [1usize; MAX_DIMS];
    for i in (0..MAX_DIMS - 1).rev() {
        strides[i] = strides[i + 1] * od[i + 1];
    }
    let mut coord = [0usize; MAX_DIMS];
    for row in update.chunks_exact(inner) {
        let at: usize = (0..MAX_DIMS)
            .map(|i| (begin[i] + coord[i]) * strides[i])
            .sum();
        output[at..at + inner].copy_from_slice(row);
        for i in (0..MAX_DIMS - 1).rev() {
            coord[i] += 1;
            if coord[i] < ud[i] {
                break;
            }
            coord[i] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_with_clamping() {
        let p = prepare(&[3, 3], &[2, 1]).unwrap();
        let x = [0i8; 9];
        let mut o = [9i8; 9];
        dynamic_update_slice(&p, &x, &[1, 2], &[1i32, 1], &mut o);
        assert_eq!(o, [0, 0, 0, 0, 1, 0, 0, 2, 0]);
        // Clamped: row 5 -> 1, column -3 -> 0.
        dynamic_update_slice(&p, &x, &[1, 2], &[5i64, -3], &mut o);
        assert_eq!(o, [0, 0, 0, 1, 0, 0, 2, 0, 0]);
        let p = prepare(&[2], &[2]).unwrap();
        let mut o = [0i8; 2];
        dynamic_update_slice(&p, &[1, 2], &[3, 4], &[7i32], &mut o);
        assert_eq!(o, [3, 4]);
        assert!(prepare(&[2], &[3]).is_err());
        assert!(prepare(&[2, 2], &[2]).is_err());
    }
}
