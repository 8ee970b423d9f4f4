//! The HTTP client without a server: URL handling, failover, credentials.

use super::*;

#[test]
fn credentials_in_a_url_become_basic_auth_and_leave_no_trace() {
    let c = HttpConnect::new(HttpOptions {
        urls: vec!["http://kco:s%40cret@127.0.0.1:1/".into()],
        auth: None,
        headers: BTreeMap::new(),
        timeout: Duration::from_secs(2),
        tls: TlsOptions::default(),
    })
    .unwrap();
    assert_eq!(c.endpoint(), "http://127.0.0.1:1");
    let e = c.server_info().unwrap_err().to_string();
    assert!(!e.contains("cret") && !e.contains("kco:"), "{e}");
    let (_, auth) = split_userinfo("http://kco:s%40cret@h:1").unwrap();
    assert_eq!(
        auth.unwrap().header_value(),
        format!("Basic {}", {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.encode("kco:s@cret")
        })
    );
    let e = HttpConnect::new(HttpOptions {
        urls: vec!["http://u:pw@[bad".into()],
        auth: None,
        headers: BTreeMap::new(),
        timeout: Duration::from_secs(2),
        tls: TlsOptions::default(),
    })
    .unwrap_err()
    .to_string();
    assert!(!e.contains("pw"), "{e}");
}

#[test]
fn connector_names_are_path_encoded() {
    assert_eq!(HttpConnect::path("a b/c"), "/connectors/a%20b%2Fc");
}

#[test]
fn unreachable_urls_fail_over_and_name_the_url() {
    let c = HttpConnect::new(HttpOptions {
        urls: vec!["http://127.0.0.1:1".into(), "http://127.0.0.1:2/".into()],
        auth: None,
        headers: BTreeMap::new(),
        timeout: Duration::from_secs(2),
        tls: TlsOptions::default(),
    })
    .unwrap();
    let e = c.server_info().unwrap_err();
    assert!(e.is_unreachable());
    assert!(e.to_string().contains("http://127.0.0.1:2/"), "{e}");
}
