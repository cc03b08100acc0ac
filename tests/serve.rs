//! End-to-end tests of `oware serve`: the binary serves real tables of tiers 0..=10 on a port
//! of its own choosing, and its JSON API is checked against [`Tablebase`].

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use oware_db::{Position, Rules, Tablebase, HOUSES};
use serde_json::{json, Value};
use support::{ok, oware};

/// A running `oware serve`, stopped when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(dir: &Path) -> Server {
        Server::start_with(dir, |_| {})
    }

    /// [`Server::start`], with `setup` applied to the command first (after its default
    /// `--addr 127.0.0.1:0`, and its standard error inherited: `setup` may change both).
    fn start_with(dir: &Path, setup: impl FnOnce(&mut std::process::Command)) -> Server {
        let mut cmd = oware();
        cmd.args(["serve", "--dir"])
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        setup(&mut cmd);
        if !cmd.get_args().any(|a| a == "--addr") {
            cmd.args(["--addr", "127.0.0.1:0"]);
        }
        let mut child = cmd.spawn().expect("start oware serve");
        let mut first = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut first)
            .unwrap();
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {first:?}"))
            .trim_end_matches('/')
            .to_string();
        Server { child, url }
    }

    /// The address the server listens on.
    fn addr(&self) -> String {
        self.url.trim_start_matches("http://").to_string()
    }

    /// `GET path`: the status and the JSON body.
    fn get(&self, path: &str) -> (u16, Value) {
        let url = format!("{}{path}", self.url);
        let client = ureq::builder()
            .timeout(std::time::Duration::from_secs(30))
            .build();
        let response = match client.get(&url).call() {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("GET {url}: {e}"),
        };
        let status = response.status();
        let body: Value = response.into_json().expect("a JSON body");
        (status, body)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn generate(dir: &Path, max: u8) {
    ok(&[
        "generate",
        "--max-seeds",
        &max.to_string(),
        "--dir",
        dir.to_str().unwrap(),
    ]);
}

/// A uniformly drawn placement of `n` seeds over the 12 houses.
fn random_position(rng: &mut fastrand::Rng, n: u8) -> Position {
    let mut houses = [0u8; HOUSES];
    for _ in 0..n {
        houses[rng.usize(0..HOUSES)] += 1;
    }
    Position::new(houses).unwrap()
}

fn query(p: &Position) -> String {
    p.to_string().replace(' ', ",")
}

#[test]
fn every_move_agrees_with_the_tablebase() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), 10);
    let tb = Tablebase::open(tmp.path()).unwrap();
    let server = Server::start(tmp.path());
    let mut rng = fastrand::Rng::with_seed(22);
    let mut moves_checked = 0;
    for k in 0..1000 {
        let n = rng.u8(0..=10);
        let p = random_position(&mut rng, n);
        let (status, v) = server.get(&format!("/api/v1/probe?position={}", query(&p)));
        assert_eq!(status, 200, "{p}: {v}");
        assert_eq!(v["position"], p.to_string());
        assert_eq!(v["rules"], "abapa");
        assert_eq!(v["seeds"], p.seeds());
        assert_eq!(v["score"], tb.score(&p).unwrap(), "{p}");
        assert_eq!(v["distance"], json!(tb.distance(&p).unwrap()), "{p}");
        let want = tb.moves(&p).unwrap();
        // A finished game is flagged, its score the end score.
        let over = p.moves(&Rules::ABAPA).is_empty();
        assert_eq!(v["game_over"], over, "{p}");
        if over {
            assert_eq!(v["score"], p.end_score(), "{p}");
        }
        let got = v["moves"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{p}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g["house"], w.house, "{p}");
            assert_eq!(g["captures"], w.captured, "{p}");
            assert_eq!(g["score"], w.score, "{p}");
            assert_eq!(g["distance"], json!(w.distance), "{p}");
            let child = w.child.map(|c| c.to_string());
            assert_eq!(g["position"].as_str(), child.as_deref(), "{p}");
            moves_checked += 1;
        }
        if k % 50 == 0 {
            let (status, v) = server.get(&format!("/api/v1/line?position={}&plies=8", query(&p)));
            assert_eq!(status, 200, "{p}: {v}");
            let want = tb.best_line(&p, 8).unwrap();
            let got: Vec<i64> = v["line"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["house"].as_i64().unwrap())
                .collect();
            let want: Vec<i64> = want.iter().map(|m| i64::from(m.house)).collect();
            assert_eq!(got, want, "{p}");
        }
    }
    assert!(moves_checked > 1500, "{moves_checked} moves checked");
    let (status, v) = server.get("/api/v1/probe?position=0,0,0,0,0,0,0,3,0,1,0,0");
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["game_over"], true, "{v}");
    assert_eq!(v["score"], -4, "{v}");
    assert_eq!(v["moves"].as_array().map(Vec::len), Some(0), "{v}");
    // The outcome of a game in progress, as `oware probe --captured`.
    let (status, v) = server.get("/api/v1/probe?position=1,1,1,1,1,2,3,0,0,0,0,0&captured=18,20");
    assert_eq!(status, 200, "{v}");
    let p: Position = "1 1 1 1 1 2 3 0 0 0 0 0".parse().unwrap();
    let o = tb.outcome(&p, 18, 20).unwrap();
    assert_eq!(v["outcome"]["difference"], o.difference);
    assert_eq!(v["outcome"]["mover_total"], o.mover_total);
    let (status, v) = server.get("/api/v1/info");
    assert_eq!(status, 200);
    assert_eq!(v["complete_to"], 10);
    assert_eq!(v["tiers"].as_array().unwrap().len(), 11);
}

