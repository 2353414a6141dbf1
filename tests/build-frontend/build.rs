//! Compiles models with the build.rs front end, as a user's firmware crate would.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let shared = "../../../shared/models";
    kiln_build::Model::new(format!("{shared}/tflm_hello_world_int8.tflite"))
        .ram_budget(1024)
        .flash_budget(4 * 1024)
        .compile("hello")?;
    kiln_build::Model::new(format!("{shared}/tflm_person_detect_int8.tflite"))
        .ram_budget(64 * 1024)
        .compile("person")?;
    kiln_build::Model::new("../models/cnn_float.tflite")
        .align(8)
        .compile("cnn_float")?;
    Ok(())
}
