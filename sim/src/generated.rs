//! What a build reads from and writes into Verilator's generated C++: the slow-path files of
//! its makefile, the ports of its header, the patch that lets a clock evaluation skip the
//! input region, and the shim (a C ABI over the model) the loader binds.

use crate::cache::io_err;
use crate::Result;
use std::path::Path;

/// The generated files Verilator's makefile compiles as slow-path code (`VM_CLASSES_SLOW`,
/// `VM_SUPPORT_SLOW` in `V<top>_classes.mk`: constructors, the initial and settle passes, the
/// constant pool, the symbol table), which it builds without optimisation (`OPT_SLOW`); so
/// does this build. They run once per model, and are about a third of the whole NIC's C++:
/// the NIC's model builds in about 20% less time and runs no slower.
pub(crate) fn slow_classes(classes_mk: &str) -> Vec<String> {
    let mut slow = Vec::new();
    let mut in_slow = false;
    for line in classes_mk.lines() {
        if let Some((var, _)) = line.split_once("+=") {
            let var = var.trim();
            in_slow = var == "VM_CLASSES_SLOW" || var == "VM_SUPPORT_SLOW";
        } else if !line.starts_with(char::is_whitespace) {
            in_slow = false;
        } else if in_slow {
            let name = line.trim().trim_end_matches('\\').trim();
            if !name.is_empty() {
                slow.push(name.to_string());
            }
        }
    }
    slow
}

/// Let `fe_eval_clock` skip the input-combinational region.
///
/// Verilator 5.0xx runs the logic driven combinationally from top-level inputs (its `ico`
/// region) on every `eval()`, changed inputs or not; the region after a clock edge recomputes
/// what the edge changes. When only the clock moved since the last full evaluation, the `ico`
/// pass computes from the same inputs and the same state what the last pass did, so the
/// testbench's clock evaluations (`Model::clock`) skip it: the `_eval` function starts its
/// `ico` loop only when the shim's thread-local `fe_skip_ico` is false. Two passes of the
/// region a cycle fewer, about 1.5x on the whole NIC. A Verilator whose `_eval` does not have
/// the expected shape is left alone (every evaluation then runs the region, as before).
pub(crate) fn skip_input_region_on_clock(dir: &Path, top: &str) -> Result<bool> {
    let head = format!("void V{top}___024root___eval(V{top}___024root* vlSelf) {{");
    const START: &str = "    __VicoContinue = 1U;\n";
    for entry in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let path = entry.map_err(io_err(dir))?.path();
        if path.extension().is_none_or(|x| x != "cpp") {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(io_err(&path))?;
        let Some(at) = text.find(&head) else {
            continue;
        };
        let body_end = text[at..].find("\n}\n").map_or(text.len(), |e| at + e);
        let Some(rel) = text[at..body_end].find(START) else {
            return Ok(false);
        };
        let mut patched = String::with_capacity(text.len() + 64);
        patched.push_str("extern thread_local bool fe_skip_ico;\n");
        patched.push_str(&text[..at + rel]);
        patched.push_str("    __VicoContinue = !fe_skip_ico;\n");
        patched.push_str(&text[at + rel + START.len()..]);
        std::fs::write(&path, patched).map_err(io_err(&path))?;
        return Ok(true);
    }
    Ok(false)
}

/// A top-level port as Verilator declares it in `V<top>.h`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PortDecl {
    pub name: String,
    pub width: usize,
    pub input: bool,
}

/// Parse `VL_IN8(&clk,0,0);`, `VL_OUTW(&data,511,0,16);` and friends.
pub(crate) fn parse_ports(header: &str) -> Vec<PortDecl> {
    header
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let (kind, rest) = line.split_once('(')?;
            let input = match kind {
                k if k.starts_with("VL_IN") => true,
                k if k.starts_with("VL_OUT") => false,
                _ => return None,
            };
            let args: Vec<&str> = rest.trim_end_matches(");").split(',').collect();
            let name = args.first()?.trim().trim_start_matches('&').to_string();
            let msb: usize = args.get(1)?.trim().parse().ok()?;
            let lsb: usize = args.get(2)?.trim().parse().ok()?;
            Some(PortDecl {
                name,
                width: msb - lsb + 1,
                input,
            })
        })
        .collect()
}

