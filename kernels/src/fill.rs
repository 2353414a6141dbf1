//! Kernels that write values not read from their tensor input: FILL (`reference_ops::Fill`,
//! a scalar repeated), ZEROS_LIKE (zeros of the input's type: TFLM writes `0`, not the zero
//! point), and the copy of build-time values (SHAPE, and BROADCAST_ARGS and FILL when Kiln
//! knows their result at build time: the values are constants, the kernel writes them into
//! the tensor). BROADCAST_ARGS on runtime shapes is [`broadcast_args`].

/// FILL: every element of `output` is `value[0]` (a scalar tensor; nothing is written if it
/// is empty, which lowering refuses).
pub fn fill<T: Copy>(value: &[T], output: &mut [T]) {
    if let Some(&v) = value.first() {
        output.fill(v);
    }
}

/// ZEROS_LIKE: `output` filled with the type's zero (`0`, `0.0`, `false`). The input is only
/// the operator's operand: its values are not read.
pub fn zeros_like<T: Copy + Default, U>(_input: &[U], output: &mut [T]) {
    output.fill(T::default());
}

/// Writes build-time `values` into `output` (SHAPE; BROADCAST_ARGS with constant operands).
/// The input is only the operator's operand (SHAPE's tensor): its values are not read.
pub fn write<T: Copy, U>(values: &[T], _input: &[U], output: &mut [T]) {
    // A handful of values: an element loop costs less than a call of a general copy.
    for (o, &v) in output.iter_mut().zip(values) {
        *o = v;
    }
}

/// BROADCAST_ARGS on runtime shapes (`reference_ops::BroadcastArgs`): output element `i`
/// from the end is the broadcast of the shapes' elements `i` from the end (1 where a shape
/// is shorter). As TFLM's, the elements are compared and written as 32-bit `int`s (int64
/// shapes are truncated). TFLM aborts on two different extents that are both not 1; this
/// kernel writes the first shape's (Kiln's kernels do not panic; lowering refuses constant
/// shapes that do not broadcast).
pub fn broadcast_args<T: Copy + Into<i64> + From<i32>>(a: &[T], b: &[T], output: &mut [T]) {
    let n = output.len();
    let at = |s: &[T], i: usize| -> i32 {
        match s.len().checked_sub(1 + i) {
            Some(j) => s[j].into() as i32,
            None => 1,
        }
    };
    for i in 0..n {
        let (x, y) = (at(a, i), at(b, i));
        output[n - 1 - i] = T::from(if x == 1 { y } else { x });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_and_broadcasts() {
        let mut o = [0i8; 3];
        fill(&[-7], &mut o);
        assert_eq!(o, [-7; 3]);
        let mut f = [1.5f32; 2];
        zeros_like(&[1u8], &mut f);
        assert_eq!(f, [0.0; 2]);
        let mut s = [0i32; 4];
        broadcast_args(&[2, 1, 3], &[5, 1], &mut s[1..]);
        assert_eq!(&s[1..], [2, 5, 3]);
        broadcast_args(&[3], &[1, 1, 1], &mut s);
        assert_eq!(s, [1, 1, 1, 3]);
        let mut l = [0i64; 2];
        broadcast_args(&[1i64 << 32 | 4, 1], &[1, 7], &mut l);
        assert_eq!(l, [4, 7]);
        write(&[1, 2], &[0.5f32], &mut l);
        assert_eq!(l, [1, 2]);
    }
}