#[test]
fn bad_requests_get_a_reason() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), 6);
    let server = Server::start(tmp.path());
    let long = format!("/api/v1/probe?position={}", "1,".repeat(700));
    let cases: &[(&str, &str)] = &[
        ("/api/v1/probe", "missing parameter `position`"),
        ("/api/v1/probe?position=1,2,3", "expected 12 house counts"),
        (
            "/api/v1/probe?position=49,0,0,0,0,0,0,0,0,0,0,0",
            "not a count",
        ),
        (
            "/api/v1/probe?position=-1,0,0,0,0,0,0,0,0,0,0,1",
            "not a count",
        ),
        ("/api/v1/probe?position=9,9,9,9,9,9,0,0,0,0,0,0", "48"),
        ("/api/v1/info?x=1", "takes no parameters"),
        (
            "/api/v1/probe?position=1,0,0,0,0,0,0,0,0,0,0,0&x=1",
            "unknown parameter `x`",
        ),
        (
            "/api/v1/probe?position=1,0,0,0,0,0,0,0,0,0,0,0&position=1,0,0,0,0,0,0,0,0,0,0,0",
            "given twice",
        ),
        (
            "/api/v1/probe?position=1,0,0,0,0,0,0,0,0,0,0,0&captured=5",
            "is not A,B: captured takes",
        ),
        (
            "/api/v1/probe?position=1,0,0,0,0,0,0,0,0,0,0,0&captured=5,5",
            "make 11",
        ),
        (
            "/api/v1/line?position=1,0,0,0,0,0,0,0,0,0,0,0&plies=x",
            "plies",
        ),
        (
            "/api/v1/line?position=1,0,0,0,0,0,0,0,0,0,0,0&plies=5000",
            "plies",
        ),
        ("/api/v1/probe?position=%ff%00", "house counts"),
        (&long, "over the limit"),
    ];
    for (path, reason) in cases {
        let (status, v) = server.get(path);
        assert_eq!(status, 400, "{path}: {v}");
        let e = v["error"].as_str().unwrap_or_default();
        assert!(e.contains(reason), "{path}: {e:?} lacks {reason:?}");
    }
    // A missing tier: 404, the tier, the command that makes it, and the legal moves.
    let (status, v) = server.get("/api/v1/probe?position=2,1,0,0,0,0,0,0,0,0,0,5");
    assert_eq!(status, 404, "{v}");
    assert_eq!(v["missing_tier"], 8);
    assert!(
        v["generate"].as_str().unwrap().contains("--max-seeds 8"),
        "{v}"
    );
    assert_eq!(v["moves"].as_array().unwrap().len(), 2, "{v}");
    // Another method than GET: 405, as JSON.
    let url = format!("{}/api/v1/probe", server.url);
    match ureq::post(&url).call() {
        Err(ureq::Error::Status(405, r)) => {
            let v: Value = r.into_json().unwrap();
            assert!(v["error"].as_str().unwrap().contains("only GET"), "{v}");
        }
        other => panic!("POST: {other:?}"),
    }
    let (status, v) = server.get("/nowhere");
    assert_eq!(status, 404);
    assert!(v["error"].as_str().unwrap().contains("/nowhere"));
    // Random bytes in every parameter never take the server down nor give a 500.
    let mut rng = fastrand::Rng::with_seed(7);
    for _ in 0..300 {
        let len = rng.usize(0..60);
        let junk: String = (0..len).map(|_| format!("%{:02x}", rng.u8(..))).collect();
        let endpoint = ["probe", "line", "info"][rng.usize(0..3)];
        let key = ["position", "plies", "captured", "start", "moves", "x"][rng.usize(0..6)];
        let (status, v) = server.get(&format!("/api/v1/{endpoint}?{key}={junk}"));
        assert!(matches!(status, 200 | 400 | 404), "{status} {v}");
        assert!(v.is_object());
    }
    assert_eq!(server.get("/api/v1/info").0, 200);
}

