//! Errors in text given by a user: rules strings and positions ([`ParseError`]).

use thiserror::Error;

/// An error in text given by a user: a rules string or a position.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseError {
    /// The rules string names an unknown preset, option or value.
    #[error("bad rules: {0}")]
    Rules(String),
    /// A position field is wrong; `field` is 1-based (0 when the whole position is at fault).
    #[error("bad position: {message}")]
    Position {
        /// 1-based number of the offending field, 0 if no single field is at fault.
        field: usize,
        /// What is wrong, in words.
        message: String,
    },
}

/// The most characters of a user's input that an error message quotes: a longer input is cut
/// there and `…` added ([`shorten`], [`shorten_quotes`]), so that a message stays short
/// whatever the input's length. The command line, the web API and the Python package cut
/// the same way.
pub const QUOTE_CHARS: usize = 100;

/// `text` as an error quotes it: its first [`QUOTE_CHARS`] characters, then `…` if it is
/// longer.
pub fn shorten(text: &str) -> String {
    match text.char_indices().nth(QUOTE_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// `message` with the input it quotes in backquotes cut to [`QUOTE_CHARS`] characters, then
/// `…`. The quote runs from the first backquote to the last (an input may hold backquotes of
/// its own), or to the end of the message where it has one backquote only; the text after
/// the quote is kept.
pub fn shorten_quotes(message: &str) -> String {
    let Some(open) = message.find('`') else {
        return message.to_string();
    };
    let rest = &message[open + 1..];
    let (quoted, tail) = match rest.rfind('`') {
        Some(close) => (&rest[..close], &rest[close..]),
        None => (rest, ""),
    };
    match quoted.char_indices().nth(QUOTE_CHARS) {
        Some((end, _)) => {
            let tail = if tail.is_empty() { "`" } else { tail };
            format!("{}`{}…{tail}", &message[..open], &quoted[..end])
        }
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_and_long_text_is_cut_at_the_quote_limit() {
        assert_eq!(shorten("1 2 x"), "1 2 x");
        let exact = "é".repeat(QUOTE_CHARS);
        assert_eq!(shorten(&exact), exact);
        assert_eq!(shorten(&"é".repeat(5000)), format!("{exact}…"));
    }

    #[test]
    fn a_long_quote_is_cut_and_the_text_after_it_kept() {
        let m = "bad position: field 1 (house 0) is `x`, not a count in 0..=48";
        assert_eq!(shorten_quotes(m), m);
        assert_eq!(shorten_quotes("no quote at all"), "no quote at all");
        let long = "7".repeat(QUOTE_CHARS + 1);
        assert_eq!(
            shorten_quotes(&format!("unknown preset `{long}`; valid: abapa, awari")),
            format!(
                "unknown preset `{}…`; valid: abapa, awari",
                &long[..QUOTE_CHARS]
            )
        );
        // Backquotes inside the input, and a quote never closed.
        let inner = format!("a`{long}`b");
        assert_eq!(
            shorten_quotes(&format!("in `{inner}`.")),
            format!("in `{}…`.", &inner[..QUOTE_CHARS])
        );
        assert_eq!(
            shorten_quotes(&format!("in `{long}")),
            format!("in `{}…`", &long[..QUOTE_CHARS])
        );
    }

    #[test]
    fn a_position_of_millions_of_fields_is_refused_in_a_short_message() {
        let s = "1 ".repeat(10_000_000);
        let e = s.parse::<crate::Position>().unwrap_err().to_string();
        assert!(e.len() < 200, "{} bytes", e.len());
        assert!(e.contains("found 10000000"), "{}", &e[..e.len().min(200)]);
    }
}
