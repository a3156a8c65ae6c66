//! Verilog emission: rust-hdl's generator, wrapped so that it returns errors instead of
//! panicking, with stable module names and one file per module.
//!
//! rust-hdl names the top module `top` and every sub-instance `top$path$to$inst`. We rename
//! them `<top>` and `<top>__path__to__inst`, so names depend only on the design's structure,
//! never on emission order, and a filelist (`<top>.f`) lists the files leaves first.

use crate::prelude::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum EmitError {
    #[error("design check failed for {top}: {detail}")]
    Check { top: String, detail: String },
    #[error("rust-hdl's output for {top} could not be split into modules: {detail}")]
    Malformed { top: String, detail: String },
    #[error("module name {0:?} is not a plain Verilog identifier")]
    BadName(String),
    #[error("renaming {from} to {to} in {top} would collide with an existing identifier")]
    Collision {
        top: String,
        from: String,
        to: String,
    },
    #[error("{top}: signal {name:?} is a reserved word in (System)Verilog; rename the field")]
    Keyword { top: String, name: String },
    #[error("{0}")]
    Thread(String),
    #[error("writing {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// One emitted Verilog module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmittedModule {
    pub name: String,
    pub text: String,
}

/// A design's modules, leaves first and the top last.
#[derive(Clone, Debug)]
pub struct Emitted {
    pub top: String,
    pub modules: Vec<EmittedModule>,
}

impl Emitted {
    /// All modules in one string (leaves first), as Verilator or Yosys would read them.
    pub fn text(&self) -> String {
        self.modules.iter().map(|m| m.text.as_str()).collect()
    }

    /// Write `<name>.sv` for every module and the filelist `<top>.f`; return the filelist's
    /// path. The filelist's header comment says how each tool reads the files
    /// ([`FILELIST_FLAGS`]).
    pub fn write_to(&self, dir: &Path) -> Result<PathBuf, EmitError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| EmitError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let top = &self.top;
        let mut list = format!(
            "// {top}: {} modules, one per file, leaves first; the top module is {top}.\n\
             // SystemVerilog (IEEE 1800-2012): the files use size casts, N'(x), and nothing else\n\
             // beyond Verilog-2005. Each tool reads them with these flags and no others:\n",
            self.modules.len()
        );
        for (tool, flags) in FILELIST_FLAGS {
            let _ = writeln!(list, "// {tool}: {flags}");
        }
        let _ = writeln!(
            list,
            "// e.g. iverilog -g2012 -s {top} -c {top}.f; verilator --lint-only -f {top}.f"
        );
        for m in &self.modules {
            let file = format!("{}.{EXT}", m.name);
            let path = dir.join(&file);
            write_if_changed(&path, &m.text).map_err(io(&path))?;
            let _ = writeln!(list, "{file}");
        }
        let f = dir.join(format!("{}.f", self.top));
        write_if_changed(&f, &list).map_err(io(&f))?;
        Ok(f)
    }
}

/// The emitted files' extension: they are SystemVerilog (size casts `N'(x)` come from
/// rust-hdl's code generator), named so that every tool picks its SystemVerilog reader.
pub const EXT: &str = "sv";

/// How each tool reads the emitted files, as every filelist's header states it (a test reads
/// the flags from the header and runs each tool with exactly those).
pub const FILELIST_FLAGS: [(&str, &str); 3] = [
    ("verilator", "(none: .sv files are SystemVerilog)"),
    ("iverilog", "-g2012"),
    ("yosys", "read_verilog -sv"),
];

/// A top-level port as the emitted module declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortDecl {
    pub name: String,
    pub input: bool,
    pub width: usize,
}