pub(crate) fn shim_source(top: &str, ports: &[PortDecl], trace: bool, skips: bool) -> String {
    let n = ports.len();
    let names: String = ports.iter().map(|p| format!("\"{}\",", p.name)).collect();
    let widths: String = ports.iter().map(|p| format!("{},", p.width)).collect();
    let dirs: String = ports
        .iter()
        .map(|p| format!("{},", u8::from(p.input)))
        .collect();
    let ptrs: String = ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if p.width > 64 {
                format!(
                    "        case {i}: return (void*)m->model->{}.data();\n",
                    p.name
                )
            } else {
                format!("        case {i}: return (void*)&m->model->{};\n", p.name)
            }
        })
        .collect();
    let (trace_inc, trace_fns) = if trace {
        (
            "#include \"verilated_vcd_c.h\"\n",
            r#"
int fe_trace_open(Fe* m, const char* path) {
    if (m->tfp) return 1;
    m->tfp = new VerilatedVcdC;
    m->model->trace(m->tfp, 99);
    m->tfp->open(path);
    return 0;
}
void fe_trace_dump(Fe* m, uint64_t t) { if (m->tfp) m->tfp->dump(t); }
void fe_trace_close(Fe* m) { if (m->tfp) { m->tfp->close(); delete m->tfp; m->tfp = nullptr; } }
"#,
        )
    } else {
        (
            "",
            r#"
int fe_trace_open(Fe*, const char*) { return 2; }
void fe_trace_dump(Fe*, uint64_t) {}
void fe_trace_close(Fe*) {}
"#,
        )
    };
    let tfp_decl = if trace {
        "    VerilatedVcdC* tfp = nullptr;\n"
    } else {
        "    void* tfp = nullptr;\n"
    };
    format!(
        r#"// Generated by ferroce-sim: C ABI over the Verilator model V{top}.
#include "V{top}.h"
#include "verilated.h"
{trace_inc}#include <cstdint>

struct Fe {{
    VerilatedContext* ctx;
    V{top}* model;
{tfp_decl}}};

thread_local bool fe_skip_ico = false;

static const char* NAMES[{n}] = {{{names}}};
static const int WIDTHS[{n}] = {{{widths}}};
static const int INPUTS[{n}] = {{{dirs}}};

// The profile's counters, linked in only when the model is built with them.
extern "C" void __gcov_dump(void) __attribute__((weak));

extern "C" {{
void fe_trace_close(Fe* m);
void fe_profile_dump() {{ if (__gcov_dump) __gcov_dump(); }}
int fe_port_count() {{ return {n}; }}
const char* fe_port_name(int i) {{ return NAMES[i]; }}
int fe_port_width(int i) {{ return WIDTHS[i]; }}
int fe_port_input(int i) {{ return INPUTS[i]; }}
Fe* fe_new() {{
    Fe* m = new Fe;
    m->ctx = new VerilatedContext;
    m->ctx->traceEverOn({trace_on});
    m->model = new V{top}(m->ctx, "{top}");
    return m;
}}
void* fe_port_ptr(Fe* m, int i) {{
    switch (i) {{
{ptrs}        default: return nullptr;
    }}
}}
void fe_eval(Fe* m) {{ m->model->eval(); }}
void fe_eval_clock(Fe* m) {{ fe_skip_ico = true; m->model->eval(); fe_skip_ico = false; }}
int fe_clock_skips_inputs() {{ return {skips}; }}
void fe_delete(Fe* m) {{
    fe_trace_close(m);
    m->model->final();
    delete m->model;
    delete m->ctx;
    delete m;
}}
{trace_fns}}}
"#,
        trace_on = if trace { "true" } else { "false" },
        skips = u8::from(skips),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_slow_path_classes_of_a_verilator_makefile() {
        let mk =
            "VM_TRACE = 0\nVM_CLASSES_FAST += \\\n\tVtop \\\n\tVtop___024root__DepSet_h1__0 \\\n\
                  VM_CLASSES_SLOW += \\\n\tVtop__ConstPool_0 \\\n\tVtop___024root__Slow \\\n\
                  VM_SUPPORT_FAST += \\\nVM_SUPPORT_SLOW += \\\n\tVtop__Syms \\\n\
                  VM_GLOBAL_FAST += \\\n\tverilated \\\n";
        assert_eq!(
            slow_classes(mk),
            ["Vtop__ConstPool_0", "Vtop___024root__Slow", "Vtop__Syms"]
        );
    }

    #[test]
    fn parses_verilator_port_macros() {
        let h = "    VL_IN8(&clk,0,0);\n    VL_OUT(&m_crc_tdata,31,0);\n    VL_INW(&s_axis_tdata,511,0,16);\n    VL_IN64(&x,63,0);\n";
        let p = parse_ports(h);
        assert_eq!(p.len(), 4);
        assert_eq!(
            p[2],
            PortDecl {
                name: "s_axis_tdata".into(),
                width: 512,
                input: true
            }
        );
        assert!(!p[1].input);
    }
}