/// `start=K&moves=H,H,...` in place of `position` names the position a game reaches, as
/// `oware probe --start K --moves H,H,...`; a move that cannot be played is a 400 naming its
/// place in the list.
#[test]
fn a_position_named_by_the_moves_of_a_game() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), 10);
    let server = Server::start(tmp.path());
    let p = Position::from_game(&Rules::ABAPA, 1, &[5, 2, 3]).unwrap();
    for endpoint in ["probe", "line"] {
        let (status, want) = server.get(&format!("/api/v1/{endpoint}?position={}", query(&p)));
        assert_eq!(status, 200, "{want}");
        for moves in ["5,2,3", "5,%202%20,3"] {
            let (status, got) = server.get(&format!("/api/v1/{endpoint}?start=1&moves={moves}"));
            assert_eq!(status, 200, "{got}");
            assert_eq!(got, want, "{endpoint} {moves}");
        }
    }
    // No moves: the start itself. Its tier (12) has no table here: 404, as for a position.
    let (status, v) = server.get("/api/v1/probe?start=1");
    assert_eq!(status, 404, "{v}");
    assert_eq!(v["position"], "1 1 1 1 1 1 1 1 1 1 1 1");
    let (status, v) = server.get("/api/v1/probe?start=4&moves=5,2,3");
    assert_eq!(status, 404, "{v}");
    assert_eq!(
        v["position"],
        Position::from_game(&Rules::ABAPA, 4, &[5, 2, 3])
            .unwrap()
            .to_string()
    );
    let cases: &[(&str, &str)] = &[
        (
            "/api/v1/probe?start=1&moves=0,0,0",
            "moves: move 3 (house 0) is illegal in 0 2 1 1 1 1 0 2 1 1 1 1: house 0 is empty",
        ),
        (
            "/api/v1/line?start=1&moves=5,9",
            "moves: move 2: `9` is not a house 0..=5",
        ),
        (
            "/api/v1/probe?start=1&moves=5,,3",
            "moves: move 2: `` is not a house 0..=5",
        ),
        (
            "/api/v1/probe?start=5&moves=0",
            "start: `5` is not a count of seeds per house in 1..=4",
        ),
        (
            "/api/v1/probe?start=x",
            "start: `x` is not a count of seeds per house in 1..=4",
        ),
        (
            "/api/v1/probe?moves=5",
            "parameter `moves` needs `start` (the seeds per house of the game's start, 1..=4)",
        ),
        (
            "/api/v1/probe?position=1,1,1,1,1,1,1,1,1,1,1,1&moves=5",
            "parameter `moves` needs `start` (the seeds per house of the game's start, 1..=4)",
        ),
        (
            "/api/v1/probe?position=1,1,1,1,1,1,1,1,1,1,1,1&start=1",
            "parameters `position` and `start` exclude each other: give one",
        ),
        (
            "/api/v1/probe?start=1&start=1",
            "parameter `start` is given twice",
        ),
    ];
    for (path, reason) in cases {
        let (status, v) = server.get(path);
        assert_eq!(status, 400, "{path}: {v}");
        assert_eq!(v["error"].as_str(), Some(*reason), "{path}: {v}");
    }
}

