use ferroce_hdl::crc::CrcCore;
fn main() {
    let mut c = CrcCore::<64>::new();
    let e = ferroce_hdl::emit(&mut c, "crc_core_64").unwrap();
    for m in &e.modules { println!("== {}", m.name); }
    println!("{}", e.modules.last().unwrap().text);
    println!("{}", e.modules[0].text);
}
