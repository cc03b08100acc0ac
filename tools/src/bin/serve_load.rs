//! `serve_load`: a load of concurrent clients on `oware serve` (`scripts/bench serve`).
//!
//! ```text
//! serve_load --url http://127.0.0.1:PORT [--clients 64] [--seconds 10] [--max-seeds 20]
//! ```
//!
//! Each client keeps one connection and asks `/api/v1/probe` for uniformly drawn placements
//! of 0..=max-seeds seeds, one request after another, until the time is up. Prints requests
//! per second, the p50, p99 and p99.9 latency and the errors (any answer but 200).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;

/// A load of concurrent clients on `oware serve`.
#[derive(Parser)]
#[command(name = "serve_load")]
struct Args {
    /// The server's address.
    #[arg(long)]
    url: String,
    /// Concurrent clients, one connection each.
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// Length of the run.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Positions drawn hold 0..=max-seeds seeds (tiers the server has).
    #[arg(long, default_value_t = 20)]
    max_seeds: u8,
}

/// One client's results: each request's latency in microseconds, and the errors.
struct Client {
    latencies: Vec<u32>,
    errors: u64,
    first_error: Option<String>,
}

fn client(url: &str, seed: u64, max: u8, until: Instant) -> Client {
    let client = ureq::builder().timeout(Duration::from_secs(10)).build();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = Client {
        latencies: Vec::with_capacity(1 << 16),
        errors: 0,
        first_error: None,
    };
    while Instant::now() < until {
        let mut houses = [0u8; 12];
        for _ in 0..rng.u8(0..=max) {
            houses[rng.usize(0..12)] += 1;
        }
        let q: Vec<String> = houses.iter().map(u8::to_string).collect();
        let target = format!("{url}/api/v1/probe?position={}", q.join(","));
        let t = Instant::now();
        let answer = match client.get(&target).call() {
            Ok(r) => r.into_string().map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        let us = t.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
        match answer {
            Ok(body) if body.starts_with('{') => out.latencies.push(us),
            Ok(body) => {
                out.errors += 1;
                out.first_error.get_or_insert(body);
            }
            Err(e) => {
                out.errors += 1;
                out.first_error.get_or_insert(e);
            }
        }
    }
    out
}

fn main() -> ExitCode {
    let args = Args::parse();
    let url = args.url.trim_end_matches('/').to_string();
    let start = Instant::now();
    let until = start + Duration::from_secs_f64(args.seconds);
    let results: Vec<Client> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..args.clients)
            .map(|k| {
                let url = &url;
                s.spawn(move || client(url, k as u64, args.max_seeds, until))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a client thread"))
            .collect()
    });
    let wall = start.elapsed().as_secs_f64();
    let mut all: Vec<u32> = results
        .iter()
        .flat_map(|c| c.latencies.iter().copied())
        .collect();
    let errors: u64 = results.iter().map(|c| c.errors).sum();
    all.sort_unstable();
    let pct = |p: f64| -> f64 {
        if all.is_empty() {
            return 0.0;
        }
        let k = ((p * all.len() as f64).ceil() as usize).clamp(1, all.len()) - 1;
        f64::from(all[k]) / 1000.0
    };
    let total = all.len() as u64 + errors;
    println!(
        "{} clients, {:.1} s: {total} requests, {:.0} requests/s; latency p50 {:.2} ms, \
         p99 {:.2} ms, p99.9 {:.2} ms; errors {errors}",
        args.clients,
        wall,
        total as f64 / wall,
        pct(0.50),
        pct(0.99),
        pct(0.999),
    );
    if let Some(e) = results.iter().find_map(|c| c.first_error.as_ref()) {
        println!("first error: {e}");
    }
    if errors > 0 || all.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
