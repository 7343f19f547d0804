//! The daemon's counters for fleets: `schedlab run --metrics ADDR:PORT` serves them in
//! the OpenMetrics text format (which Prometheus reads) at `GET /metrics`, the same
//! numbers `schedlab monitor` shows, so that many machines are watched by the tools that
//! already watch them.
//!
//! The event loop renders a snapshot once a second ([`render`]) and hands it over
//! ([`MetricsServer::publish`]); a thread of its own answers the scrapers from the
//! latest one, so a scraper never touches the loop. One request at a time, each
//! bounded: [`REQUEST_LIMIT`] bytes within [`CLIENT_TIME`], the answer written within
//! the same. Opt-in, and meant for loopback or a management network: the numbers say
//! what runs on the machine (no names: only counts and times).

use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::stats::{Stats, BUCKETS_US};

/// The longest request read, in bytes.
pub const REQUEST_LIMIT: usize = 8192;
/// The time a scraper has to send its request, and again to take the answer.
pub const CLIENT_TIME: Duration = Duration::from_secs(1);

/// The OpenMetrics text of `s`.
pub fn render(s: &Stats) -> String {
    let mut out = String::new();
    // (name, counter?, help, value): a counter's sample is `NAME_total`.
    let metrics: [(&str, bool, &str, String); 14] = [
        ("uptime_seconds", false, "Seconds since the daemon started.", format!("{:.3}", s.uptime_s)),
        ("managed_processes", false, "Processes with a class the daemon manages.", s.managed.to_string()),
        ("released_processes", false, "Processes left to a user's own change.", s.released.to_string()),
        ("changes", true, "Changes applied to processes.", s.changes.to_string()),
        ("failed_changes", true, "Changes that failed.", s.failed_changes.to_string()),
        ("boosts_active", false, "Provider boosts in force.", s.boosts_active.to_string()),
        ("boosts", true, "Provider boosts begun.", s.boosts_total.to_string()),
        (
            "boosts_ended_by_wakeup",
            true,
            "Boosts ended by their requester waking.",
            s.boosts_ended_by_wakeup.to_string(),
        ),
        ("boosts_expired", true, "Boosts ended by boost_max_ms.", s.boosts_expired.to_string()),
        (
            "raises_expired_by_clock",
            true,
            "Raises the expiry clock ended because the event loop had not in time.",
            s.raises_expired_by_clock.to_string(),
        ),
        ("events", true, "Events read from the kernel.", s.events.to_string()),
        (
            "lost_events",
            true,
            "Records the kernel side lost to a full ring buffer.",
            s.lost_events.to_string(),
        ),
        ("slices_set", true, "Burst-aware slices set.", s.slices_set.to_string()),
        ("cpu_seconds", true, "CPU time the daemon used, all its threads.", format!("{:.3}", s.cpu_s)),
    ];
    for (name, counter, help, value) in metrics {
        let kind = if counter { "counter" } else { "gauge" };
        let _ = writeln!(out, "# TYPE schedlab_{name} {kind}\n# HELP schedlab_{name} {help}");
        let _ = writeln!(out, "schedlab_{name}{} {value}", if counter { "_total" } else { "" });
    }
    let r = &s.boost_reaction_us;
    let name = "schedlab_boost_reaction_seconds";
    let _ = writeln!(out, "# TYPE {name} histogram");
    let _ = writeln!(out, "# HELP {name} From a requester's block to its provider's boost in force.");
    for (bound, count) in BUCKETS_US.iter().zip(&r.buckets) {
        let _ = writeln!(out, "{name}_bucket{{le=\"{}\"}} {count}", *bound as f64 / 1e6);
    }
    let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {}", r.count);
    let _ = writeln!(out, "{name}_count {}", r.count);
    let _ = writeln!(out, "{name}_sum {}", r.sum / 1e6);
    out.push_str("# EOF\n");
    out
}