impl Emitted {
    /// The top module's ports, in declaration order.
    pub fn ports(&self) -> Vec<PortDecl> {
        let Some(top) = self.modules.iter().find(|m| m.name == self.top) else {
            return Vec::new();
        };
        top.text
            .lines()
            .map(str::trim)
            .take_while(|l| !l.starts_with("// Constant") && !l.starts_with("// Stub"))
            .filter_map(|l| {
                let input = l.starts_with("input ");
                if !input && !l.starts_with("output ") {
                    return None;
                }
                let decl = l.trim_end_matches(';');
                let name = decl.split_whitespace().last()?.to_string();
                let width = match (decl.find('['), decl.find(':')) {
                    (Some(a), Some(b)) if a < b => decl[a + 1..b].trim().parse::<usize>().ok()? + 1,
                    _ => 1,
                };
                Some(PortDecl { name, input, width })
            })
            .collect()
    }
}

/// Leave a file's timestamp alone when its content is unchanged, so builds keyed on it stay
/// cached.
/// The write goes to a temporary file renamed into place, so a reader in another thread or
/// process (tests emit the same design at once) never sees half a file.
fn write_if_changed(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}-{n}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// Emit `block` as Verilog with `top` as its top module's name.
pub fn emit<B: Block>(block: &mut B, top: &str) -> Result<Emitted, EmitError> {
    if !is_ident(top) {
        return Err(EmitError::BadName(top.to_string()));
    }
    block.connect_all();
    check_all(block).map_err(|e| EmitError::Check {
        top: top.to_string(),
        detail: format!("{e:?}"),
    })?;
    let raw = generate_verilog_unchecked(block);
    let malformed = |detail: String| EmitError::Malformed {
        top: top.to_string(),
        detail,
    };
    // Split into modules: each starts at "module NAME(" and ends at "endmodule // NAME".
    let mut raw_modules: Vec<(String, String)> = Vec::new();
    let mut rest = raw.as_str();
    while let Some(start) = rest.find("\nmodule ") {
        let body = &rest[start + 1..];
        let name_end = body
            .find('(')
            .ok_or_else(|| malformed("module without a port list".into()))?;
        let name = body["module ".len()..name_end].trim().to_string();
        let end_marker = format!("endmodule // {name}");
        let end = body
            .find(&end_marker)
            .ok_or_else(|| malformed(format!("no end for module {name}")))?
            + end_marker.len();
        raw_modules.push((name, body[..end].to_string()));
        rest = &body[end..];
    }
    if raw_modules.is_empty() {
        return Err(malformed("no modules".into()));
    }
    // Stable names: top -> <top>, top$a$b -> <top>__a__b.
    let renames: BTreeMap<String, String> = raw_modules
        .iter()
        .map(|(name, _)| {
            let new = match name.strip_prefix("top") {
                Some("") => top.to_string(),
                Some(path) => format!("{top}{}", path.replace('$', "__")),
                None => format!("{top}__{}", name.replace('$', "__")),
            };
            (name.clone(), new)
        })
        .collect();
    let mut modules = Vec::new();
    for (_, text) in &raw_modules {
        if let Some(name) = declared_names(text).find(|n| SV_KEYWORDS.contains(n)) {
            return Err(EmitError::Keyword {
                top: top.to_string(),
                name: name.to_string(),
            });
        }
    }
    for (name, text) in &raw_modules {
        let renamed = sized_initials(&drop_unused_localparams(&sized_casts(&rename_tokens(
            text, &renames, top,
        )?)));
        modules.push(EmittedModule {
            name: renames[name].clone(),
            text: format!("// Generated by ferroce from rust-hdl. Do not edit.\n{renamed}\n"),
        });
    }
    // Leaves first: a module goes after every module it instantiates. Deeper paths are
    // instantiated by shallower ones, so sorting by depth (deepest first) suffices.
    modules.sort_by_key(|m| std::cmp::Reverse(m.name.matches("__").count()));
    Ok(Emitted {
        top: top.to_string(),
        modules,
    })
}

/// Names declared by rust-hdl's output (ports, regs, wires, localparams): rust-hdl does not
/// escape field names, so a field named `case` becomes a syntax error downstream.
fn declared_names(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|line| {
        let line = line.trim();
        let first = line.split_whitespace().next()?;
        if !matches!(
            first,
            "input" | "output" | "inout" | "reg" | "wire" | "localparam"
        ) {
            return None;
        }
        let decl = line.split(['=', ';', ',']).next()?;
        decl.split_whitespace()
            .last()
            .filter(|n| !n.starts_with('['))
    })
}

