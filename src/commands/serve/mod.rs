//! `oware serve`: the oracle as a web page (an analysis board) and a JSON API over the tables
//! of a directory, on one tokio runtime.

mod api;
mod guard;
mod page;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use oware_db::Rules;
use tokio::sync::Semaphore;

use super::common::open_tablebase;

pub use api::{router, Oracle};
pub use guard::{Hosts, CONTENT_SECURITY_POLICY};

/// Arguments of `oware serve`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory of the tables.
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
    /// Read the directory as Romein-Bal files (`scores.N`, rules `awari`) even where it
    /// holds tables of this program too (a directory with `scores.N` files and no
    /// `tier-NN.owt` is read so without it).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<super::common::Format>,
    /// Rules the tables must have been built with (default: those of the tables).
    #[arg(long)]
    pub rules: Option<Rules>,
    /// Address to listen on, `HOST:PORT`: an IP address or a name that resolves to one
    /// (`localhost:8080`); loopback by default, port 0 picks a free port. Any other address
    /// is warned of: whoever can reach it can query the tables.
    #[arg(long, default_value = "127.0.0.1:8080", value_parser = parse_addr)]
    pub addr: Addr,
    /// Open the page in the desktop's browser (`xdg-open`, or `open` on macOS).
    #[arg(long)]
    pub open: bool,
    /// Worker threads of the server (default: one per core).
    #[arg(long, value_parser = super::common::parse_threads)]
    pub threads: Option<usize>,
}

/// An address to listen on as given, with the socket addresses it resolves to.
#[derive(Clone, Debug)]
pub struct Addr {
    /// The text given (`127.0.0.1:8080`, `localhost:8080`, `[::1]:0`).
    pub text: String,
    /// What it resolves to, in the order tried; never empty.
    pub resolved: Vec<SocketAddr>,
}

/// Parses `--addr`: `HOST:PORT`, the host an IP address or a name, resolved now.
fn parse_addr(s: &str) -> Result<Addr, String> {
    use std::net::ToSocketAddrs;
    let quoted = oware_db::shorten(s);
    let resolved: Vec<SocketAddr> = s
        .to_socket_addrs()
        .map_err(|e| format!("`{quoted}` is not an address to listen on (HOST:PORT): {e}"))?
        .collect();
    if resolved.is_empty() {
        return Err(format!("`{quoted}` resolves to no address"));
    }
    Ok(Addr {
        text: s.to_string(),
        resolved,
    })
}

/// How long a connection may take to send a request's whole header, and how long an idle
/// keep-alive connection is kept waiting for the next one.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a stop (Ctrl-C, SIGTERM) waits for the requests under way before it ends the
/// process whatever they are doing.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// The most connections served at once; fewer under a low limit of open files
/// ([`connection_cap`]).
pub const MAX_CONNECTIONS: usize = 1024;

/// Open files kept for the process's own use under the limit of open files (standard
/// streams, the listener, the runtime's), besides one per table.
const RESERVED_FILES: u64 = 32;

/// Runs `oware serve` until Ctrl-C (SIGINT) or SIGTERM.
///
/// # Errors
/// The tables cannot be opened, the address cannot be bound, or the runtime cannot start.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let tb = open_tablebase(&args.dir, args.rules, args.format)?;
    let oracle = Arc::new(Oracle::new(tb));
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all().thread_name("serve");
    // Always set: the runtime would otherwise read `TOKIO_WORKER_THREADS`, unchecked.
    builder.worker_threads(args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(super::common::MAX_THREADS)
    }));
    let runtime = start_runtime(builder)?;
    let result = runtime.block_on(serve(args, oracle));
    // A request stuck in a read of the disk must not keep the process alive.
    runtime.shutdown_timeout(STOP_GRACE);
    result?;
    Ok(ExitCode::SUCCESS)
}

/// Builds the runtime; a failure to start its threads is an error, not a panic (the runtime
/// panics when the system refuses it its first threads).
fn start_runtime(mut builder: tokio::runtime::Builder) -> anyhow::Result<tokio::runtime::Runtime> {
    // The threads are started by `build`: check that the system gives one at all first, so
    // that the common refusal (a limit on processes) is an error, not the runtime's panic.
    std::thread::Builder::new()
        .name("serve".into())
        .spawn(|| ())
        .and_then(|t| {
            t.join()
                .map_err(|_| std::io::Error::other("thread panicked"))
        })
        .context("cannot start the server's threads")?;
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || builder.build()));
    std::panic::set_hook(quiet);
    match built {
        Ok(runtime) => runtime.context("cannot start the server's threads"),
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_else(|| "the runtime failed to start".into());
            anyhow::bail!("cannot start the server's threads: {why}")
        }
    }
}

