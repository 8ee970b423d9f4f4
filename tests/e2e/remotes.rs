//! Git remotes as CI runners reach them, on loopback: smart HTTP (`git http-backend` behind a
//! small server that demands one `Authorization` header) and SSH (`sshd` with one authorized
//! key, which only an agent holds). Each bare repository logs every ref update its
//! receive-pack makes (an `update` hook), so a test reads what reached the remote.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::harness::temp_dir;
use crate::support::git::git;

/// A bare repository that logs the ref updates pushed to it.
pub struct Bare {
    _dir: tempfile::TempDir,
    /// The directory that holds the bare repository (`GIT_PROJECT_ROOT` of the HTTP server).
    pub root: PathBuf,
    /// The bare repository: `root/remote.git`.
    pub path: PathBuf,
    log: PathBuf,
}

impl Bare {
    pub fn new() -> Bare {
        let dir = temp_dir();
        let root = dir.path().to_path_buf();
        let path = root.join("remote.git");
        std::fs::create_dir(&path).unwrap();
        git(&path, &["init", "-q", "--bare", "-b", "main"]);
        let log = root.join("updates.log");
        let hook = path.join("hooks/update");
        std::fs::write(
            &hook,
            format!("#!/bin/sh\necho \"$1 $2 $3\" >> '{}'\n", log.display()),
        )
        .unwrap();
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        Bare {
            _dir: dir,
            root,
            path,
            log,
        }
    }

    /// The ref updates pushed so far, `REF OLD NEW` each, oldest first.
    pub fn updates(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The updates of refs that start with `prefix`: `(ref, created)` each (`false`: deleted).
    pub fn updates_of(&self, prefix: &str) -> Vec<(String, bool)> {
        self.updates()
            .iter()
            .filter_map(|l| {
                let mut f = l.split(' ');
                let (name, old, new) = (f.next()?, f.next()?, f.next()?);
                name.starts_with(prefix).then(|| {
                    let zero = |s: &str| s.bytes().all(|b| b == b'0');
                    (name.to_string(), zero(old) && !zero(new))
                })
            })
            .collect()
    }
}

/// One request the HTTP server answered: its method, path and query, and whether it carried
/// the expected `Authorization`.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub target: String,
    pub authorized: bool,
}

/// A smart-HTTP git server for one bare repository's root, on loopback.
pub struct Http {
    /// `http://127.0.0.1:PORT/`: the bare repository is `{base}remote.git`.
    pub base: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Http {
    /// Serves `bare` to requests whose `Authorization` header is `authorization`, and answers
    /// any other with 401 (a challenge for Basic credentials, as forges do).
    pub fn serve(bare: &Bare, authorization: &str) -> Http {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}/", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (root, want, log) = (
            bare.root.clone(),
            authorization.to_string(),
            requests.clone(),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (root, want, log) = (root.clone(), want.clone(), log.clone());
                std::thread::spawn(move || {
                    let _ = answer(stream, &root, &want, &log);
                });
            }
        });
        Http { base, requests }
    }

    pub fn url(&self) -> String {
        format!("{}remote.git", self.base)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

/// Answers one request (the connection is closed after it) through `git http-backend`.
fn answer(
    stream: TcpStream,
    root: &Path,
    want: &str,
    log: &Mutex<Vec<Request>>,
) -> std::io::Result<()> {
    let mut out = stream.try_clone()?;
    let mut r = BufReader::new(stream);
    let mut line = String::new();
    r.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut headers: Vec<(String, String)> = Vec::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let header = |k: &str| {
        headers
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    };
    if header("expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue")) {
        out.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let mut body = Vec::new();
    if let Some(n) = header("content-length").and_then(|n| n.parse::<usize>().ok()) {
        body.resize(n, 0);
        r.read_exact(&mut body)?;
    } else if header("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        loop {
            let mut size = String::new();
            r.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    }
    // The scheme is case-insensitive (actions/checkout writes `basic`), the credential not.
    let scheme_and = |v: &str| {
        v.split_once(' ')
            .map(|(s, c)| (s.to_ascii_lowercase(), c.trim().to_string()))
    };
    let authorized = header("authorization").and_then(scheme_and).is_some()
        && header("authorization").and_then(scheme_and) == scheme_and(want);
    log.lock().unwrap().push(Request {
        method: method.clone(),
        target: target.clone(),
        authorized,
    });
    if !authorized {
        out.write_all(
            b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"kco\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        )?;
        return Ok(());
    }
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let mut cgi = Command::new("git");
    cgi.arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", &method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("CONTENT_TYPE", header("content-type").unwrap_or(""))
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("REMOTE_USER", "runner")
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(p) = header("git-protocol") {
        cgi.env("GIT_PROTOCOL", p);
    }
    if let Some(e) = header("content-encoding") {
        cgi.env("HTTP_CONTENT_ENCODING", e);
    }
    let mut child = cgi.spawn()?;
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&body));
    let done = child.wait_with_output()?;
    let _ = writer.join();
    let raw = done.stdout;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| raw.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)));
    let (head, rest) = match split {
        Some((i, n)) => (
            String::from_utf8_lossy(&raw[..i]).to_string(),
            &raw[i + n..],
        ),
        None => (String::new(), &raw[..]),
    };
    let mut status = "200 OK".to_string();
    let mut response = String::new();
    for h in head.lines() {
        match h.split_once(':') {
            Some((k, v)) if k.eq_ignore_ascii_case("status") => status = v.trim().to_string(),
            Some(_) => response.push_str(&format!("{h}\r\n")),
            None => {}
        }
    }
    out.write_all(
        format!(
            "HTTP/1.1 {status}\r\n{response}Content-Length: {}\r\nConnection: close\r\n\r\n",
            rest.len()
        )
        .as_bytes(),
    )?;
    out.write_all(rest)?;
    out.flush()
}

