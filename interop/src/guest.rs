//! The interop guest: Linux 6.1 with Soft-RoCE (`rdma_rxe`) and rdma-core's tools under QEMU
//! (TCG), built by `tests/interop/guest.py build` (its `manifest.json` says where things are).
//!
//! - **RoCE port** (`roce0` in the guest): virtio-net on `-netdev stream` (QEMU is the server
//!   on `<dir>/roce.sock`); [`ferroce_sim::bridge::Bridge`] joins it to the simulated NIC.
//! - **Management port** (`mgmt0`, 10.0.2.15): QEMU user-mode networking with `restrict=on`,
//!   only two forwards: host 127.0.0.1:`hostfwd_port` to the guest's port 18515 (the tools as
//!   servers), and the guest's 10.0.2.100:18515 to host 127.0.0.1:`guestfwd_port` through a
//!   relay per connection (the tools as clients, `tests/interop/relay.py`). The tools' TCP setup
//!   exchange stays off the RoCE wire, whose pcap is then RoCE only.
//! - **Control**: a shell on the virtio console (`<dir>/ctl.sock`); [`Guest::start`] sends a
//!   command, [`Guest::poll`] collects its output up to a marker line with its exit status.
//!   The kernel's console goes to `<dir>/serial.log`.
//! - **Clock**: QEMU's monitor (QMP, `<dir>/qmp.sock`); `stop` freezes the guest's clock with
//!   its CPU (under TCG the TSC and every timer run on QEMU's virtual clock), `cont` lets it
//!   run on ([`Qmp`], used by [`super::hold`]).

use crate::{err, Result};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where the guest sends its tools' TCP connections to reach the host (guestfwd).
pub const HOST_ALIAS: &str = "10.0.2.100";
/// The port the tools exchange their QP parameters on.
pub const TOOL_PORT: u16 = 18515;

/// How one guest is set up.
#[derive(Clone, Debug)]
pub struct GuestConfig {
    /// `manifest.json` from `tests/interop/guest.py build`.
    pub manifest: PathBuf,
    /// Directory for the sockets and the serial log.
    pub dir: PathBuf,
    /// The RoCE port's Ethernet MTU (1500: IB MTU 1024; 9000: IB MTU 4096).
    pub eth_mtu: u32,
    pub mac: [u8; 6],
    pub ip: [u8; 4],
    /// The simulated NIC's addresses (a static neighbour entry in the guest).
    pub peer_mac: [u8; 6],
    pub peer_ip: [u8; 4],
    pub hostfwd_port: u16,
    pub guestfwd_port: u16,
    /// Python, to run `tests/interop/relay.py` for each guestfwd connection.
    pub python: PathBuf,
}

/// QEMU's monitor: one command at a time, each waited for.
pub struct Qmp {
    sock: std::io::BufReader<UnixStream>,
}

impl Qmp {
    fn connect(path: &Path) -> Result<Qmp> {
        let e = |x: std::io::Error| err(format!("{}: {x}", path.display()));
        let s = UnixStream::connect(path).map_err(e)?;
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(e)?;
        let mut q = Qmp {
            sock: std::io::BufReader::new(s),
        };
        q.line()?; // the greeting
        q.execute("qmp_capabilities")?;
        Ok(q)
    }

    fn line(&mut self) -> Result<serde_json::Value> {
        use std::io::BufRead;
        let mut l = String::new();
        match self.sock.read_line(&mut l) {
            Ok(0) => Err(err("QEMU's monitor closed")),
            Ok(_) => serde_json::from_str(&l).map_err(|e| err(format!("QMP: {e}: {l}"))),
            Err(e) => Err(err(format!("QMP: {e}"))),
        }
    }

    /// Run a QMP command without arguments and wait for its answer (events are skipped).
    pub fn execute(&mut self, cmd: &str) -> Result<()> {
        let line = format!("{{\"execute\":\"{cmd}\"}}\n");
        self.sock
            .get_mut()
            .write_all(line.as_bytes())
            .map_err(|e| err(format!("QMP {cmd}: {e}")))?;
        loop {
            let v = self.line()?;
            if v.get("return").is_some() {
                return Ok(());
            }
            if let Some(e) = v.get("error") {
                return Err(err(format!("QMP {cmd}: {e}")));
            }
        }
    }
}

/// A running guest; killed when dropped.
pub struct Guest {
    child: Child,
    ctl: UnixStream,
    /// QEMU's monitor.
    pub qmp: std::sync::Arc<std::sync::Mutex<Qmp>>,
    out: Vec<u8>,
    seq: u64,
    pub cfg: GuestConfig,
}