/// The most connections served at once: [`MAX_CONNECTIONS`], or under a lower limit of open
/// files that limit less [`RESERVED_FILES`] and one per table, and at least 1.
pub fn connection_cap(tables: usize) -> usize {
    let reserved = RESERVED_FILES + tables as u64;
    match open_files_limit() {
        Some(limit) => usize::try_from(
            limit
                .saturating_sub(reserved)
                .clamp(1, MAX_CONNECTIONS as u64),
        )
        .unwrap_or(MAX_CONNECTIONS),
        None => MAX_CONNECTIONS,
    }
}

/// The process's limit of open files (`RLIMIT_NOFILE`, soft), where it has one.
fn open_files_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `getrlimit` writes the limit into the struct passed, which lives here.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0
            && limit.rlim_cur != libc::RLIM_INFINITY
        {
            // `rlim_t` is not `u64` on every system.
            #[allow(clippy::unnecessary_cast)]
            return Some(limit.rlim_cur as u64);
        }
    }
    None
}

async fn serve(args: Args, oracle: Arc<Oracle>) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(&args.addr.resolved[..])
        .await
        .with_context(|| format!("cannot listen on {}", args.addr.text))?;
    let addr = listener.local_addr().context("the listening address")?;
    if !addr.ip().is_loopback() {
        crate::output::errln!(
            "oware serve: warning: {addr} is not a loopback address: whoever can reach it can \
             query the tables"
        );
    }
    let hosts = Arc::new(Hosts::new(addr, &args.addr.text));
    let stop = stop_signal();
    let url = format!("http://{addr}/");
    let tiers = oracle.tiers();
    let cap = connection_cap(tiers.len());
    crate::output::outln!(
        "oware serve: {url} (tables in {}, rules {}, {}); Ctrl-C stops",
        args.dir.display(),
        oracle.rules(),
        api::tiers_text(&tiers)
    )?;
    if args.open {
        open_browser(&url);
    }
    let app = router(oracle).layer(axum::middleware::from_fn_with_state(hosts, guard::guard));
    let permits = Arc::new(Semaphore::new(cap));
    let (stopping, stop_rx) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(_) => {
                        // Out of open files, or a connection reset before it was accepted:
                        // the next accept may succeed once a connection has closed.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
                    refuse(stream, cap);
                    continue;
                };
                connections.spawn(connection(stream, app.clone(), stop_rx.clone(), permit));
            }
        }
    }
    drop(listener);
    let _ = stopping.send(true);
    // The requests under way finish, up to a bound; then the rest are dropped.
    let _ = tokio::time::timeout(STOP_GRACE, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    connections.abort_all();
    crate::output::outln!("oware serve: stopped")?;
    Ok(())
}

/// Serves one connection over HTTP/1.1 until it closes, its client is silent past
/// [`HEADER_TIMEOUT`] (a header sent too slowly, or an idle keep-alive), or the server stops
/// (then the request under way is answered, within [`STOP_GRACE`]).
async fn connection(
    stream: tokio::net::TcpStream,
    app: axum::Router,
    mut stop: tokio::sync::watch::Receiver<bool>,
    _permit: tokio::sync::OwnedSemaphorePermit,
) {
    let service = hyper_util::service::TowerToHyperService::new(app);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT);
    let conn = http.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = stop.changed() => {
            conn.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(STOP_GRACE, conn).await;
        }
    }
}

/// Answers a connection over the cap with 503 and closes it, without waiting on its client.
fn refuse(stream: tokio::net::TcpStream, cap: usize) {
    let body = format!(
        "{{\"error\":\"the server is serving {cap} connections, its most; try again later\"}}"
    );
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\nretry-after: 1\r\n\
         x-content-type-options: nosniff\r\ncontent-security-policy: {CONTENT_SECURITY_POLICY}\r\n\
         \r\n{body}",
        body.len()
    );
    // Best effort: the answer fits in the socket's buffer, or the client is not reading.
    let _ = stream.try_write(answer.as_bytes());
}

/// A future that resolves on SIGINT (Ctrl-C) or SIGTERM. The handlers are installed when
/// this is called, not when the future is first polled: a signal sent as soon as the URL is
/// printed stops the server cleanly instead of ending the process.
fn stop_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, Signal, SignalKind};
        // An error here means no handler could be installed: then that signal does not stop
        // the server cleanly, the other still does.
        let interrupt = signal(SignalKind::interrupt()).ok();
        let terminate = signal(SignalKind::terminate()).ok();
        async fn received(s: Option<Signal>) {
            match s {
                Some(mut s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        }
        async move {
            tokio::select! {
                () = received(interrupt) => {},
                () = received(terminate) => {},
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

/// Asks the desktop to open `url`; says so when it cannot (the server goes on).
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        crate::output::errln!(
            "oware serve: cannot run {opener} to open {url}: {e}; open it by hand"
        );
    }
}