/// An SSH server on loopback that lets in one key, for this process's user, and an agent,
/// run as the uid that will use it, holding that key.
pub struct Ssh {
    _dir: tempfile::TempDir,
    pub port: u16,
    /// Whom the server lets in (this process's user).
    pub user: String,
    /// The directory holding the agent's socket `agent.sock` (owned by the agent's uid).
    pub agent_dir: PathBuf,
    sshd: Child,
    agent: Child,
}

impl Ssh {
    /// Starts both; `None` (the test skips, saying so) where sshd or setpriv is missing.
    pub fn start(agent_uid: u32) -> Option<Ssh> {
        let sshd = Path::new("/usr/sbin/sshd");
        if !sshd.exists() || Command::new("setpriv").arg("--version").output().is_err() {
            eprintln!("skipping: no /usr/sbin/sshd or setpriv (scripts/test.sh installs them)");
            return None;
        }
        let dir = temp_dir();
        let d = dir.path();
        for key in ["host", "id"] {
            let out = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", "kco-e2e", "-f"])
                .arg(d.join(key))
                .output()
                .unwrap();
            assert!(out.status.success(), "ssh-keygen: {out:?}");
        }
        std::fs::copy(d.join("id.pub"), d.join("authorized_keys")).unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        std::fs::write(
            d.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {h}\nAuthorizedKeysFile {a}\nPidFile {p}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n",
                h = d.join("host").display(),
                a = d.join("authorized_keys").display(),
                p = d.join("sshd.pid").display(),
            ),
        )
        .unwrap();
        // sshd's privilege separation directory (Debian's package makes it at boot).
        let _ = std::fs::create_dir_all("/run/sshd");
        let sshd = Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The agent: its socket in a directory of the uid that uses it, which it alone may
        // reach (ssh-agent serves its own uid only).
        let agent_dir = d.join("agent");
        std::fs::create_dir(&agent_dir).unwrap();
        std::fs::copy(d.join("id"), agent_dir.join("id")).unwrap();
        for p in [agent_dir.clone(), agent_dir.join("id")] {
            std::os::unix::fs::chown(&p, Some(agent_uid), Some(agent_uid)).unwrap();
        }
        std::fs::set_permissions(&agent_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let sock = agent_dir.join("agent.sock");
        let as_uid = |cmd: &str| {
            let mut c = Command::new("setpriv");
            c.args([
                &format!("--reuid={agent_uid}"),
                &format!("--regid={agent_uid}"),
                "--clear-groups",
                cmd,
            ]);
            c
        };
        let agent = as_uid("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(&sock)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string();
        let ssh = Ssh {
            _dir: dir,
            port,
            user,
            agent_dir: agent_dir.clone(),
            sshd,
            agent,
        };
        let start = Instant::now();
        while !(sock.exists() && TcpStream::connect(("127.0.0.1", port)).is_ok()) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "sshd or ssh-agent did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let added = as_uid("ssh-add")
            .arg("-q")
            .arg(agent_dir.join("id"))
            .env("SSH_AUTH_SOCK", &sock)
            .output()
            .unwrap();
        assert!(added.status.success(), "ssh-add: {added:?}");
        std::fs::remove_file(agent_dir.join("id")).unwrap();
        Some(ssh)
    }

    /// The URL of `bare` through this server.
    pub fn url(&self, bare: &Bare) -> String {
        format!(
            "ssh://{}@127.0.0.1:{}{}",
            self.user,
            self.port,
            bare.path.display()
        )
    }
}

impl Drop for Ssh {
    fn drop(&mut self) {
        let _ = self.sshd.kill();
        let _ = self.agent.kill();
        let _ = self.sshd.wait();
        let _ = self.agent.wait();
    }
}
