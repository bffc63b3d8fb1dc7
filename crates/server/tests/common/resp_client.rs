//! A minimal RESP client for the host's tests: it sends raw bytes and reads typed
//! replies, so tests see exactly what goes over the wire.
#![allow(dead_code)]

use rocksketch::{Store, StoreOptions};
use rocksketch_server::{Server, ServerConfig, ShutdownHandle};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::thread::JoinHandle;
use std::time::Duration;

/// A reply as the wire carried it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Vec<u8>),
    Nil,
    Bool(bool),
    Array(Vec<Value>),
    /// A RESP3 set (`~`).
    Set(Vec<Value>),
    Map(Vec<(Value, Value)>),
    /// A RESP3 verbatim string: its format and its text.
    Verbatim(String, Vec<u8>),
}

impl Value {
    pub fn bulk(text: &str) -> Value {
        Value::Bulk(text.as_bytes().to_vec())
    }
}

/// Field `name` of a `CLIENT LIST` / `CLIENT INFO` line (`""` if it has none).
pub fn client_field<'a>(line: &'a str, name: &str) -> &'a str {
    line.split(' ')
        .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
        .unwrap_or("")
}

/// `words` as a RESP request on the wire.
pub fn wire(words: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", words.len()).into_bytes();
    for word in words {
        out.extend_from_slice(format!("${}\r\n{word}\r\n", word.len()).as_bytes());
    }
    out
}

/// A server over a temporary directory; bind it as `let (_dir, server)`, so the server
/// stops before its directory goes.
pub fn temp_server() -> (tempfile::TempDir, TestServer) {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), ServerConfig::default());
    (dir, server)
}

pub fn error(text: &str) -> Value {
    Value::Error(text.to_owned())
}

pub fn ok() -> Value {
    Value::Simple("OK".to_owned())
}

/// A server on a free loopback port over a store in `dir`, run on its own thread.
pub struct TestServer {
    pub addr: SocketAddr,
    handle: ShutdownHandle,
    thread: Option<JoinHandle<rocksketch::Result<()>>>,
}

impl TestServer {
    pub fn start(dir: &Path, config: ServerConfig) -> TestServer {
        TestServer::start_with_store(dir, config, StoreOptions::default())
    }

    /// [`TestServer::start`] over a store opened with `options`.
    pub fn start_with_store(dir: &Path, config: ServerConfig, options: StoreOptions) -> TestServer {
        // More than one I/O thread unless a test asks otherwise, and connections dealt
        // to them in turn rather than filling one first: the host tests exercise the
        // handoffs between threads with few clients.
        let threads = if config.threads == 0 {
            2
        } else {
            config.threads
        };
        let thread_fill = match config.thread_fill {
            rocksketch_server::DEFAULT_THREAD_FILL => 0,
            asked => asked,
        };
        let config = ServerConfig {
            threads,
            thread_fill,
            ..config
        };
        TestServer::open(dir, config, options)
    }

    /// [`TestServer::start`] with the configuration as given (on a free port).
    pub fn start_as_configured(dir: &Path, config: ServerConfig) -> TestServer {
        TestServer::open(dir, config, StoreOptions::default())
    }

    fn open(dir: &Path, config: ServerConfig, options: StoreOptions) -> TestServer {
        let store = Store::open(dir, options).expect("store opens");
        let server = Server::bind(store, ServerConfig { port: 0, ..config }).expect("binds");
        let addr = server.local_addr();
        let handle = server.handle();
        let thread = Some(std::thread::spawn(move || server.run()));
        TestServer {
            addr,
            handle,
            thread,
        }
    }

    pub fn client(&self) -> Client {
        Client::connect(self.addr)
    }

    /// Waits for the server to stop (after `SHUTDOWN` or [`TestServer::stop`]).
    pub fn join(&mut self) {
        if let Some(thread) = self.thread.take() {
            thread
                .join()
                .expect("server thread")
                .expect("clean shutdown");
        }
    }

    pub fn stop(&mut self) {
        self.handle.shutdown();
        self.join();
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.handle.shutdown();
            self.join();
        }
    }
}

pub struct Client {
    pub reader: BufReader<TcpStream>,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).expect("connects");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        Client {
            reader: BufReader::new(stream),
        }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.reader.get_mut().write_all(bytes).expect("sends");
    }

    pub fn send(&mut self, args: &[&[u8]]) {
        let mut wire = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            wire.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            wire.extend_from_slice(arg);
            wire.extend_from_slice(b"\r\n");
        }
        self.send_raw(&wire);
    }

    /// Sends a command of string words and reads its reply.
    pub fn cmd(&mut self, words: &[&str]) -> Value {
        let args: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
        self.send(&args);
        self.read()
    }

    pub fn read(&mut self) -> Value {
        self.try_read().expect("a reply")
    }

    /// The next reply, or `None` if the server closed the connection.
    pub fn try_read(&mut self) -> Option<Value> {
        let mut line = Vec::new();
        if self.reader.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        assert!(
            line.ends_with(b"\r\n"),
            "line {:?}",
            String::from_utf8_lossy(&line)
        );
        let body = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
        let number = || body.parse::<i64>().expect("a number");
        Some(match line[0] {
            b'+' => Value::Simple(body),
            b'-' => Value::Error(body),
            b':' => Value::Int(number()),
            b'_' => Value::Nil,
            b'#' => Value::Bool(body == "t"),
            b'$' if number() < 0 => Value::Nil,
            b'$' => {
                let mut data = vec![0; number() as usize + 2];
                self.reader.read_exact(&mut data).ok()?;
                data.truncate(data.len() - 2);
                Value::Bulk(data)
            }
            b'=' => {
                let mut data = vec![0; number() as usize + 2];
                self.reader.read_exact(&mut data).ok()?;
                data.truncate(data.len() - 2);
                // `txt:` and the text.
                let text = data.split_off(4.min(data.len()));
                data.truncate(3);
                Value::Verbatim(String::from_utf8_lossy(&data).into_owned(), text)
            }
            b'*' if number() < 0 => Value::Nil,
            b'*' => Value::Array((0..number()).map(|_| self.read()).collect()),
            b'~' => Value::Set((0..number()).map(|_| self.read()).collect()),
            b'%' => Value::Map((0..number()).map(|_| (self.read(), self.read())).collect()),
            other => panic!("unexpected reply type {:?}", other as char),
        })
    }

    /// Whether the server has closed this connection.
    pub fn is_closed(&mut self) -> bool {
        let mut byte = [0u8; 1];
        matches!(self.reader.read(&mut byte), Ok(0) | Err(_))
    }
}

/// The address a `rocksketch serve --port 0` child prints on its first line of standard
/// output ("listening on ADDR ...").
pub fn listening_addr(child: &mut std::process::Child) -> SocketAddr {
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout piped"))
        .read_line(&mut line)
        .unwrap();
    line.split("listening on ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("server did not start: {line:?}"))
        .parse()
        .unwrap()
}
