//! Every subcommand of `ferroce` answers `--help` with its usage, and a wrong flag is a clear
//! error, not a panic: the command's surface, as the README and docs use it.

use std::process::Command;

const SUBCOMMANDS: [&str; 8] = [
    "verilog", "demo", "perf", "docs", "pnr", "board", "cache", "interop",
];

fn ferroce(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ferroce"))
        .args(args)
        .output()
        .expect("running ferroce")
}

#[test]
fn every_subcommand_answers_help() {
    let top = ferroce(&["--help"]);
    assert!(top.status.success());
    let text = String::from_utf8_lossy(&top.stdout);
    for sub in SUBCOMMANDS {
        assert!(
            text.contains(sub),
            "`ferroce --help` does not list {sub}:\n{text}"
        );
        let out = ferroce(&[sub, "--help"]);
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "`ferroce {sub} --help` failed");
        assert!(
            help.contains(&format!("Usage: ferroce {sub}")),
            "`ferroce {sub} --help`:\n{help}"
        );
    }
}

#[test]
fn a_wrong_flag_is_an_error_that_names_it() {
    let out = ferroce(&["demo", "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--no-such-flag"), "{err}");
    let out = ferroce(&["pnr", "--design", "x", "--paths-by", "sideways"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("sideways"));
}
