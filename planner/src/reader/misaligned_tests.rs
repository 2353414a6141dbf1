//! Misaligned flatbuffers (`tests/misaligned/`, written by `tools/gen_misaligned_models.py`
//! from models of `tests/models`): every multi-byte scalar, offset and vector of scalars off
//! its alignment. They verify, and every field reads as in the aligned original. Structural
//! failures still fail, each with a message naming the check.

use super::{fb, read_model};
use crate::diag::ErrorKind;
use std::path::PathBuf;

const MODELS: [&str; 3] = ["mlp_int8", "depthwise_int8", "lstm_int8"];

fn repo_file(path: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn root(bytes: &[u8]) -> fb::Model<'_> {
    let opts = flatbuffers::VerifierOptions::default();
    fb::root_as_model_with_opts(&opts, bytes).expect("the model verifies")
}

/// Where `slice` starts in `file`.
fn at(file: &[u8], slice: &[u8]) -> usize {
    slice.as_ptr() as usize - file.as_ptr() as usize
}

/// Where a table's field is in the file (the field must be present).
fn field_at(table: &flatbuffers::Table<'_>, slot: flatbuffers::VOffsetT) -> usize {
    let o = table.vtable().get(slot);
    assert_ne!(o, 0, "the field is present");
    table.loc() + usize::from(o)
}

#[test]
fn misaligned_models_read_the_values_of_their_aligned_originals() {
    for name in MODELS {
        let aligned = repo_file(&format!("tests/models/{name}.tflite"));
        let misaligned = repo_file(&format!("tests/misaligned/{name}.tflite"));
        let (a, m) = (root(&aligned), root(&misaligned));
        // The generated Debug prints every field Kiln's schema declares, nested tables,
        // vectors and union values included (floats to the bit: Debug round-trips).
        assert_eq!(
            format!("{:?}", a.subgraphs()),
            format!("{:?}", m.subgraphs())
        );
        assert_eq!(
            format!("{:?}", a.operator_codes()),
            format!("{:?}", m.operator_codes())
        );
        assert_eq!(a.version(), m.version());
        assert_eq!(format!("{:?}", a.metadata()), format!("{:?}", m.metadata()));
        // Buffers: the same data; the misaligned file also stores `offset` = 1 (inline data)
        // and `size` = the data's length, two u64 at misaligned bytes.
        let (ab, mb) = (a.buffers().unwrap(), m.buffers().unwrap());
        assert_eq!(ab.len(), mb.len());
        let mut u64_fields = 0;
        for (x, y) in ab.iter().zip(mb.iter()) {
            let (dx, dy) = (x.data().map(|d| d.bytes()), y.data().map(|d| d.bytes()));
            assert_eq!(dx, dy, "{name}: buffer data");
            assert_eq!((x.offset(), x.size()), (0, 0));
            if let Some(d) = dy.filter(|d| !d.is_empty()) {
                assert_eq!((y.offset(), y.size()), (1, d.len() as u64), "{name}");
                for slot in [fb::Buffer::VT_OFFSET, fb::Buffer::VT_SIZE] {
                    assert_ne!(field_at(&y._tab, slot) % 8, 0, "{name}: a misaligned u64");
                    u64_fields += 1;
                }
            }
        }
        assert!(u64_fields > 0);
        // Kiln's graph is the same but for where constants sit in the file.
        let (mut ga, mut gm) = (
            read_model(&aligned).unwrap(),
            read_model(&misaligned).unwrap(),
        );
        for g in [&mut ga, &mut gm] {
            for t in &mut g.tensors {
                if let crate::ir::TensorKind::Constant { offset, .. } = &mut t.kind {
                    *offset = 0;
                }
            }
        }
        assert_eq!(ga, gm, "{name}");
    }
}

/// The test models do hold what they claim: every zero point vector, scale vector, shape
/// and operator input list, and every tensor's buffer index (a u32), off its alignment (a test
/// that could not fail otherwise).
#[test]
fn the_misaligned_models_are_misaligned() {
    for name in MODELS {
        let file = repo_file(&format!("tests/misaligned/{name}.tflite"));
        let m = root(&file);
        let (mut zero_points, mut at_4_mod_8, mut buffer_fields) = (0, 0, 0);
        for sg in m.subgraphs().unwrap() {
            for t in sg.tensors().unwrap() {
                if let Some(s) = t.shape().filter(|s| !s.is_empty()) {
                    assert_ne!(at(&file, s.bytes()) % 4, 0, "{name}: shape");
                }
                if t._tab.vtable().get(fb::Tensor::VT_BUFFER) != 0 {
                    assert_ne!(field_at(&t._tab, fb::Tensor::VT_BUFFER) % 4, 0, "{name}");
                    buffer_fields += 1;
                }
                let Some(q) = t.quantization() else { continue };
                if let Some(z) = q.zero_point().filter(|z| !z.is_empty()) {
                    let pos = at(&file, z.bytes());
                    assert_ne!(pos % 8, 0, "{name}: zero points");
                    zero_points += 1;
                    at_4_mod_8 += usize::from(pos % 8 == 4);
                }
                if let Some(s) = q.scale().filter(|s| !s.is_empty()) {
                    assert_ne!(at(&file, s.bytes()) % 4, 0, "{name}: scales");
                }
            }
            for op in sg.operators().unwrap() {
                assert_ne!(at(&file, op.inputs().unwrap().bytes()) % 4, 0, "{name}");
            }
        }
        assert!(buffer_fields > 0, "{name}");
        if name != "lstm_int8" {
            assert!(zero_points > 0 && at_4_mod_8 > 0, "{name}: {zero_points}");
        }
    }
}

