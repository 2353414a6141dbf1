// Two IF subgraphs calling each other (TFLM recurses until its stack overflows): the error
// names the operator making the recursive call, its subgraph and the cycle.
kiln::include_model!("../hostile/cf_if_branches_call_each_other.tflite");

fn main() {}
