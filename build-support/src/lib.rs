//! `kiln-build`: compile a `.tflite` model from `build.rs`.
//!
//! This crate will hold the one emitter (plan to tokens) shared by both front ends. Code
//! generation is not implemented yet, so this crate exports nothing.