#[test]
fn a_damaged_table_is_500_and_the_rest_is_served() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), 10);
    let tb = Tablebase::open(tmp.path()).unwrap();
    // Overwrite the middle half of tier 9's blocks.
    let path = tmp.path().join(oware_db::format::tier_file_name(9));
    let mut bytes = std::fs::read(&path).unwrap();
    let len = bytes.len();
    for b in &mut bytes[len / 4..3 * len / 4] {
        *b ^= 0x5a;
    }
    std::fs::write(&path, &bytes).unwrap();
    let server = Server::start(tmp.path());
    let mut rng = fastrand::Rng::with_seed(9);
    let mut damaged = 0;
    for _ in 0..300 {
        let p = random_position(&mut rng, 9);
        let (status, v) = server.get(&format!("/api/v1/probe?position={}", query(&p)));
        match status {
            200 => {}
            500 => {
                damaged += 1;
                let e = v["error"].as_str().unwrap();
                assert!(e.contains("tier-09.owt"), "{e}");
            }
            s => panic!("{p}: {s} {v}"),
        }
    }
    assert!(damaged > 0, "no probe met the damage");
    // Tiers below 9 are whole and still answered exactly.
    for _ in 0..200 {
        let n = rng.u8(0..=8);
        let p = random_position(&mut rng, n);
        let (status, v) = server.get(&format!("/api/v1/probe?position={}", query(&p)));
        assert_eq!(status, 200, "{p}: {v}");
        assert_eq!(v["score"], tb.score(&p).unwrap());
    }
}

#[test]
fn the_page_is_served_and_sigint_stops_the_server() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), 4);
    let mut server = Server::start(tmp.path());
    for (path, kind, needle) in [
        ("/", "text/html", "<script src=\"/app.js\">"),
        ("/app.js", "text/javascript", "/api/v1/probe"),
        ("/style.css", "text/css", "#board"),
    ] {
        let r = ureq::get(&format!("{}{path}", server.url)).call().unwrap();
        assert!(
            r.content_type().starts_with(kind),
            "{path}: {}",
            r.content_type()
        );
        assert!(r.into_string().unwrap().contains(needle), "{path}");
    }
    #[cfg(unix)]
    {
        // SAFETY: sending a signal to the child process this test started.
        let sent = unsafe { libc::kill(server.child.id() as libc::pid_t, libc::SIGINT) };
        assert_eq!(sent, 0);
        let status = server.child.wait().unwrap();
        assert!(status.success(), "{status}");
        let mut rest = String::new();
        std::io::Read::read_to_string(server.child.stdout.as_mut().unwrap(), &mut rest).unwrap();
        assert!(rest.contains("stopped"), "{rest:?}");
    }
}

