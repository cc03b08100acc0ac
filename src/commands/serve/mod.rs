//! `oware serve`: the oracle as a web page (an analysis board) and a JSON API over the tables
//! of a directory, on one tokio runtime.

mod api;
mod page;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use oware_db::Rules;

use super::common::open_tablebase;

pub use api::{router, Oracle};

/// Arguments of `oware serve`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory of the tables.
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
    /// Rules the tables must have been built with (default: those of the tables).
    #[arg(long)]
    pub rules: Option<Rules>,
    /// Address to listen on (loopback by default; port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// Open the page in the desktop's browser (`xdg-open`, or `open` on macOS).
    #[arg(long)]
    pub open: bool,
    /// Worker threads of the server (default: one per core).
    #[arg(long, value_parser = super::common::parse_threads)]
    pub threads: Option<usize>,
}

/// Runs `oware serve` until Ctrl-C (SIGINT) or SIGTERM.
///
/// # Errors
/// The tables cannot be opened, the address cannot be bound, or the runtime cannot start.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let tb = open_tablebase(&args.dir, args.rules)?;
    let oracle = Arc::new(Oracle::new(tb));
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all().thread_name("serve");
    if let Some(t) = args.threads {
        builder.worker_threads(t);
    }
    let runtime = builder
        .build()
        .context("cannot start the server's threads")?;
    runtime.block_on(serve(args, oracle))?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(args: Args, oracle: Arc<Oracle>) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .with_context(|| format!("cannot listen on {}", args.addr))?;
    let addr = listener.local_addr().context("the listening address")?;
    let url = format!("http://{addr}/");
    let tiers = oracle.tiers();
    println!(
        "oware serve: {url} (tables in {}, rules {}, {}); Ctrl-C stops",
        args.dir.display(),
        oracle.rules(),
        api::tiers_text(&tiers)
    );
    if args.open {
        open_browser(&url);
    }
    axum::serve(listener, router(oracle))
        .with_graceful_shutdown(stop_signal())
        .await
        .context("serving")?;
    println!("oware serve: stopped");
    Ok(())
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
async fn stop_signal() {
    let ctrl_c = async {
        // An error here means no handler could be installed: then only SIGTERM stops.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
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
        eprintln!("oware serve: cannot run {opener} to open {url}: {e}; open it by hand");
    }
}