fn mac_str(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn ip_str(ip: &[u8; 4]) -> String {
    format!("{}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3])
}

/// The manifest's fields the guest needs.
struct Manifest {
    qemu: String,
    ld_library_path: String,
    datadir: String,
    seabios: String,
    module_dir: String,
    vmlinux: String,
    initrd: String,
}

fn read_manifest(path: &Path) -> Result<Manifest> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        err(format!(
            "{}: {e} (build the guest first: python3 tests/interop/guest.py build)",
            path.display()
        ))
    })?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| err(format!("{}: {e}", path.display())))?;
    let get = |k: &str| -> Result<String> {
        v[k].as_str()
            .map(str::to_string)
            .ok_or_else(|| err(format!("{}: no {k:?}", path.display())))
    };
    Ok(Manifest {
        qemu: get("qemu")?,
        ld_library_path: get("ld_library_path")?,
        datadir: get("datadir")?,
        seabios: get("seabios")?,
        module_dir: get("module_dir")?,
        vmlinux: get("vmlinux")?,
        initrd: get("initrd")?,
    })
}

/// The Python to run helper scripts with: the repository's `.venv` (from `.ci/setup`), else
/// `python3` from `PATH`.
pub fn python() -> PathBuf {
    let venv = ferroce_sim::cache::workspace().join(".venv/bin/python");
    if venv.is_file() {
        return venv;
    }
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("python3"))
                .find(|f| f.is_file())
        })
        .unwrap_or_else(|| PathBuf::from("python3"))
}

