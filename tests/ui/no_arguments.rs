// No arguments at all: the error says what the macro takes.
kiln::include_model!();

fn main() {}
