//! The page of `oware serve`: one HTML file, its script and its style, embedded in the
//! binary from `web/`.

use axum::http::header;
use axum::response::{Html, IntoResponse};

/// `GET /`: the analysis board.
pub async fn index() -> Html<&'static str> {
    Html(include_str!("web/index.html"))
}

/// `GET /app.js`.
pub async fn script() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("web/app.js"),
    )
}

/// `GET /style.css`.
pub async fn style() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("web/style.css"),
    )
}
