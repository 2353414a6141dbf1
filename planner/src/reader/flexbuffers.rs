//! The options of custom operators: a FlexBuffers map of scalars (what TFLM's Signal
//! library writes, read there by `FlexbufferWrapper`), decoded into [`CustomOptions`].
//!
//! Hand-written rather than the `flexbuffers` crate: its reader (25.12.19, the current
//! release) still panics on crafted buffers (google/flatbuffers#8923), and Kiln reads
//! untrusted models without panicking. This decodes only what custom options need: a root
//! map whose keys are strings and whose values are integers, unsigned integers, floats or
//! bools (inline or indirect). Every read is bounds-checked and every address computed with
//! checked arithmetic; anything else gives `None`, and the operator module that needs the
//! options then refuses the model with a diagnostic.

use crate::ir::{CustomOptions, CustomValue};

// FlexBuffers value types (`flexbuffers.h`, `enum Type`).
const INT: u8 = 1;
const UINT: u8 = 2;
const FLOAT: u8 = 3;
const INDIRECT_INT: u8 = 6;
const INDIRECT_UINT: u8 = 7;
const INDIRECT_FLOAT: u8 = 8;
const MAP: u8 = 9;
const BOOL: u8 = 26;

/// Decodes custom options; `None` if they are not a map of scalars.
pub(super) fn decode(bytes: &[u8]) -> Option<CustomOptions> {
    let n = bytes.len();
    if n < 3 {
        return None;
    }
    let root_width = bytes[n - 1] as usize;
    if !matches!(root_width, 1 | 2 | 4 | 8) {
        return None;
    }
    let packed = bytes[n - 2];
    let root_at = (n - 2).checked_sub(root_width)?;
    let (ty, width) = unpack(packed)?;
    if ty != MAP {
        return None;
    }
    let map = indirect(bytes, root_at, root_width)?;
    // A map is a vector of values, preceded by (keys offset, keys width, length).
    let len = uint(bytes, map.checked_sub(width)?, width)? as usize;
    let keys_width = uint(bytes, map.checked_sub(2 * width)?, width)? as usize;
    let keys_field = map.checked_sub(3 * width)?;
    let keys = indirect(bytes, keys_field, width)?;
    if !matches!(keys_width, 1 | 2 | 4 | 8) {
        return None;
    }
    let keys_len = uint(bytes, keys.checked_sub(keys_width)?, keys_width)? as usize;
    if keys_len != len || len > bytes.len() {
        return None;
    }
    let types_at = map.checked_add(len.checked_mul(width)?)?;
    let mut entries = Vec::with_capacity(len);
    for i in 0..len {
        let key_at = indirect(
            bytes,
            keys.checked_add(i.checked_mul(keys_width)?)?,
            keys_width,
        )?;
        let key = key_string(bytes, key_at)?;
        let value_at = map.checked_add(i.checked_mul(width)?)?;
        let (vty, vwidth) = unpack(*bytes.get(types_at.checked_add(i)?)?)?;
        let value = match vty {
            INT => CustomValue::Int(int(bytes, value_at, width)?),
            UINT => CustomValue::UInt(uint(bytes, value_at, width)?),
            FLOAT => CustomValue::Float(float(bytes, value_at, width)?),
            BOOL => CustomValue::Bool(uint(bytes, value_at, width)? != 0),
            INDIRECT_INT => {
                CustomValue::Int(int(bytes, indirect(bytes, value_at, width)?, vwidth)?)
            }
            INDIRECT_UINT => {
                CustomValue::UInt(uint(bytes, indirect(bytes, value_at, width)?, vwidth)?)
            }
            INDIRECT_FLOAT => {
                CustomValue::Float(float(bytes, indirect(bytes, value_at, width)?, vwidth)?)
            }
            _ => return None,
        };
        entries.push((key, value));
    }
    Some(CustomOptions { entries })
}

/// A packed type byte: the value type and the byte width of what it refers to.
fn unpack(packed: u8) -> Option<(u8, usize)> {
    Some((packed >> 2, 1usize << (packed & 3)))
}

/// `width` bytes at `at`, little-endian, as an unsigned integer.
fn uint(bytes: &[u8], at: usize, width: usize) -> Option<u64> {
    let b = bytes.get(at..at.checked_add(width)?)?;
    Some(match width {
        1 => b[0] as u64,
        2 => u16::from_le_bytes([b[0], b[1]]) as u64,
        4 => u32::from_le_bytes(b.try_into().ok()?) as u64,
        8 => u64::from_le_bytes(b.try_into().ok()?),
        _ => return None,
    })
}

/// `width` bytes at `at` as a signed integer.
fn int(bytes: &[u8], at: usize, width: usize) -> Option<i64> {
    let u = uint(bytes, at, width)?;
    Some(match width {
        1 => u as u8 as i8 as i64,
        2 => u as u16 as i16 as i64,
        4 => u as u32 as i32 as i64,
        _ => u as i64,
    })
}

/// `width` bytes at `at` as a float (4 or 8 bytes).
fn float(bytes: &[u8], at: usize, width: usize) -> Option<f64> {
    let u = uint(bytes, at, width)?;
    match width {
        4 => Some(f32::from_bits(u as u32) as f64),
        8 => Some(f64::from_bits(u)),
        _ => None,
    }
}

/// The address an offset field at `at` refers to (offsets point backwards).
fn indirect(bytes: &[u8], at: usize, width: usize) -> Option<usize> {
    let offset = usize::try_from(uint(bytes, at, width)?).ok()?;
    at.checked_sub(offset)
}

/// The NUL-terminated UTF-8 key at `at`.
fn key_string(bytes: &[u8], at: usize) -> Option<String> {
    let rest = bytes.get(at..)?;
    let end = rest.iter().position(|&b| b == 0)?;
    String::from_utf8(rest[..end].to_vec()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_tflm_signal_window_options() {
        // `{"shift": 12}` as TFLM's own window test data writes it.
        let bytes = [
            0x73, 0x68, 0x69, 0x66, 0x74, 0x00, 0x01, 0x07, 0x01, 0x01, 0x01, 0x0c, 0x04, 0x02,
            0x24, 0x01,
        ];
        let o = decode(&bytes).unwrap();
        assert_eq!(o.entries, vec![("shift".to_string(), CustomValue::Int(12))]);
        assert_eq!(o.int("shift"), Some(12));
        assert_eq!(o.int("other"), None);
    }

    #[test]
    fn never_panics_on_any_truncation_or_byte_change() {
        let bytes = [
            0x73, 0x68, 0x69, 0x66, 0x74, 0x00, 0x01, 0x07, 0x01, 0x01, 0x01, 0x0c, 0x04, 0x02,
            0x24, 0x01,
        ];
        for n in 0..=bytes.len() {
            let _ = decode(&bytes[..n]);
        }
        for i in 0..bytes.len() {
            for v in 0..=255u8 {
                let mut b = bytes;
                b[i] = v;
                let _ = decode(&b);
            }
        }
        assert_eq!(decode(&[]), None);
        assert_eq!(decode(&[0xff, 0xff, 0xff]), None);
    }
}