#[test]
fn a_directory_without_tables_or_a_taken_port_is_refused_clearly() {
    let out = oware()
        .args([
            "serve",
            "--dir",
            "/nonexistent/oware-tables",
            "--addr",
            "127.0.0.1:0",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = support::text(&out.stderr);
    assert!(
        e == "error: /nonexistent/oware-tables: No such file or directory (os error 2)\n",
        "{e}"
    );
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), 2);
    let server = Server::start(tmp.path());
    let addr = server.url.trim_start_matches("http://").to_string();
    let out = oware()
        .args(["serve", "--addr", &addr, "--dir"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = support::text(&out.stderr);
    assert!(
        e.starts_with(&format!("error: cannot listen on {addr}")),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
}

/// Sends `signal` to the server and waits for it to end, at most `limit`; returns how long it
/// took.
#[cfg(unix)]
fn stop_within(server: &mut Server, signal: libc::c_int, limit: Duration) -> Duration {
    let t0 = Instant::now();
    // SAFETY: sending a signal to the child process this test started.
    let sent = unsafe { libc::kill(server.child.id() as libc::pid_t, signal) };
    assert_eq!(sent, 0);
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            return t0.elapsed();
        }
        assert!(
            t0.elapsed() < limit,
            "the server still runs {limit:?} after the signal"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(unix)]
#[test]
fn a_named_pipe_in_place_of_a_table_holds_no_worker() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), 8);
    let tier = tmp.path().join(oware_db::format::tier_file_name(7));
    std::fs::remove_file(&tier).unwrap();
    let c = std::ffi::CString::new(tier.to_str().unwrap()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let mut server = Server::start_with(tmp.path(), |c| {
        c.args(["--threads", "1"]);
    });
    let p = "2 1 1 1 1 0 0 0 0 0 0 1";
    // Many more requests for the pipe's tier than workers: each is answered at once.
    for _ in 0..8 {
        let (status, v) = server.get(&format!("/api/v1/probe?position={p}"));
        assert_eq!(status, 500, "{v}");
        let e = v["error"].as_str().unwrap();
        assert!(e.contains("tier-07.owt: is a named pipe"), "{e}");
    }
    assert_eq!(server.get("/api/v1/info").0, 200);
    assert_eq!(
        server
            .get("/api/v1/probe?position=1,0,0,0,0,0,0,0,0,0,0,1")
            .0,
        200
    );
    stop_within(&mut server, libc::SIGTERM, Duration::from_secs(10));
}

#[cfg(unix)]
#[test]
fn a_table_truncated_under_the_server_is_500_until_whole_again() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), 10);
    let tb = Tablebase::open(tmp.path()).unwrap();
    let path = tmp.path().join(oware_db::format::tier_file_name(10));
    let whole = std::fs::read(&path).unwrap();
    let server = Server::start(tmp.path());
    let mut rng = fastrand::Rng::with_seed(3);
    let positions: Vec<Position> = (0..50).map(|_| random_position(&mut rng, 10)).collect();
    for p in &positions[..10] {
        let (status, v) = server.get(&format!("/api/v1/probe?position={}", query(p)));
        assert_eq!(status, 200, "{p}: {v}");
    }
    // Cut short in place, as `truncate -s 1000` does.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(1000)
        .unwrap();
    for p in &positions {
        let (status, v) = server.get(&format!("/api/v1/probe?position={}", query(p)));
        assert_eq!(status, 500, "{p}: {v}");
        let e = v["error"].as_str().unwrap();
        assert!(e.contains("tier-10.owt") && e.contains("changed"), "{e}");
        let (status, v) = server.get(&format!("/api/v1/line?position={}", query(p)));
        assert_eq!(status, 500, "{p}: {v}");
    }
    // The other tiers are served.
    for _ in 0..50 {
        let n = rng.u8(0..=9);
        let p = random_position(&mut rng, n);
        let (status, v) = server.get(&format!("/api/v1/probe?position={}", query(&p)));
        assert_eq!(status, 200, "{p}: {v}");
        assert_eq!(v["score"], tb.score(&p).unwrap());
    }
    // Whole again, in place: served again, exactly.
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.write_all(&whole).unwrap();
    }
    for p in &positions {
        let (status, v) = server.get(&format!("/api/v1/probe?position={}", query(p)));
        assert_eq!(status, 200, "{p}: {v}");
        assert_eq!(v["score"], tb.score(p).unwrap(), "{p}");
    }
}

/// A connection that sends `sent` and then nothing.
fn silent(addr: &str, sent: &[u8]) -> std::net::TcpStream {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.write_all(sent).unwrap();
    s
}

/// Whether the server closes `s` within `limit` (it reads the end of the stream, or a reset).
fn closed_within(s: &mut std::net::TcpStream, limit: Duration) -> bool {
    use std::io::Read;
    s.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return false
            }
            Err(_) => return true,
        }
    }
}

