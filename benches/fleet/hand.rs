//! The hand procedure, as an operator runs it: a shell loop of `curl` (and `jq` to read
//! status), sequential, as the KIP-875 documentation describes it. And a best case of the same
//! loop: sequential requests from one keep-alive client in-process, with no process started.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// `GET /connectors`, then `GET .../offsets` of each into `<name>.json`.
const SNAPSHOT: &str = r#"
set -euo pipefail
cd "$OUT"
curl -sSf "$URL/connectors" | jq -r '.[]' | while IFS= read -r name; do
  curl -sSf "$URL/connectors/$name/offsets" -o "$name.json"
done
"#;

/// For each `<name>.json`: stop, wait for STOPPED with no tasks, PATCH the file, resume, wait
/// for RUNNING.
const APPLY: &str = r#"
set -euo pipefail
apply_one() {
  local name=$1 file=$2
  curl -sSf -X PUT "$URL/connectors/$name/stop"
  until curl -sSf "$URL/connectors/$name/status" \
      | jq -e '.connector.state == "STOPPED" and (.tasks | length) == 0' >/dev/null; do
    sleep "$PAUSE"
  done
  curl -sSf -X PATCH -H 'Content-Type: application/json' --data-binary @"$file" \
    "$URL/connectors/$name/offsets" >/dev/null
  curl -sSf -X PUT "$URL/connectors/$name/resume"
  until curl -sSf "$URL/connectors/$name/status" | jq -e '.connector.state == "RUNNING"' >/dev/null; do
    sleep "$PAUSE"
  done
}
for file in "$DIR"/*.json; do
  apply_one "$(basename "$file" .json)" "$file"
done
"#;

/// One connector's saved offsets against live: GET, then `diff` of the two, keys sorted.
const DIFF: &str = r#"
set -uo pipefail
curl -sSf "$URL/connectors/$NAME/offsets" -o "$WORK/live.json"
diff <(jq -S . "$FILE") <(jq -S . "$WORK/live.json") > "$WORK/diff.txt"
[ $? -le 1 ]
"#;

fn bash(script: &str, env: &[(&str, &str)]) {
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .envs(env.iter().copied())
        .output()
        .expect("run bash");
    if !out.status.success() {
        panic!(
            "hand procedure failed ({:?}):\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Whether `bash`, `curl` and `jq` are all there.
pub fn tools_present() -> bool {
    ["bash", "curl", "jq"].iter().all(|tool| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

pub fn snapshot(url: &str, out: &Path) {
    bash(SNAPSHOT, &[("URL", url), ("OUT", &out.to_string_lossy())]);
}

pub fn apply(url: &str, dir: &Path, pause: Duration) {
    let pause = format!("{:.3}", pause.as_secs_f64());
    bash(
        APPLY,
        &[
            ("URL", url),
            ("DIR", &dir.to_string_lossy()),
            ("PAUSE", &pause),
        ],
    );
}

pub fn diff(url: &str, name: &str, file: &Path, work: &Path) {
    bash(
        DIFF,
        &[
            ("URL", url),
            ("NAME", name),
            ("FILE", &file.to_string_lossy()),
            ("WORK", &work.to_string_lossy()),
        ],
    );
}

/// The same loops with one keep-alive HTTP client: the floor of any sequential procedure.
pub mod best {
    use std::path::Path;
    use std::time::Duration;

    use reqwest::blocking::Client;
    use serde_json::Value;

    fn client() -> Client {
        Client::builder()
            .timeout(Duration::from_secs(300))
            .build()
            .expect("http client")
    }

    fn get(client: &Client, url: &str) -> Vec<u8> {
        let response = client.get(url).send().expect("GET");
        assert!(response.status().is_success(), "GET {url}");
        response.bytes().expect("body").to_vec()
    }

    fn send(client: &Client, method: reqwest::Method, url: &str, body: Option<Vec<u8>>) {
        let mut request = client.request(method, url);
        if let Some(body) = body {
            request = request
                .header("Content-Type", "application/json")
                .body(body);
        }
        let response = request.send().expect("request");
        assert!(response.status().is_success(), "{url}");
        let _ = response.bytes();
    }

    fn wait(client: &Client, url: &str, pause: Duration, ready: impl Fn(&Value) -> bool) {
        loop {
            let status: Value = serde_json::from_slice(&get(client, url)).expect("status");
            if ready(&status) {
                return;
            }
            std::thread::sleep(pause);
        }
    }

    pub fn snapshot(url: &str, out: &Path) {
        let client = client();
        let names: Vec<String> =
            serde_json::from_slice(&get(&client, &format!("{url}/connectors"))).expect("list");
        for name in names {
            let body = get(&client, &format!("{url}/connectors/{name}/offsets"));
            std::fs::write(out.join(format!("{name}.json")), body).expect("write");
        }
    }

    pub fn apply(url: &str, dir: &Path, pause: Duration) {
        let client = client();
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .expect("read dir")
            .map(|e| e.expect("entry").path())
            .collect();
        files.sort();
        for file in files {
            let name = file
                .file_stem()
                .expect("stem")
                .to_string_lossy()
                .into_owned();
            let base = format!("{url}/connectors/{name}");
            let status = format!("{base}/status");
            send(&client, reqwest::Method::PUT, &format!("{base}/stop"), None);
            wait(&client, &status, pause, |s| {
                s["connector"]["state"] == "STOPPED"
                    && s["tasks"].as_array().is_some_and(Vec::is_empty)
            });
            let body = std::fs::read(&file).expect("read");
            send(
                &client,
                reqwest::Method::PATCH,
                &format!("{base}/offsets"),
                Some(body),
            );
            send(
                &client,
                reqwest::Method::PUT,
                &format!("{base}/resume"),
                None,
            );
            wait(&client, &status, pause, |s| {
                s["connector"]["state"] == "RUNNING"
            });
        }
    }
}
