//! FileStream connectors: configs, input files, offsets, and reading a topic through a sink.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

use super::*;

/// Config of a FileStreamSource reading `file` (absolute) into `topic`.
pub fn file_source_config(file: &Path, topic: &str) -> Value {
    assert!(
        file.is_absolute(),
        "FileStreamSource needs an absolute path"
    );
    json!({
        "connector.class": FILE_SOURCE,
        "tasks.max": "1",
        "file": file.to_str().expect("UTF-8 path"),
        "topic": topic,
    })
}

/// Config of a FileStreamSink writing `topic` to `file` (absolute).
pub fn file_sink_config(file: &Path, topic: &str) -> Value {
    assert!(file.is_absolute(), "FileStreamSink needs an absolute path");
    json!({
        "connector.class": FILE_SINK,
        "tasks.max": "1",
        "file": file.to_str().expect("UTF-8 path"),
        "topics": topic,
    })
}

/// `{prefix}-{i}` for each `i` in `range`: `numbered("line", 1..=3)` is line-1..line-3.
pub fn numbered(prefix: &str, range: impl IntoIterator<Item = usize>) -> Vec<String> {
    range.into_iter().map(|i| format!("{prefix}-{i}")).collect()
}

/// Writes `lines` to `path`, one per line, and returns the byte offset at which each
/// line starts (the FileStreamSource `position` that replays from that line).
pub fn write_lines(path: &Path, lines: &[String]) -> Vec<u64> {
    let mut text = String::new();
    let mut starts = Vec::with_capacity(lines.len());
    for line in lines {
        starts.push(text.len() as u64);
        text.push_str(line);
        text.push('\n');
    }
    fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    starts
}

/// Appends `lines` to `path` (created if missing), one per line.
pub fn append_lines(path: &Path, lines: &[String]) {
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    file.write_all(text.as_bytes())
        .unwrap_or_else(|e| panic!("append to {}: {e}", path.display()));
}

/// The FileStreamSource position recorded for `file`, if any.
pub fn source_position(offsets: &[Value], file: &Path) -> Option<i64> {
    let file = file.to_str()?;
    offsets
        .iter()
        .find(|o| o["partition"]["filename"] == file)
        .and_then(|o| o["offset"]["position"].as_i64())
}

/// The committed sink offset for partition 0 of `topic`, if any.
pub fn sink_offset(offsets: &[Value], topic: &str) -> Option<i64> {
    offsets
        .iter()
        .find(|o| o["partition"]["kafka_topic"] == topic && o["partition"]["kafka_partition"] == 0)
        .and_then(|o| o["offset"]["kafka_offset"].as_i64())
}

/// A FileStream source reading `in.txt` of a directory into a new topic, and a sink writing
/// that topic to `out.txt` there: the topic is named `{prefix}`, the connectors
/// `{prefix}-src` and `{prefix}-sink` (each made unique); each is deleted when its guard drops.
pub struct FilePipe {
    pub input: PathBuf,
    pub out: PathBuf,
    pub topic: String,
    pub src: String,
    pub sink: String,
    pub src_guard: ConnectorGuard,
    pub sink_guard: ConnectorGuard,
}

impl FilePipe {
    /// Writes `lines` to `in.txt` in `dir`, then creates the source and the sink on `connect`
    /// (it does not wait for them to run).
    pub fn start(connect: &Connect, dir: &Path, prefix: &str, lines: &[String]) -> FilePipe {
        let input = dir.join("in.txt");
        write_lines(&input, lines);
        let topic = unique_name(prefix);
        let src = unique_name(&format!("{prefix}-src"));
        let sink = unique_name(&format!("{prefix}-sink"));
        let src_guard = connect.create(&src, file_source_config(&input, &topic));
        let out = dir.join("out.txt");
        let sink_guard = connect.create(&sink, file_sink_config(&out, &topic));
        FilePipe {
            input,
            out,
            topic,
            src,
            sink,
            src_guard,
            sink_guard,
        }
    }

    /// The input file's byte count: the source's position once it read it all.
    pub fn input_len(&self) -> i64 {
        fs::metadata(&self.input).unwrap().len() as i64
    }
}

impl Connect {
    /// Waits until FileStream source `name` has committed the whole of `input`: its position
    /// the file's byte count.
    pub fn wait_read(&self, name: &str, input: &Path) -> Vec<Value> {
        let len = fs::metadata(input).unwrap().len() as i64;
        self.wait_offsets(name, "the whole file read", |o| {
            source_position(o, input) == Some(len)
        })
    }
}

/// What reached a topic, read back through a FileStreamSink into a file. Deletes the
/// sink connector when dropped.
pub struct TopicReader {
    pub sink: ConnectorGuard,
    pub file: PathBuf,
}

impl TopicReader {
    /// Starts a sink connector on `connect` copying `topic` (from its beginning) to a file
    /// in `dir`, and waits until it runs.
    pub fn start(connect: &Connect, topic: &str, dir: &Path) -> TopicReader {
        let file = dir.join(format!("{topic}.out"));
        let name = unique_name("reader");
        let sink = connect.create(&name, file_sink_config(&file, topic));
        connect.wait_running(&name);
        TopicReader { sink, file }
    }

    /// The complete lines written so far (a trailing partial line is left out).
    pub fn lines(&self) -> Vec<String> {
        let text = fs::read_to_string(&self.file).unwrap_or_default();
        let complete = match text.rfind('\n') {
            Some(end) => &text[..end],
            None => return Vec::new(),
        };
        complete.split('\n').map(str::to_string).collect()
    }

    /// Waits until at least `n` lines arrived; returns all lines seen.
    pub fn wait_lines(&self, n: usize) -> Vec<String> {
        wait_for(
            &format!("{n} lines in {}", self.file.display()),
            WAIT,
            || {
                let lines = self.lines();
                if lines.len() >= n {
                    Ok(lines)
                } else {
                    Err(format!("{} lines: {lines:?}", lines.len()))
                }
            },
        )
    }

    /// Like [`TopicReader::wait_lines`], then waits 3 s more so that a line too many (a
    /// duplicate) would show; returns all lines seen by then.
    pub fn wait_lines_settled(&self, n: usize) -> Vec<String> {
        self.wait_lines(n);
        thread::sleep(Duration::from_secs(3));
        self.lines()
    }
}
