//! Models compiled by `kiln-build` in `build.rs`, included from `OUT_DIR`.

pub mod hello {
    include!(concat!(env!("OUT_DIR"), "/hello.rs"));
}

pub mod person {
    include!(concat!(env!("OUT_DIR"), "/person.rs"));
}

pub mod cnn_float {
    include!(concat!(env!("OUT_DIR"), "/cnn_float.rs"));
}

/// The same hello_world model through `include_model!`, to compare the front ends.
pub mod hello_macro {
    kiln::include_model!(
        "../../../../shared/models/tflm_hello_world_int8.tflite",
        ram_budget = 1024,
        flash_budget = 4 * 1024
    );
}

/// Where `build.rs` wrote its files.
pub const OUT_DIR: &str = env!("OUT_DIR");