#[test]
fn silent_connections_are_closed() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), 4);
    let server = Server::start(tmp.path());
    let addr = server.addr();
    let t0 = Instant::now();
    let mut idle = silent(&addr, b"");
    let mut half = silent(&addr, b"GET /api/v1/info HTTP/1.1\r\nHost: x\r\n");
    // A keep-alive connection after its answer.
    let mut kept = silent(&addr, b"GET /api/v1/info HTTP/1.1\r\nHost: x\r\n\r\n");
    for s in [&mut idle, &mut half, &mut kept] {
        assert!(closed_within(s, Duration::from_secs(25)), "still open");
    }
    let took = t0.elapsed();
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert_eq!(server.get("/api/v1/info").0, 200);
}

#[cfg(unix)]
#[test]
fn idle_connections_do_not_shut_other_clients_out() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), 8);
    // A limit of 64 open files, as `prlimit --nofile=64`.
    let server = Server::start_with(tmp.path(), |c| {
        use std::os::unix::process::CommandExt;
        // SAFETY: only `setrlimit`, async-signal-safe, between fork and exec.
        unsafe {
            c.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: 64,
                    rlim_max: 64,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    });
    let addr = server.addr();
    let mut idle: Vec<std::net::TcpStream> = (0..60)
        .map(|k| {
            silent(
                &addr,
                if k % 2 == 0 {
                    b""
                } else {
                    b"GET / HTTP/1.1\r\n"
                },
            )
        })
        .collect();
    // Another client is answered, within the header timeout and some slack.
    let t0 = Instant::now();
    let client = ureq::builder().timeout(Duration::from_secs(5)).build();
    let url = format!(
        "{}/api/v1/probe?position=1,0,0,0,0,0,0,0,0,0,0,1",
        server.url
    );
    let mut refused = 0;
    loop {
        match client.get(&url).call() {
            Ok(r) => {
                assert_eq!(r.status(), 200);
                break;
            }
            Err(ureq::Error::Status(503, r)) => {
                let v: Value = r.into_json().unwrap();
                assert!(v["error"].as_str().unwrap().contains("connections"), "{v}");
                refused += 1;
            }
            Err(_) => refused += 1,
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no answer after {refused} tries"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // The idle ones are closed.
    for s in idle.iter_mut().take(4) {
        assert!(closed_within(s, Duration::from_secs(25)));
    }
}

#[cfg(unix)]
#[test]
fn sigterm_stops_the_server_within_a_bound_whatever_its_connections_do() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), 4);
    let mut server = Server::start(tmp.path());
    let addr = server.addr();
    let _half = silent(&addr, b"GET /api/v1/info HTTP/1.1\r\nHost: x\r\n");
    let _idle = silent(&addr, b"");
    assert_eq!(server.get("/api/v1/info").0, 200);
    std::thread::sleep(Duration::from_millis(200));
    let took = stop_within(&mut server, libc::SIGTERM, Duration::from_secs(10));
    assert!(took < Duration::from_secs(6), "{took:?}");
}

#[test]
fn answers_do_not_reveal_where_the_tables_are() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tables");
    generate(&dir, 4);
    let server = Server::start(&dir);
    let secret = tmp.path().to_str().unwrap();
    let (status, v) = server.get("/api/v1/info");
    assert_eq!(status, 200);
    assert_eq!(v["dir"], "tables");
    let (status, v) = server.get("/api/v1/probe?position=2,1,1,1,0,0,0,0,0,0,0,1");
    assert_eq!(status, 404, "{v}");
    let text = v.to_string();
    assert!(!text.contains(secret), "{text}");
    assert!(
        v["error"].as_str().unwrap().contains("tables/tier-06.owt"),
        "{v}"
    );
    assert!(
        v["generate"]
            .as_str()
            .unwrap()
            .starts_with("oware generate --dir tables "),
        "{v}"
    );
}