/// Why QEMU cannot run here, if it cannot (no manifest, or the binary does not start).
pub fn unavailable(manifest: &Path) -> Option<String> {
    let m = match read_manifest(manifest) {
        Ok(m) => m,
        Err(e) => return Some(e.to_string()),
    };
    let out = Command::new(&m.qemu)
        .arg("--version")
        .env("LD_LIBRARY_PATH", &m.ld_library_path)
        .output();
    match out {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!(
            "{} --version: {}",
            m.qemu,
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Some(format!("{}: {e}", m.qemu)),
    }
}

impl Guest {
    /// Boot a guest and wait for its control shell (about 5 s under TCG).
    pub fn boot(cfg: GuestConfig) -> Result<Guest> {
        let m = read_manifest(&cfg.manifest)?;
        std::fs::create_dir_all(&cfg.dir)
            .map_err(|e| err(format!("{}: {e}", cfg.dir.display())))?;
        let ctl_path = cfg.dir.join("ctl.sock");
        let roce_path = cfg.dir.join("roce.sock");
        let qmp_path = cfg.dir.join("qmp.sock");
        for p in [&ctl_path, &roce_path, &qmp_path] {
            let _ = std::fs::remove_file(p);
        }
        let cmdline = format!(
            "console=ttyS0 quiet ferroce.ip={} ferroce.mtu={} ferroce.peer_ip={} \
             ferroce.peer_mac={} ferroce.roce_mac={} ferroce.mgmt_mac={}",
            ip_str(&cfg.ip),
            cfg.eth_mtu,
            ip_str(&cfg.peer_ip),
            mac_str(&cfg.peer_mac),
            mac_str(&cfg.mac),
            mac_str(&mgmt_mac(&cfg.mac)),
        );
        let user = format!(
            "user,id=mgmt,restrict=on,hostfwd=tcp:127.0.0.1:{}-:{TOOL_PORT},\
             guestfwd=tcp:{HOST_ALIAS}:{TOOL_PORT}-cmd:{} {} 127.0.0.1 {}",
            cfg.hostfwd_port,
            cfg.python.display(),
            ferroce_sim::cache::workspace()
                .join("tests/interop/relay.py")
                .display(),
            cfg.guestfwd_port
        );
        let serial = cfg.dir.join("serial.log");
        let mut cmd = Command::new(&m.qemu);
        cmd.env("LD_LIBRARY_PATH", &m.ld_library_path)
            .env("QEMU_MODULE_DIR", &m.module_dir)
            .args(["-M", "q35", "-accel", "tcg", "-cpu", "max", "-m", "512"])
            .args(["-nodefaults", "-no-user-config", "-display", "none"])
            .args(["-L", &m.datadir, "-L", &m.seabios])
            .args([
                "-kernel", &m.vmlinux, "-initrd", &m.initrd, "-append", &cmdline,
            ])
            .arg("-serial")
            .arg(format!("file:{}", serial.display()))
            .args(["-netdev", &user])
            .arg("-device")
            .arg(format!(
                "virtio-net-pci,netdev=mgmt,mac={},romfile=",
                mac_str(&mgmt_mac(&cfg.mac))
            ))
            .arg("-netdev")
            .arg(format!(
                "stream,id=roce,server=on,addr.type=unix,addr.path={}",
                roce_path.display()
            ))
            .arg("-device")
            .arg(format!(
                "virtio-net-pci,netdev=roce,mac={},romfile=",
                mac_str(&cfg.mac)
            ))
            .args(["-device", "virtio-serial", "-chardev"])
            .arg(format!(
                "socket,id=ctl,path={},server=on,wait=off",
                ctl_path.display()
            ))
            .args(["-device", "virtconsole,chardev=ctl", "-qmp"])
            .arg(format!("unix:{},server=on,wait=off", qmp_path.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| err(format!("starting {}: {e}", m.qemu)))?;
        let start = Instant::now();
        let ctl = loop {
            if let Ok(s) = UnixStream::connect(&ctl_path) {
                break s;
            }
            if let Ok(Some(status)) = child.try_wait() {
                let mut msg = String::new();
                if let Some(mut e) = child.stderr.take() {
                    let _ = e.read_to_string(&mut msg);
                }
                return Err(err(format!("QEMU exited ({status}): {msg}")));
            }
            if start.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                return Err(err("QEMU did not open its control socket in 30 s"));
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        ctl.set_nonblocking(true)
            .map_err(|e| err(format!("control socket: {e}")))?;
        let qmp = Qmp::connect(&qmp_path)?;
        let mut g = Guest {
            child,
            ctl,
            qmp: std::sync::Arc::new(std::sync::Mutex::new(qmp)),
            out: Vec::new(),
            seq: 0,
            cfg,
        };
        // The shell starts once rxe0 is up; until then the console holds what we send.
        let (rc, out) = g.exec(
            "stty -echo; rdma link show rxe0/1",
            Duration::from_secs(120),
        )?;
        if rc != 0 || !out.contains("ACTIVE") {
            return Err(err(format!(
                "guest came up without an active rxe0 ({}): {out}",
                serial.display()
            )));
        }
        Ok(g)
    }

    /// Where QEMU serves the RoCE port's stream socket.
    pub fn roce_socket(&self) -> PathBuf {
        self.cfg.dir.join("roce.sock")
    }

    /// Start `cmd` in the guest's shell (one at a time).
    pub fn start(&mut self, cmd: &str) -> Result<()> {
        self.seq += 1;
        let line = format!("{cmd} 2>&1 </dev/null; echo \"@@done {} $?\"\n", self.seq);
        self.ctl
            .set_nonblocking(false)
            .and_then(|_| self.ctl.write_all(line.as_bytes()))
            .and_then(|_| self.ctl.set_nonblocking(true))
            .map_err(|e| err(format!("guest console: {e}")))
    }

    /// The last started command's exit status and output, once it has finished.
    pub fn poll(&mut self) -> Result<Option<(i32, String)>> {
        let mut buf = [0u8; 8192];
        loop {
            match self.ctl.read(&mut buf) {
                Ok(0) => return Err(err("the guest's console closed")),
                Ok(n) => self.out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => return Err(err(format!("guest console: {e}"))),
            }
        }
        let text = String::from_utf8_lossy(&self.out).replace('\r', "");
        let marker = format!("@@done {} ", self.seq);
        // The marker counts only at a line start (an echoed command line also holds it).
        let Some(at) = text
            .match_indices(&marker)
            .map(|(i, _)| i)
            .find(|&i| i == 0 || text.as_bytes()[i - 1] == b'\n')
        else {
            return Ok(None);
        };
        let rest = &text[at + marker.len()..];
        let Some(nl) = rest.find('\n') else {
            return Ok(None);
        };
        let rc = rest[..nl].trim().parse().unwrap_or(-1);
        let output = text[..at].to_string();
        self.out.clear();
        Ok(Some((rc, output)))
    }

    /// Run `cmd` and wait for it (the simulation does not run meanwhile).
    pub fn exec(&mut self, cmd: &str, timeout: Duration) -> Result<(i32, String)> {
        self.start(cmd)?;
        let start = Instant::now();
        loop {
            if let Some(r) = self.poll()? {
                return Ok(r);
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(err(format!("QEMU exited ({status}) during `{cmd}`")));
            }
            if start.elapsed() > timeout {
                return Err(err(format!("`{cmd}` did not finish in {timeout:?}")));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The management port's MAC: the RoCE port's with bit 0 of byte 4 flipped.
fn mgmt_mac(m: &[u8; 6]) -> [u8; 6] {
    let mut x = *m;
    x[4] ^= 1;
    x
}