/// IEEE 1800-2017 reserved words (Verilator and Yosys read the emitted files as SystemVerilog).
const SV_KEYWORDS: &[&str] = &[
    "accept_on",
    "alias",
    "always",
    "always_comb",
    "always_ff",
    "always_latch",
    "and",
    "assert",
    "assign",
    "assume",
    "automatic",
    "before",
    "begin",
    "bind",
    "bins",
    "binsof",
    "bit",
    "break",
    "buf",
    "bufif0",
    "bufif1",
    "byte",
    "case",
    "casex",
    "casez",
    "cell",
    "chandle",
    "checker",
    "class",
    "clocking",
    "cmos",
    "config",
    "const",
    "constraint",
    "context",
    "continue",
    "cover",
    "covergroup",
    "coverpoint",
    "cross",
    "deassign",
    "default",
    "defparam",
    "design",
    "disable",
    "dist",
    "do",
    "edge",
    "else",
    "end",
    "endcase",
    "endchecker",
    "endclass",
    "endclocking",
    "endconfig",
    "endfunction",
    "endgenerate",
    "endgroup",
    "endinterface",
    "endmodule",
    "endpackage",
    "endprimitive",
    "endprogram",
    "endproperty",
    "endspecify",
    "endsequence",
    "endtable",
    "endtask",
    "enum",
    "event",
    "eventually",
    "expect",
    "export",
    "extends",
    "extern",
    "final",
    "first_match",
    "for",
    "force",
    "foreach",
    "forever",
    "fork",
    "forkjoin",
    "function",
    "generate",
    "genvar",
    "global",
    "highz0",
    "highz1",
    "if",
    "iff",
    "ifnone",
    "ignore_bins",
    "illegal_bins",
    "implements",
    "implies",
    "import",
    "incdir",
    "include",
    "initial",
    "inout",
    "input",
    "inside",
    "instance",
    "int",
    "integer",
    "interconnect",
    "interface",
    "intersect",
    "join",
    "join_any",
    "join_none",
    "large",
    "let",
    "liblist",
    "library",
    "local",
    "localparam",
    "logic",
    "longint",
    "macromodule",
    "matches",
    "medium",
    "modport",
    "module",
    "nand",
    "negedge",
    "nettype",
    "new",
    "nexttime",
    "nmos",
    "nor",
    "noshowcancelled",
    "not",
    "notif0",
    "notif1",
    "null",
    "or",
    "output",
    "package",
    "packed",
    "parameter",
    "pmos",
    "posedge",
    "primitive",
    "priority",
    "program",
    "property",
    "protected",
    "pull0",
    "pull1",
    "pulldown",
    "pullup",
    "pulsestyle_ondetect",
    "pulsestyle_onevent",
    "pure",
    "rand",
    "randc",
    "randcase",
    "randsequence",
    "rcmos",
    "real",
    "realtime",
    "ref",
    "reg",
    "reject_on",
    "release",
    "repeat",
    "restrict",
    "return",
    "rnmos",
    "rpmos",
    "rtran",
    "rtranif0",
    "rtranif1",
    "s_always",
    "s_eventually",
    "s_nexttime",
    "s_until",
    "s_until_with",
    "scalared",
    "sequence",
    "shortint",
    "shortreal",
    "showcancelled",
    "signed",
    "small",
    "soft",
    "solve",
    "specify",
    "specparam",
    "static",
    "string",
    "strong",
    "strong0",
    "strong1",
    "struct",
    "super",
    "supply0",
    "supply1",
    "sync_accept_on",
    "sync_reject_on",
    "table",
    "tagged",
    "task",
    "this",
    "throughout",
    "time",
    "timeprecision",
    "timeunit",
    "tran",
    "tranif0",
    "tranif1",
    "tri",
    "tri0",
    "tri1",
    "triand",
    "trior",
    "trireg",
    "type",
    "typedef",
    "union",
    "unique",
    "unique0",
    "unsigned",
    "until",
    "until_with",
    "untyped",
    "use",
    "uwire",
    "var",
    "vectored",
    "virtual",
    "void",
    "wait",
    "wait_order",
    "wand",
    "weak",
    "weak0",
    "weak1",
    "while",
    "wildcard",
    "wire",
    "with",
    "within",
    "wor",
    "xnor",
    "xor",
];

