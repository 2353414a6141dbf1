//! The RAM a crate's linker script gives: the `LENGTH` of the `RAM` region of `memory.x` in
//! `CARGO_MANIFEST_DIR`, the cortex-m-rt convention (riscv-rt's templates name it `RAM` too).
//!
//! With no `ram_budget`, `include_model!` checks the model against it, so that a model too
//! large for the board is Kiln's error naming `memory.x`, not the linker's "`.bss` will not
//! fit in region `RAM`" (`memory_x = false` turns the check off). Only what a `MEMORY`
//! block states as numbers is read: `LENGTH = 128K`, `0x20000`, `64 * 1024`, `1M`; a region
//! whose length is an expression of symbols is not checked.

use std::path::Path;

/// The `RAM` region of a `memory.x`: its length in bytes and the line it is on.
#[derive(Debug, PartialEq, Eq)]
pub struct Ram {
    pub bytes: usize,
    pub line: usize,
}

/// `memory.x` of the crate at `manifest_dir`, if there is one with a `RAM` region of a
/// numeric length.
pub fn ram_of_crate(manifest_dir: &Path) -> Option<Ram> {
    let text = std::fs::read_to_string(manifest_dir.join("memory.x")).ok()?;
    ram(&text)
}

/// The `RAM` region's length in a linker script's `MEMORY` block.
pub fn ram(script: &str) -> Option<Ram> {
    let text = strip_comments(script);
    let start = text.find("MEMORY")?;
    let open = start + text[start..].find('{')?;
    let close = open + text[open..].find('}')?;
    let body = &text[open + 1..close];
    let line_of = |at: usize| script_line(&text, open + 1 + at);
    let mut at = 0;
    for entry in body.split_inclusive(['\n', ';']) {
        let here = at;
        at += entry.len();
        let Some((name, rest)) = entry.split_once(':') else {
            continue;
        };
        // `RAM (rwx) : ORIGIN = ..., LENGTH = ...`
        let name = name.split('(').next().unwrap_or("").trim();
        if name != "RAM" {
            continue;
        }
        let length = rest.split(',').find_map(|p| {
            p.trim()
                .strip_prefix("LENGTH")
                .or(p.trim().strip_prefix("len"))
        })?;
        let value = length.trim_start().strip_prefix('=')?.trim();
        let value = value.trim_end_matches([';', '\n', ' ', '\t', '\r']);
        return Some(Ram {
            bytes: number_expr(value)?,
            line: line_of(here + entry.len() - entry.trim_start().len()),
        });
    }
    None
}

/// The 1-based line of byte `at` (the comments were replaced by spaces of the same length,
/// so the positions are the script's).
fn script_line(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// The script with `/* ... */` comments replaced by spaces (newlines kept).
fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        let end = rest[i..].find("*/").map_or(rest.len(), |e| i + e + 2);
        out.extend(
            rest[i..end]
                .chars()
                .map(|c| if c == '\n' { '\n' } else { ' ' }),
        );
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// A product of numbers (`64 * 1024`), each decimal or hexadecimal with an optional `K` or
/// `M` suffix, as GNU ld writes them.
fn number_expr(s: &str) -> Option<usize> {
    s.split('*')
        .map(|f| number(f.trim()))
        .try_fold(1usize, |acc, n| acc.checked_mul(n?))
}

fn number(s: &str) -> Option<usize> {
    let (digits, scale) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 1024),
        b'M' | b'm' => (&s[..s.len() - 1], 1024 * 1024),
        _ => (s, 1),
    };
    let n = match digits.strip_prefix("0x").or(digits.strip_prefix("0X")) {
        Some(hex) => usize::from_str_radix(hex, 16).ok()?,
        None => digits.parse().ok()?,
    };
    n.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_ram_region_of_cortex_m_rt_and_riscv_rt_scripts() {
        let cortex_m = "/* STM32F411 */\nMEMORY\n{\n  FLASH : ORIGIN = 0x08000000, LENGTH = 512K\n  \
                        RAM : ORIGIN = 0x20000000, LENGTH = 128K\n}\n";
        assert_eq!(
            ram(cortex_m),
            Some(Ram {
                bytes: 128 * 1024,
                line: 5
            })
        );
        let riscv = "MEMORY {\n  RAM (rwx) : ORIGIN = 0x3FC80000, LENGTH = 0x50000\n  \
                     FLASH : ORIGIN = 0x42000000, LENGTH = 4M\n}\nREGION_ALIAS(\"REGION_DATA\", RAM);";
        assert_eq!(ram(riscv).map(|r| r.bytes), Some(0x50000));
        let product = "MEMORY { FLASH : ORIGIN = 0, LENGTH = 1M /* RAM : LENGTH = 1K */\n RAM : ORIGIN = 0x20000000, LENGTH = 64 * 1024 }";
        assert_eq!(ram(product).map(|r| r.bytes), Some(65536));
    }

    #[test]
    fn nothing_without_a_numeric_ram_region() {
        assert_eq!(ram("MEMORY { FLASH : ORIGIN = 0, LENGTH = 1M }"), None);
        assert_eq!(ram("MEMORY { RAM : ORIGIN = 0, LENGTH = _ram_len }"), None);
        assert_eq!(ram("SECTIONS { }"), None);
        assert_eq!(
            ram("MEMORY { RAM : ORIGIN = 0, LENGTH = 99999999999999999999K }"),
            None
        );
    }
}