#[test]
fn pacman_like_zero_points_at_4_mod_8_read() {
    // The realistic case alone: an aligned model with one zero point vector moved to 4 mod
    // 8 (the pattern of siliconlabs_keyword_spotting_pacman_v3.tflite), by hand here.
    let mut bytes = repo_file("tests/models/mlp_int8.tflite");
    let original = read_model(&bytes).unwrap();
    let (field, values) = {
        let m = root(&bytes);
        let t = m.subgraphs().unwrap().get(0).tensors().unwrap().get(1);
        let q = t.quantization().unwrap();
        let z = q.zero_point().unwrap();
        (
            field_at(&q._tab, fb::QuantizationParameters::VT_ZERO_POINT),
            z.iter().collect::<Vec<i64>>(),
        )
    };
    // Append the vector at 4 mod 8 (its length at 0 mod 8) and point the field at it.
    while !bytes.len().is_multiple_of(8) {
        bytes.push(0);
    }
    let len_at = bytes.len();
    bytes.extend((values.len() as u32).to_le_bytes());
    for v in &values {
        bytes.extend(v.to_le_bytes());
    }
    let rel = u32::try_from(len_at - field).unwrap();
    bytes[field..field + 4].copy_from_slice(&rel.to_le_bytes());
    assert_eq!((len_at + 4) % 8, 4);
    let g = read_model(&bytes).unwrap();
    assert_eq!(g.tensors[1].quant, original.tensors[1].quant);
}

fn message(bytes: &[u8]) -> String {
    let e = read_model(bytes).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Malformed, "{e}");
    e.to_string()
}

#[test]
fn a_truncated_file_asks_whether_it_is_truncated() {
    let bytes = repo_file("tests/models/mlp_int8.tflite");
    let e = message(&bytes[..2048]);
    assert!(
        e.contains("lies past the end of the file; is the file truncated?"),
        "{e}"
    );
    assert!(e.contains("expected bytes in 0..2048"), "{e}");
}

#[test]
fn structural_failures_name_their_check_and_not_truncation() {
    let e = message(&repo_file("tests/ui/fixtures/misaligned_table.tflite"));
    assert!(
        e.contains("`subgraphs[0].tensors[1]` is a table at a misaligned byte"),
        "{e}"
    );
    assert!(!e.contains("truncated"), "{e}");
    let e = message(&repo_file("tests/ui/fixtures/name_not_utf8.tflite"));
    assert!(
        e.contains("`subgraphs[0].tensors[2].name` is not UTF-8"),
        "{e}"
    );
    assert!(!e.contains("truncated"), "{e}");

    // The root table's vtable offset pointing before the start of the file.
    let mut bytes = repo_file("tests/models/mlp_int8.tflite");
    let table = u32::from_le_bytes(bytes[0..4].try_into().unwrap()) as usize;
    bytes[table..table + 4].copy_from_slice(&i32::MAX.to_le_bytes());
    let e = message(&bytes);
    assert!(
        e.contains("the vtable of the root table lies before the start of the file"),
        "{e}"
    );
    assert!(!e.contains("truncated"), "{e}");

    // A string without its terminating zero.
    let mut bytes = repo_file("tests/models/mlp_int8.tflite");
    let (start, end) = {
        let m = root(&bytes);
        let name = m
            .subgraphs()
            .unwrap()
            .get(0)
            .tensors()
            .unwrap()
            .get(0)
            .name()
            .unwrap();
        (
            at(&bytes, name.as_bytes()),
            at(&bytes, name.as_bytes()) + name.len(),
        )
    };
    assert!(end > start);
    bytes[end] = b'x';
    let e = message(&bytes);
    assert!(
        e.contains("the string `subgraphs[0].tensors[0].name` lacks its terminating zero byte"),
        "{e}"
    );
}

#[test]
fn an_offset_far_past_the_end_asks_whether_the_file_is_truncated() {
    // A misaligned offset field still has its target checked.
    let mut bytes = repo_file("tests/misaligned/mlp_int8.tflite");
    let field = {
        let m = root(&bytes);
        let t = m.subgraphs().unwrap().get(0).tensors().unwrap().get(0);
        field_at(&t._tab, fb::Tensor::VT_SHAPE)
    };
    assert_ne!(field % 4, 0);
    bytes[field..field + 4].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    let e = message(&bytes);
    assert!(
        e.contains(
            "`subgraphs[0].tensors[0].shape` lies past the end of the file; is the file truncated?"
        ),
        "{e}"
    );
}
