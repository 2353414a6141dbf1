//! A binary that uses only part of the generated code (`take()` and `invoke()`), as firmware
//! often does: the files `kiln-build` writes must compile here without a warning (dead code
//! included), with and without a RAM budget, state and weights.
#![deny(warnings)]

mod hello {
    include!(concat!(env!("OUT_DIR"), "/hello.rs"));
}

mod svdf_int8 {
    include!(concat!(env!("OUT_DIR"), "/svdf_int8.rs"));
}

mod features_int8_all {
    include!(concat!(env!("OUT_DIR"), "/features_int8_all.rs"));
}

fn main() {
    hello::Model::take().expect("taken once").invoke();
    svdf_int8::Model::take().expect("taken once").invoke();
    features_int8_all::Model::take()
        .expect("taken once")
        .invoke();
}
