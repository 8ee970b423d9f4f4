//! Config loading and cluster resolution.

use super::*;

fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |k| {
        pairs
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    }
}

#[test]
fn resolves_named_cluster_with_env_secrets_and_redacts_them() {
    let text = "defaultCluster: a\nclusters:\n  a:\n    urls: [http://h1:8083, http://h2:8083]\n    auth:\n      basic: {username: u, password: '${env:PW}'}\n";
    let c = Config::parse(Path::new("kco.yaml"), text).unwrap();
    let t = c.resolve(None, None, &env(&[("PW", "s3cret")])).unwrap();
    assert_eq!(t.name, "a");
    assert_eq!(t.http.urls.len(), 2);
    let dbg = format!("{t:?}");
    assert!(!dbg.contains("s3cret"), "{dbg}");
    assert_eq!(t.http.auth.unwrap().header_value(), "Basic dTpzM2NyZXQ=");
}

#[test]
fn missing_env_var_and_unknown_cluster_are_errors() {
    let text = "clusters:\n  a:\n    urls: [http://h1:8083]\n    auth:\n      bearer: {token: '${env:TOK}'}\n";
    let c = Config::parse(Path::new("kco.yaml"), text).unwrap();
    let e = c.resolve(Some("a"), None, &env(&[])).unwrap_err();
    assert!(e.message.contains("TOK"), "{e}");
    let e = c.resolve(Some("zz"), None, &env(&[])).unwrap_err();
    assert!(e.message.contains("no cluster `zz`"), "{e}");
}

#[test]
fn unknown_keys_name_the_line() {
    let e = Config::parse(Path::new("kco.yaml"), "clusters:\n  a:\n    urlz: []\n").unwrap_err();
    assert_eq!(e.line, Some(3), "{e}");
}

#[test]
fn url_flag_and_defaults() {
    let c = Config::default();
    let t = c.resolve(None, Some("http://x:1"), &env(&[])).unwrap();
    assert_eq!(
        (t.name.as_str(), t.http.urls[0].as_str()),
        ("default", "http://x:1")
    );
    let t = c.resolve(None, None, &env(&[])).unwrap();
    assert_eq!(t.http.urls[0], DEFAULT_URL);
}

#[test]
fn lock_is_local_or_a_named_remote_and_anything_else_is_an_error_on_its_line() {
    let parse = |t: &str| Config::parse(Path::new("kco.yaml"), t);
    assert_eq!(parse("").unwrap().lock_setting(), LockSetting::Auto);
    assert_eq!(
        parse("lock: local\n").unwrap().lock_setting(),
        LockSetting::Local
    );
    assert_eq!(
        parse("lock:\n  remote: upstream\n").unwrap().lock_setting(),
        LockSetting::Remote("upstream".into())
    );
    for bad in [
        "snapshotsDir: s\nlock: remote\n",
        "snapshotsDir: s\nlock: {remote: ''}\n",
        "snapshotsDir: s\nlock: {remote: o, other: 1}\n",
    ] {
        let e = parse(bad).unwrap_err();
        assert!(
            e.message.contains("expected `local` or `remote: NAME`"),
            "{bad}: {e}"
        );
        assert_eq!(e.line, Some(2), "{bad}: {e}");
    }
}

#[test]
fn connect_topics_names_the_offsets_topic_and_nothing_else() {
    let parse = |t: &str| Config::parse(Path::new("kco.yaml"), t);
    let c = parse("clusters:\n  a:\n    url: http://x:1\n    connectTopics: {offsets: connect-offsets}\n  b:\n    url: http://y:1\n").unwrap();
    assert_eq!(c.offsets_topic("a"), Some("connect-offsets"));
    assert_eq!(c.offsets_topic("b"), None);
    assert_eq!(c.offsets_topic("zz"), None);
    let e = parse(
        "clusters:\n  a:\n    url: http://x:1\n    connectTopics: {offset: connect-offsets}\n",
    )
    .unwrap_err();
    assert_eq!(e.line, Some(4), "{e}");
}