#[test]
fn a_directory_of_romein_bal_files_is_served() {
    let tmp = tempfile::tempdir().unwrap();
    let (ours, vu) = (tmp.path().join("ours"), tmp.path().join("vu"));
    ok(&[
        "generate",
        "--rules",
        "awari",
        "--no-distance",
        "--max-seeds",
        "16",
        "--dir",
        ours.to_str().unwrap(),
    ]);
    ok(&[
        "export",
        "--format",
        "romein",
        "--dir",
        ours.to_str().unwrap(),
        "--out",
        vu.to_str().unwrap(),
    ]);
    let server = Server::start(&vu);
    let (status, body) = server.get("/api/v1/probe?position=1,1,1,1,1,2,4,2,3,0,0,0");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["rules"], "awari");
    assert_eq!(body["score"], 0);
    let mut values: Vec<(u64, i64)> = body["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["house"].as_u64().unwrap(), m["score"].as_i64().unwrap()))
        .collect();
    values.sort();
    let values: Vec<i64> = values.into_iter().map(|(_, s)| s).collect();
    assert_eq!(values, [-1, -1, -2, -2, -2, 0]);
    // The same answers as the tables the files came from, move for move.
    let tb = oware_db::Tablebase::open(&ours).unwrap();
    let mut rng = fastrand::Rng::with_seed(16);
    for _ in 0..200 {
        let n = rng.u8(1..=16);
        let p = random_position(&mut rng, n);
        let (status, body) = server.get(&format!("/api/v1/probe?position={}", query(&p)));
        assert_eq!(status, 200, "{p}: {body}");
        assert_eq!(body["score"], i64::from(tb.score(&p).unwrap()), "{p}");
    }
}

/// `GET path` sent by hand with the `Host` header `host` (none where `None`, in HTTP/1.0): the
/// answer's status and its whole text, headers included.
fn get_with_host(addr: &str, path: &str, host: Option<&str>) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let request = match host {
        Some(h) => format!("GET {path} HTTP/1.1\r\nHost: {h}\r\nConnection: close\r\n\r\n"),
        None => format!("GET {path} HTTP/1.0\r\n\r\n"),
    };
    s.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"));
    (status, answer)
}

/// The port of an address `HOST:PORT`.
fn port_of(addr: &str) -> &str {
    addr.rsplit_once(':').unwrap().1
}

#[test]
fn a_host_that_does_not_name_the_server_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), 2);
    let server = Server::start(tmp.path());
    let addr = server.addr();
    let port = port_of(&addr);
    let other = if port == "1" { "2" } else { "1" };
    // DNS rebinding: a page of another site whose name resolves to the server.
    for host in [
        format!("evil.example:{port}"),
        "evil.example".to_string(),
        format!("localhost.evil.example:{port}"),
        format!("127.0.0.1:{other}"),
        format!("localhost:{other}"),
        "localhost".to_string(),
        String::new(),
    ] {
        for path in [
            "/",
            "/api/v1/info",
            "/api/v1/probe?position=1,0,0,0,0,0,0,0,0,0,0,1",
        ] {
            let (status, answer) = get_with_host(&addr, path, Some(&host));
            assert_eq!(status, 421, "Host {host:?}, {path}: {answer}");
            let body = answer.split("\r\n\r\n").nth(1).unwrap_or("");
            assert!(body.len() < 200 && body.contains("Host"), "{answer}");
            assert!(!answer.contains("abapa"), "{answer}");
        }
    }
    let (status, answer) = get_with_host(&addr, "/api/v1/info", None);
    assert_eq!(status, 400, "{answer}");
    // The address served and the loopback names, with its port, are served.
    for host in [
        addr.clone(),
        format!("localhost:{port}"),
        format!("LOCALHOST:{port}"),
        format!("[::1]:{port}"),
        format!("127.0.0.1:{port}"),
    ] {
        let (status, answer) = get_with_host(&addr, "/api/v1/info", Some(&host));
        assert_eq!(status, 200, "Host {host:?}: {answer}");
    }
}

