//! `defmt::Format` for Kiln's public types (feature `defmt`), so that firmware logging with
//! defmt can print them: `defmt::info!("input {}", model::INPUT_DTYPE)`.

use crate::DType;

impl defmt::Format for DType {
    fn format(&self, f: defmt::Formatter<'_>) {
        let name = match self {
            DType::F32 => "f32",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::Bool => "bool",
            DType::U32 => "u32",
            DType::U64 => "u64",
        };
        defmt::write!(f, "{=str}", name);
    }
}