/// rust-hdl writes `bit_cast::<M, _>(x)` (and `bits::<M>(x)`) as `((x) & M'hff..f)`: a mask,
/// not a resize. In Verilog the result then takes the width of its context, so a narrowing
/// cast keeps the carry of `a + b` (`docs/rust-hdl.md`) and a widening one draws a WIDTH warning.
/// This pass rewrites every such mask into the SystemVerilog size cast `(M'(x))`, which is
/// exactly M bits wide as in rust-hdl's simulator: narrowing truncates, widening zero-extends,
/// and both are explicit, so Verilator's WIDTH lint stays meaningful for everything else.
pub fn sized_casts(text: &str) -> String {
    let mut out = text.to_string();
    let mut from = 0;
    while let Some(rel) = out[from..].find(") & ") {
        let close = from + rel;
        let tail = &out[close + 4..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        let cast = tail[..digits].parse::<usize>().ok().and_then(|m| {
            let rest = tail[digits..].strip_prefix("'h")?;
            let hex = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
            let all_ones = m > 0 && hex == m.div_ceil(4) && rest[..hex] == mask_hex(m);
            (all_ones && rest[hex..].starts_with(')'))
                .then_some((m, close + 4 + digits + 2 + hex + 1))
        });
        let open = matching_open(&out, close);
        match (cast, open) {
            (Some((m, end)), Some(open)) if open > 0 && out.as_bytes()[open - 1] == b'(' => {
                let inner = out[open + 1..close].to_string();
                out.replace_range(open - 1..end, &format!("({m}'({inner}))"));
                from = open - 1;
            }
            _ => from = close + 1,
        }
    }
    out
}

/// rust-hdl declares every enum's states as `localparam`s in every module that carries the
/// enum, used or not (a state register's own module never uses them). Drop the ones a module
/// does not reference, so UNUSEDPARAM keeps meaning something.
pub fn drop_unused_localparams(text: &str) -> String {
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("localparam "))
        .filter_map(|l| l.split('=').next())
        .map(str::trim)
        .collect();
    let unused: Vec<&str> = names
        .into_iter()
        .filter(|n| count_tokens(text, n) == 1)
        .collect();
    text.lines()
        .filter(|l| {
            let t = l.trim();
            !unused.iter().any(|n| {
                t.strip_prefix("localparam ")
                    .and_then(|r| r.split('=').next())
                    .is_some_and(|d| d.trim() == *n)
            })
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

fn count_tokens(text: &str, name: &str) -> usize {
    let is_id = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    text.match_indices(name)
        .filter(|(i, _)| {
            let before = text[..*i].chars().next_back();
            let after = text[i + name.len()..].chars().next();
            !before.is_some_and(is_id) && !after.is_some_and(is_id)
        })
        .count()
}

/// rust-hdl initializes a register of enum type with a 64-bit literal (`q = 64'h0;`); size
/// the literal to the register's declared width when the value fits.
pub fn sized_initials(text: &str) -> String {
    let width_of = |name: &str| -> Option<usize> {
        text.lines().find_map(|l| {
            let t = l.trim().trim_end_matches(';');
            let decl = t
                .strip_prefix("output reg")
                .or_else(|| t.strip_prefix("reg"))?
                .trim();
            let (range, n) = match decl.strip_prefix('[') {
                Some(r) => {
                    let (range, rest) = r.split_once(']')?;
                    (Some(range), rest.trim())
                }
                None => (None, decl),
            };
            if n != name {
                return None;
            }
            match range {
                None => Some(1),
                Some(r) => {
                    let (hi, lo) = r.split_once(':')?;
                    Some(hi.trim().parse::<usize>().ok()? - lo.trim().parse::<usize>().ok()? + 1)
                }
            }
        })
    };
    let mut in_initial = false;
    text.lines()
        .map(|l| {
            let t = l.trim();
            if t == "initial begin" {
                in_initial = true;
            } else if t == "end" {
                in_initial = false;
            } else if in_initial {
                if let Some((lhs, rhs)) = t.trim_end_matches(';').split_once(" = ") {
                    if let (Some(w), Some((lw, hex))) = (width_of(lhs.trim()), rhs.split_once("'h"))
                    {
                        let fits =
                            u128::from_str_radix(hex, 16).is_ok_and(|v| w >= 128 || v >> w == 0);
                        if lw.parse::<usize>().is_ok_and(|lw| lw != w) && fits {
                            let indent = &l[..l.len() - l.trim_start().len()];
                            return format!("{indent}{lhs} = {w}'h{hex};\n");
                        }
                    }
                }
            }
            format!("{l}\n")
        })
        .collect()
}

/// The hex digits rust-hdl prints for an M-bit all-ones mask.
fn mask_hex(m: usize) -> String {
    let top = match m % 4 {
        0 => 'f',
        1 => '1',
        2 => '3',
        _ => '7',
    };
    std::iter::once(top)
        .chain(std::iter::repeat_n('f', m.div_ceil(4) - 1))
        .collect()
}

/// Index of the `(` that matches the `)` at `close`.
fn matching_open(text: &str, close: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in text.as_bytes()[..=close].iter().enumerate().rev() {
        match b {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Replace whole identifiers (Verilog identifiers may contain `$`) by their new names.
fn rename_tokens(
    text: &str,
    renames: &BTreeMap<String, String>,
    top: &str,
) -> Result<String, EmitError> {
    let is_id = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let mut out = String::with_capacity(text.len());
    let mut token = String::new();
    let mut seen = std::collections::BTreeSet::new();
    let flush =
        |token: &mut String, out: &mut String, seen: &mut std::collections::BTreeSet<String>| {
            if let Some(new) = renames.get(token.as_str()) {
                out.push_str(new);
            } else {
                seen.insert(token.clone());
                out.push_str(token);
            }
            token.clear();
        };
    for c in text.chars() {
        if is_id(c) {
            token.push(c);
        } else {
            if !token.is_empty() {
                flush(&mut token, &mut out, &mut seen);
            }
            out.push(c);
        }
    }
    if !token.is_empty() {
        flush(&mut token, &mut out, &mut seen);
    }
    for (from, to) in renames {
        if seen.contains(to) {
            return Err(EmitError::Collision {
                top: top.to_string(),
                from: from.clone(),
                to: to.clone(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{drop_unused_localparams, sized_casts, sized_initials};

    #[test]
    fn masks_become_size_casts() {
        assert_eq!(sized_casts("y = ((a + b) & 8'hff);"), "y = (8'(a + b));");
        assert_eq!(sized_casts("y = ((x) & 5'h1f) | z;"), "y = (5'(x)) | z;");
        assert_eq!(
            sized_casts("y = ((((p) & 3'h7) + q) & 65'h1ffffffffffffffff);"),
            "y = (65'((3'(p)) + q));"
        );
        // A mask that is not all ones, or not a cast's shape, stays.
        assert_eq!(sized_casts("y = ((x) & 8'h0f);"), "y = ((x) & 8'h0f);");
        assert_eq!(sized_casts("y = (x & 8'hff);"), "y = (x & 8'hff);");
    }

    #[test]
    fn enum_leftovers_are_tidied() {
        let m = "module m(q);\n  output reg  [2:0] q;\n  localparam S$A = 0;\n  localparam S$B = 1;\n  initial begin\n     q = 64'h0;\n  end\n  always @(*) q = S$B;\nendmodule\n";
        let out = sized_initials(&drop_unused_localparams(m));
        assert!(!out.contains("S$A = 0"));
        assert!(out.contains("localparam S$B = 1;"));
        assert!(out.contains("q = 3'h0;"), "{out}");
    }
}