#[test]
fn every_answer_forbids_sniffing_and_loads_only_from_the_server() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), 2);
    let server = Server::start(tmp.path());
    let addr = server.addr();
    let host = Some(addr.as_str());
    for path in [
        "/",
        "/app.js",
        "/style.css",
        "/api/v1/info",
        "/api/v1/probe?position=1,0,0,0,0,0,0,0,0,0,0,1",
        "/api/v1/probe?position=x",
        "/api/v1/probe?position=2,2,2,2,2,2,2,2,2,2,2,2",
        "/nothing",
    ] {
        let (status, answer) = get_with_host(&addr, path, host);
        let head = answer
            .split("\r\n\r\n")
            .next()
            .unwrap()
            .to_ascii_lowercase();
        assert!(status < 500, "{path}: {answer}");
        assert!(
            head.contains("\r\nx-content-type-options: nosniff"),
            "{path}: {head}"
        );
        let csp = head
            .lines()
            .find_map(|l| l.strip_prefix("content-security-policy: "))
            .unwrap_or_else(|| panic!("{path}: no Content-Security-Policy in {head}"));
        for directive in [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "connect-src 'self'",
            "frame-ancestors 'none'",
        ] {
            assert!(csp.contains(directive), "{path}: {csp}");
        }
        assert!(!csp.contains("unsafe"), "{path}: {csp}");
    }
    // The policy lets the page work: its script and style are files of the server, and it
    // holds no inline script, style or handler that the policy would block.
    let (_, page) = get_with_host(&addr, "/", host);
    let page = page.split("\r\n\r\n").nth(1).unwrap();
    assert!(page.contains("<script src=\"/app.js\"></script>"));
    assert!(page.contains("<link rel=\"stylesheet\" href=\"/style.css\">"));
    assert_eq!(page.matches("<script").count(), 1, "an inline script");
    for blocked in [
        "<style",
        " style=",
        " onclick=",
        " onload=",
        "javascript:",
        "http://",
        "https://",
    ] {
        assert!(!page.contains(blocked), "{blocked}");
    }
    let (_, script) = get_with_host(&addr, "/app.js", host);
    for blocked in [
        "eval(",
        "new Function",
        "style=",
        "setAttribute('style'",
        "http://",
        "https://",
    ] {
        assert!(!script.contains(blocked), "app.js: {blocked}");
    }
}

#[test]
fn a_name_is_resolved_and_an_address_not_loopback_is_warned_of() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), 2);
    let stderr_of = |mut server: Server| {
        let _ = server.child.kill();
        let _ = server.child.wait();
        let mut e = String::new();
        std::io::Read::read_to_string(server.child.stderr.as_mut().unwrap(), &mut e).unwrap();
        e
    };
    let server = Server::start_with(tmp.path(), |c| {
        c.args(["--addr", "localhost:0"]).stderr(Stdio::piped());
    });
    let addr = server.addr();
    let ip: std::net::SocketAddr = addr.parse().expect("the URL names the address bound");
    assert!(ip.ip().is_loopback(), "{addr}");
    let (status, answer) = get_with_host(
        &addr,
        "/api/v1/info",
        Some(&format!("localhost:{}", ip.port())),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(stderr_of(server), "");

    let server = Server::start_with(tmp.path(), |c| {
        c.args(["--addr", "0.0.0.0:0"]).stderr(Stdio::piped());
    });
    let port = port_of(&server.addr()).to_string();
    let (status, _) = get_with_host(
        &format!("127.0.0.1:{port}"),
        "/api/v1/info",
        Some(&format!("127.0.0.1:{port}")),
    );
    assert_eq!(status, 200);
    let e = stderr_of(server);
    assert!(
        e.starts_with(&format!(
            "oware serve: warning: 0.0.0.0:{port} is not a loopback address"
        )),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");

    let out = oware()
        .args(["serve", "--addr", "no-such-host.invalid:8080", "--dir"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = support::text(&out.stderr);
    assert!(
        e.contains("`no-such-host.invalid:8080` is not an address to listen on"),
        "{e}"
    );
}

#[cfg(unix)]
#[test]
fn sigint_as_soon_as_the_url_is_printed_stops_the_server_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), 2);
    for _ in 0..10 {
        let mut server = Server::start(tmp.path());
        // SAFETY: sending a signal to the child process this test started.
        let sent = unsafe { libc::kill(server.child.id() as libc::pid_t, libc::SIGINT) };
        assert_eq!(sent, 0);
        let status = server.child.wait().unwrap();
        assert!(status.success(), "{status}");
    }
}
