//! What `oware serve` checks and adds around every answer: the `Host` header of a request
//! must name the server (against DNS rebinding: a page of another site whose name is made to
//! resolve to the server's address), and every answer carries `X-Content-Type-Options:
//! nosniff` and a restrictive `Content-Security-Policy`.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

/// The `Content-Security-Policy` of every answer: the page's script, style and API calls come
/// from the server itself (`'self'`), its icon is a `data:` URL, and nothing else loads; no
/// other site may frame it, and its form posts nowhere else.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

/// The names a request's `Host` header may give for the server, each with the port served.
#[derive(Debug, Clone)]
pub struct Hosts {
    /// The port served: every `Host` must name it (or none, for port 80).
    port: u16,
    /// The names and addresses accepted, in lower case, IPv6 addresses without brackets.
    names: Vec<String>,
    /// Whether any IP address is accepted (a server on every interface, `0.0.0.0` or `::`):
    /// a page that DNS rebinding serves names its own host, never an address.
    any_address: bool,
}

impl Hosts {
    /// The hosts of a server bound to `bound`, started with `--addr given`: the loopback
    /// names (`localhost`, `127.0.0.1`, `::1`), the address bound, and the name given.
    pub fn new(bound: SocketAddr, given: &str) -> Self {
        let mut names: Vec<String> = ["localhost", "127.0.0.1", "::1"]
            .iter()
            .map(|s| (*s).to_string())
            .collect();
        names.push(bound.ip().to_string());
        if let Some((host, _)) = split_host(given) {
            names.push(host.to_ascii_lowercase());
        }
        names.sort();
        names.dedup();
        Hosts {
            port: bound.port(),
            names,
            any_address: bound.ip().is_unspecified(),
        }
    }

    /// Whether a `Host` header of `value` names this server.
    pub fn allows(&self, value: &str) -> bool {
        let Some((host, port)) = split_host(value.trim()) else {
            return false;
        };
        if port.unwrap_or(80) != self.port {
            return false;
        }
        let host = host.to_ascii_lowercase();
        let host = host.strip_suffix('.').unwrap_or(&host);
        self.names.iter().any(|n| n == host) || (self.any_address && host.parse::<IpAddr>().is_ok())
    }
}

/// A `Host` value (or an `--addr`) split into its host, IPv6 brackets removed, and its port,
/// if any; `None` where it is malformed.
fn split_host(value: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = if let Some(rest) = value.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':')?)),
        }
    } else {
        match value.rsplit_once(':') {
            // An IPv6 address without brackets has no port.
            Some((h, _)) if h.contains(':') => (value, None),
            Some((h, p)) => (h, Some(p)),
            None => (value, None),
        }
    };
    if host.is_empty() {
        return None;
    }
    let port = match port {
        Some(p) if p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse().ok()?),
        Some(_) => return None,
        None => None,
    };
    Some((host, port))
}

/// The middleware of every request: 421 (Misdirected Request) with a short JSON error for a
/// `Host` that does not name the server, 400 for a request without one; then the security
/// headers on the answer, whatever it is.
pub async fn guard(State(hosts): State<Arc<Hosts>>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .map(|h| h.to_str().unwrap_or(""));
    let mut response = match host {
        None => (
            StatusCode::BAD_REQUEST,
            Json(json!({ "error": "the request has no Host header" })),
        )
            .into_response(),
        Some(h) if !hosts.allows(h) => (
            StatusCode::MISDIRECTED_REQUEST,
            Json(json!({
                "error": "the Host header does not name this server; use its address or localhost"
            })),
        )
            .into_response(),
        Some(_) => next.run(request).await,
    };
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_the_address_and_the_name_given_are_allowed_with_the_port() {
        let h = Hosts::new("127.0.0.1:8080".parse().unwrap(), "localhost:8080");
        for ok in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LocalHost:8080",
            "localhost.:8080",
            "[::1]:8080",
        ] {
            assert!(h.allows(ok), "{ok}");
        }
        for bad in [
            "evil.example:8080",
            "127.0.0.1:8081",
            "localhost",
            "127.0.0.1",
            "192.168.1.2:8080",
            "",
            ":8080",
            "localhost:80x",
            "[::1",
            "localhost:99999",
        ] {
            assert!(!h.allows(bad), "{bad}");
        }
        let h = Hosts::new("[::1]:80".parse().unwrap(), "[::1]:80");
        assert!(h.allows("[::1]") && h.allows("localhost") && h.allows("[::1]:80"));
    }

    #[test]
    fn every_address_is_allowed_on_every_interface_but_no_other_name() {
        let h = Hosts::new("0.0.0.0:9000".parse().unwrap(), "oracle.lan:9000");
        for ok in ["192.168.1.2:9000", "[fe80::1]:9000", "oracle.lan:9000"] {
            assert!(h.allows(ok), "{ok}");
        }
        assert!(!h.allows("evil.example:9000"));
        assert!(!h.allows("192.168.1.2:9001"));
    }
}
