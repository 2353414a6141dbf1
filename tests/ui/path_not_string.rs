// The first argument must be the path as a string literal.
kiln::include_model!(mlp_int8, ram_budget = 4096);

fn main() {}
