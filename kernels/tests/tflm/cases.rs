//! Parser of the case files written by `tools/kernel_check_common.py`:
//!
//! ```text
//! case <name>
//! <key> <kind> <values...>     kind: i = integers, f = f32 bit patterns (hex), s = a word
//! end
//! ```

use std::collections::HashMap;
use std::path::PathBuf;

#[derive(Debug)]
enum Value {
    Int(Vec<i64>),
    Float(Vec<f32>),
    Str(String),
}

/// One case: named fields.
#[derive(Debug)]
pub struct Case {
    pub name: String,
    fields: HashMap<String, Value>,
}

#[allow(dead_code)]
impl Case {
    fn get(&self, key: &str) -> &Value {
        self.fields
            .get(key)
            .unwrap_or_else(|| panic!("case {}: no field {key}", self.name))
    }

    pub fn has(&self, key: &str) -> bool {
        self.fields.contains_key(key)
    }

    pub fn ints(&self, key: &str) -> Vec<i64> {
        match self.get(key) {
            Value::Int(v) => v.clone(),
            _ => panic!("case {}: {key} is not an integer field", self.name),
        }
    }

    pub fn int(&self, key: &str) -> i64 {
        let v = self.ints(key);
        assert_eq!(v.len(), 1, "case {}: {key}", self.name);
        v[0]
    }

    pub fn i32(&self, key: &str) -> i32 {
        self.int(key) as i32
    }

    pub fn i32s(&self, key: &str) -> Vec<i32> {
        self.ints(key).into_iter().map(|v| v as i32).collect()
    }

    pub fn i64s(&self, key: &str) -> Vec<i64> {
        self.ints(key)
    }

    pub fn i8s(&self, key: &str) -> Vec<i8> {
        self.ints(key)
            .into_iter()
            .map(|v| i8::try_from(v).unwrap())
            .collect()
    }

    pub fn i16s(&self, key: &str) -> Vec<i16> {
        self.ints(key)
            .into_iter()
            .map(|v| i16::try_from(v).unwrap())
            .collect()
    }

    pub fn usize(&self, key: &str) -> usize {
        self.int(key) as usize
    }

    pub fn usizes(&self, key: &str) -> Vec<usize> {
        self.ints(key).into_iter().map(|v| v as usize).collect()
    }

    pub fn bool(&self, key: &str) -> bool {
        self.int(key) != 0
    }

    pub fn f32s(&self, key: &str) -> Vec<f32> {
        match self.get(key) {
            Value::Float(v) => v.clone(),
            _ => panic!("case {}: {key} is not a float field", self.name),
        }
    }

    pub fn f32(&self, key: &str) -> f32 {
        let v = self.f32s(key);
        assert_eq!(v.len(), 1, "case {}: {key}", self.name);
        v[0]
    }

    pub fn str(&self, key: &str) -> &str {
        match self.get(key) {
            Value::Str(s) => s,
            _ => panic!("case {}: {key} is not a string field", self.name),
        }
    }
}

pub fn parse(text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut current: Option<Case> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let key = words.next().unwrap();
        match key {
            "case" => {
                current = Some(Case {
                    name: words.next().unwrap_or("").to_string(),
                    fields: HashMap::new(),
                })
            }
            "end" => cases.push(current.take().expect("end without case")),
            _ => {
                let c = current.as_mut().expect("field outside a case");
                let kind = words.next().expect("field kind");
                let value = match kind {
                    "i" => Value::Int(words.map(|w| w.parse().unwrap()).collect()),
                    "f" => Value::Float(
                        words
                            .map(|w| f32::from_bits(u32::from_str_radix(w, 16).unwrap()))
                            .collect(),
                    ),
                    "s" => Value::Str(words.next().unwrap_or("").to_string()),
                    _ => panic!("unknown kind {kind}"),
                };
                c.fields.insert(key.to_string(), value);
            }
        }
    }
    cases
}

/// Runs `check` on the embedded cases and, if `KILN_TFLM_CASES` is set, on
/// `$KILN_TFLM_CASES/<op>.cases`. Returns the number of cases checked.
pub fn run(op: &str, embedded: &str, check: impl Fn(&Case)) -> usize {
    let mut n = 0;
    let embedded = parse(embedded);
    assert!(!embedded.is_empty(), "{op}: no embedded cases");
    for c in &embedded {
        check(c);
        n += 1;
    }
    if let Some(dir) = std::env::var_os("KILN_TFLM_CASES") {
        let path = PathBuf::from(dir).join(format!("{op}.cases"));
        if let Ok(text) = std::fs::read_to_string(&path) {
            let all = parse(&text);
            for c in &all {
                check(c);
            }
            n += all.len();
            println!("{op}: {} cases from {}", all.len(), path.display());
        }
    }
    n
}

/// Asserts two float slices are bit-identical.
#[allow(dead_code)]
pub fn assert_bits_eq(name: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "case {name}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.to_bits() == w.to_bits(),
            "case {name}: element {i}: got {g:e} ({:08x}), TFLM {w:e} ({:08x})",
            g.to_bits(),
            w.to_bits()
        );
    }
}

/// `kernel_check_common.activation_name` back to the enum.
#[allow(dead_code)]
pub fn activation(name: &str) -> kiln_kernels::quant::Activation {
    use kiln_kernels::quant::Activation;
    match name {
        "none" => Activation::None,
        "relu" => Activation::Relu,
        "relu_n1_to_1" => Activation::ReluN1To1,
        "relu6" => Activation::Relu6,
        "tanh" => Activation::Tanh,
        "sign_bit" => Activation::SignBit,
        _ => panic!("unknown activation {name}"),
    }
}

/// `kernel_check_common.padding_name` back to the enum.
#[allow(dead_code)]
pub fn padding(name: &str) -> kiln_kernels::quant::Padding {
    match name {
        "same" => kiln_kernels::quant::Padding::Same,
        "valid" => kiln_kernels::quant::Padding::Valid,
        _ => panic!("unknown padding {name}"),
    }
}

#[allow(dead_code)]
impl Case {
    /// `<prefix>_scale` / `<prefix>_zero_point` as quantization parameters.
    pub fn quant(&self, prefix: &str) -> kiln_kernels::quant::QuantParams {
        kiln_kernels::quant::QuantParams {
            scale: self.f32(&format!("{prefix}_scale")),
            zero_point: self.i32(&format!("{prefix}_zero_point")),
        }
    }

    /// A shape field as a fixed-size array.
    pub fn shape<const N: usize>(&self, key: &str) -> [usize; N] {
        self.usizes(key)
            .try_into()
            .unwrap_or_else(|v| panic!("case {}: {key} = {v:?}", self.name))
    }
}
