//! Support for Kiln's fuzz targets (`cargo fuzz run compile`, `.ci/fuzz.sh`).

pub mod compile_all;