#[test]
fn a_cluster_without_urls_is_read_from_its_kafka_with_all_three_topics() {
    let text = "clusters:\n  m:\n    kafka: {bootstrap: \"b-1.msk:9096\"}\n    connectTopics: {offsets: o, configs: c, status: s}\n";
    let c = Config::parse(Path::new("kco.yaml"), text).unwrap();
    let t = c.resolve(Some("m"), None, &env(&[])).unwrap();
    assert_eq!(t.backend, Backend::ConnectTopics);
    assert!(t.http.urls.is_empty(), "{:?}", t.http.urls);
    let topics = c.internal_topics("m").unwrap();
    assert_eq!(
        (
            topics.offsets.as_str(),
            topics.configs.as_str(),
            topics.status.as_str()
        ),
        ("o", "c", "s")
    );
    assert_eq!(c.offsets_topic("m"), Some("o"));
    // A worker's URL given for it: that worker, through its REST API.
    let t = c
        .resolve(Some("m"), Some("http://w:8083"), &env(&[]))
        .unwrap();
    assert_eq!(
        (t.backend, t.http.urls),
        (Backend::Connect, vec!["http://w:8083".to_string()])
    );
}

#[test]
fn a_cluster_with_neither_urls_nor_the_three_topics_is_an_error_naming_it_and_the_keys() {
    let parse = |t: &str| Config::parse(Path::new("kco.yaml"), t).unwrap();
    let cases = [
        ("clusters:\n  m:\n    headers: {}\n", "`kafka:` and `connectTopics:`"),
        (
            "clusters:\n  m:\n    kafka: {bootstrap: \"k:9092\"}\n    connectTopics: {offsets: o}\n",
            "`connectTopics.configs` and `connectTopics.status`",
        ),
        (
            "clusters:\n  m:\n    connectTopics: {offsets: o, configs: c, status: ''}\n",
            "`kafka:` and `connectTopics.status`",
        ),
    ];
    for (text, lacks) in cases {
        let e = parse(text).resolve(Some("m"), None, &env(&[])).unwrap_err();
        assert!(
            e.message.starts_with("cluster `m` has no `urls` (or, for a Connect cluster without a REST API (AWS MSK Connect), `kafka:` and `connectTopics: {offsets, configs, status}`)")
                && e.message.ends_with(&format!("it lacks {lacks}")),
            "{text}: {e}"
        );
        assert!(e.hint.unwrap().contains("`config.storage.topic`"), "{text}");
    }
    assert_eq!(parse(cases[0].0).internal_topics("m"), None);
}

#[test]
fn a_cluster_without_urls_takes_no_settings_of_the_rest_api() {
    let text = "clusters:\n  m:\n    kafka: {bootstrap: \"k:9092\"}\n    connectTopics: {offsets: o, configs: c, status: s}\n    auth: {bearer: {token: t}}\n";
    let c = Config::parse(Path::new("kco.yaml"), text).unwrap();
    let e = c.resolve(Some("m"), None, &env(&[])).unwrap_err();
    assert!(
        e.message.contains("cluster `m` has no `urls`, so `auth:`"),
        "{e}"
    );
    assert!(e.hint.as_deref().unwrap().contains("`kafka.sasl`"), "{e}");
}

/// A URL given as `urls:` (a list), and a cluster given as a plain value: the message says
/// what was expected in kco.yaml's words, with the fix, never an internal type's name.
#[test]
fn common_shape_mistakes_are_said_in_kco_yaml_words() {
    let path = Path::new("kco.yaml");
    let e = Config::parse(path, "clusters:\n  a:\n    urls: http://c:8083\n").unwrap_err();
    assert_eq!(e.line, Some(3));
    let hint = e.hint.as_deref().unwrap();
    assert!(
        hint.contains("one URL is `url: http://connect-1:8083`"),
        "{hint}"
    );
    let e = Config::parse(path, "clusters:\n  a: http://c:8083\n").unwrap_err();
    assert!(!e.message.contains("Raw"), "{e}");
    assert!(e.message.contains("expected a cluster's keys"), "{e}");
}
