//! The HTTP transport without a server: URL handling, failover, credentials.

use super::*;
use crate::client::Connect;

fn opts(urls: &[&str]) -> HttpOptions {
    HttpOptions {
        urls: urls.iter().map(|u| u.to_string()).collect(),
        auth: None,
        headers: BTreeMap::new(),
        timeout: Duration::from_secs(2),
        tls: TlsOptions::default(),
    }
}

fn basic(user: &str, password: &str) -> String {
    use base64::Engine;
    let raw = format!("{user}:{password}");
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(raw)
    )
}

#[test]
fn credentials_in_a_url_become_basic_auth_and_leave_no_trace() {
    let c = Connect::new(HttpTransport::new(opts(&["http://kco:s%40cret@127.0.0.1:1/"])).unwrap());
    assert_eq!(c.endpoint(), "http://127.0.0.1:1");
    let e = c.server_info().unwrap_err().to_string();
    assert!(!e.contains("cret") && !e.contains("kco:"), "{e}");
    let (_, auth) = split_userinfo("http://kco:s%40cret@h:1").unwrap();
    assert_eq!(auth.unwrap().header_value(), basic("kco", "s@cret"));
    let e = HttpTransport::new(opts(&["http://u:pw@[bad"]))
        .unwrap_err()
        .to_string();
    assert!(!e.contains("pw"), "{e}");
}

#[test]
fn url_credentials_are_percent_decoded_not_form_decoded() {
    // `+` is a plus and `&` an ampersand in a URL's userinfo; only `%XX` is decoded.
    let (clean, auth) = split_userinfo("http://u%2Bser:a+b&c%25d%40e%2Bf@h:1/").unwrap();
    assert_eq!(clean, "http://h:1/");
    assert_eq!(auth.unwrap().header_value(), basic("u+ser", "a+b&c%d@e+f"));
    let e = split_userinfo("http://u:%FF@h:1").unwrap_err().to_string();
    assert!(e.contains("not UTF-8") && e.contains("http://h:1"), "{e}");
}

#[test]
fn unreachable_urls_fail_over_and_name_the_url() {
    let c = Connect::new(
        HttpTransport::new(opts(&["http://127.0.0.1:1", "http://127.0.0.1:2/"])).unwrap(),
    );
    let e = c.server_info().unwrap_err();
    assert!(e.is_unreachable());
    assert!(e.to_string().contains("http://127.0.0.1:2/"), "{e}");
}

#[test]
fn only_https_workers_need_the_system_trust_store() {
    let urls = |u: &[&str]| u.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(!needs_trust_store(&urls(&[
        "http://a:8083",
        "HTTP://b:8083"
    ])));
    assert!(needs_trust_store(&urls(&[
        "http://a:8083",
        "HTTPS://b:8443"
    ])));
    assert!(needs_trust_store(&urls(&[" https://b:8443"])));
}

#[test]
fn retry_after_is_seconds_or_an_http_date() {
    use std::time::{Duration, UNIX_EPOCH};
    let now = UNIX_EPOCH + Duration::from_secs(784_111_770); // Sun, 06 Nov 1994 08:49:30 GMT
    assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
    assert_eq!(
        parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
        Some(Duration::from_secs(7))
    );
    assert_eq!(
        parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now),
        Some(Duration::ZERO)
    );
    assert_eq!(parse_retry_after("soon", now), None);
}
