// A model that fits beside the RAM the firmware reserves, with literal and named sizes.
const RAM: usize = 8 * 1024;
const STACK: usize = 4 * 1024;

mod literal {
    kiln::include_model!(
        "../../models/cnn_int8.tflite",
        ram_budget = 8 * 1024,
        reserved_ram = 4 * 1024,
    );
}

mod named {
    kiln::include_model!(
        "../../models/cnn_int8.tflite",
        ram_budget = crate::RAM,
        reserved_ram = crate::STACK,
    );
}

fn main() {
    const { assert!(literal::ARENA_BYTES + literal::PERSISTENT_BYTES + STACK <= RAM) };
    const { assert!(named::ARENA_BYTES + named::PERSISTENT_BYTES + STACK <= RAM) };
    // A named budget is unknown while planning: the smallest plan. A literal one: the
    // fastest that fits beside the reserved bytes.
    assert!(named::ARENA_BYTES <= literal::ARENA_BYTES);
}
