//! One line for the user out of an error body, whatever shape a provider or a proxy sent
//! it in (JSON in several layouts, an HTML page, plain text). Here because the stream
//! decoders report errors the provider puts inside a stream with it.

/// One line describing an HTML page: its `<title>`, else its first `<h1>`, else the start
/// of its text. `None` when the bytes do not look like HTML.
pub fn html_summary(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let lower = text.to_ascii_lowercase();
    let looks_html = ["<html", "<!doctype", "<head", "<body", "<title"]
        .iter()
        .any(|tag| lower.contains(tag));
    if !looks_html {
        return None;
    }
    let inside = |tag: &str| {
        let open = lower.find(&format!("<{tag}"))?;
        let start = open + lower[open..].find('>')? + 1;
        let end = start + lower[start..].find(&format!("</{tag}"))?;
        let inner = strip_tags(&text[start..end]);
        (!inner.is_empty()).then_some(inner)
    };
    let summary = inside("title")
        .or_else(|| inside("h1"))
        .unwrap_or_else(|| strip_tags(&text));
    Some(if summary.is_empty() {
        "an empty HTML page".to_string()
    } else {
        format!("{} (an HTML page)", truncate(&summary, 200))
    })
}

/// The text of an HTML fragment: tags dropped, common entities decoded, whitespace
/// collapsed.
fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len().min(4096));
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    let out = out
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A short, single-line, printable preview of a body that is not what was expected.
pub fn body_snippet(body: &[u8]) -> String {
    if let Some(summary) = html_summary(body) {
        return summary;
    }
    let text = String::from_utf8_lossy(body);
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let text = text.trim();
    if text.is_empty() {
        "an empty body".to_string()
    } else {
        format!("`{}`", truncate(text, 200))
    }
}

/// Extracts a human message from an error body in any of the shapes providers use.
pub fn error_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(body) else {
        if let Some(summary) = html_summary(body) {
            return summary;
        }
        let trimmed = text.trim();
        return if trimmed.is_empty() {
            "no details in the response".into()
        } else {
            truncate(trimmed, 300)
        };
    };
    let json = match &json {
        serde_json::Value::Array(items) => items.first().cloned().unwrap_or_default(),
        _ => json,
    };
    let str_at =
        |v: &serde_json::Value, key: &str| v.get(key).and_then(|x| x.as_str()).map(str::to_string);
    if let Some(err) = json.get("error") {
        if let Some(s) = err.as_str() {
            return s.to_string();
        }
        let message = str_at(err, "message").unwrap_or_else(|| err.to_string());
        let kind = str_at(err, "type")
            .or_else(|| str_at(err, "code"))
            .or_else(|| str_at(err, "status"));
        return match kind {
            Some(kind) => format!("{message} ({kind})"),
            None => message,
        };
    }
    for key in ["message", "Message", "detail", "error_message"] {
        if let Some(s) = str_at(&json, key) {
            return s;
        }
    }
    truncate(&json.to_string(), 300)
}

/// One line of at most `max` characters (whitespace runs collapsed, `…` when cut).
pub fn truncate(s: &str, max: usize) -> String {
    // One line: HTML error pages from proxies come with newlines.
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let s = s.as_str();
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