/// The thread answering `GET /metrics`. Stopped (and joined) when dropped.
#[derive(Debug)]
pub struct MetricsServer {
    address: SocketAddr,
    latest: Arc<Mutex<String>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Listens on `address` (port 0: any free one) and starts answering.
    pub fn start(address: SocketAddr) -> io::Result<MetricsServer> {
        let listener = TcpListener::bind(address)?;
        let address = listener.local_addr()?;
        let latest = Arc::new(Mutex::new("# EOF\n".to_string()));
        let stop = Arc::new(AtomicBool::new(false));
        let (theirs, stopping) = (Arc::clone(&latest), Arc::clone(&stop));
        let thread = std::thread::Builder::new().name("schedlab-metrics".into()).spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::Relaxed) {
                    break;
                }
                if let Ok(stream) = stream {
                    let text = theirs.lock().map(|t| t.clone()).unwrap_or_default();
                    let _ = answer(stream, &text);
                }
            }
        })?;
        Ok(MetricsServer { address, latest, stop, thread: Some(thread) })
    }

    /// Where it listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Makes `text` what the next scrapes get.
    pub fn publish(&self, text: String) {
        if let Ok(mut latest) = self.latest.lock() {
            *latest = text;
        }
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the accept.
        let _ = TcpStream::connect_timeout(&self.address, Duration::from_millis(200));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads one request (its head) and answers it: the metrics for `GET /metrics`, 404
/// for any other path, 405 for any other method.
fn answer(mut stream: TcpStream, metrics: &str) -> io::Result<()> {
    let deadline = Instant::now() + CLIENT_TIME;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || head.len() > REQUEST_LIMIT {
            return Ok(());
        }
        stream.set_read_timeout(Some(left))?;
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&head);
    let mut words = line.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let (status, kind, body) = match (method, path.split('?').next().unwrap_or("")) {
        ("GET", "/metrics") => {
            ("200 OK", "application/openmetrics-text; version=1.0.0; charset=utf-8", metrics)
        }
        ("GET", _) => ("404 Not Found", "text/plain", "schedlab serves /metrics only\n"),
        _ => ("405 Method Not Allowed", "text/plain", "GET /metrics\n"),
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.set_write_timeout(Some(CLIENT_TIME))?;
    stream.write_all(reply.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(address: SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(address).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_the_latest_snapshot_in_the_openmetrics_format() {
        let mut stats = Stats { managed: 3, boosts_total: 7, ..Stats::default() };
        stats.boost_reaction_us.count = 2;
        stats.boost_reaction_us.sum = 300.0;
        stats.boost_reaction_us.buckets = vec![0, 1, 2, 2, 2, 2, 2, 2, 2, 2];
        let text = render(&stats);
        assert!(text.contains("schedlab_managed_processes 3\n"), "{text}");
        assert!(text.contains("# TYPE schedlab_boosts counter\n"), "{text}");
        assert!(text.contains("schedlab_boosts_total 7\n"), "{text}");
        assert!(text.contains("schedlab_boost_reaction_seconds_bucket{le=\"0.0001\"} 1\n"), "{text}");
        assert!(text.contains("schedlab_boost_reaction_seconds_bucket{le=\"+Inf\"} 2\n"), "{text}");
        assert!(text.contains("schedlab_boost_reaction_seconds_sum 0.0003\n"), "{text}");
        assert!(text.ends_with("# EOF\n"));

        let server = MetricsServer::start("127.0.0.1:0".parse().unwrap()).unwrap();
        server.publish(text.clone());
        let reply = get(server.address(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(reply.starts_with("HTTP/1.1 200 OK\r\n") && reply.ends_with(&text), "{reply}");
        assert!(reply.contains("application/openmetrics-text"));
        assert!(get(server.address(), "GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get(server.address(), "POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
        // A client that sends nothing is dropped after its time; the next is served.
        let _silent = TcpStream::connect(server.address()).unwrap();
        let start = Instant::now();
        assert!(get(server.address(), "GET /metrics HTTP/1.0\r\n\r\n").starts_with("HTTP/1.1 200"));
        assert!(start.elapsed() < CLIENT_TIME * 3, "{:?}", start.elapsed());
    }
}
