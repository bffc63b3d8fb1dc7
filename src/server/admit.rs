//! Admitting a connection: `maxclients`, the client table, and leaving it.

use super::{worker, ClientEntry, ClientInfo, Server, Shared};
use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

impl Server {
    /// Registers a new connection, for an I/O thread to serve; refuses it past
    /// `max_clients`.
    pub(super) fn admit(&self, mut stream: TcpStream) -> Option<worker::Admitted> {
        let shared = &self.shared;
        shared.stats.connections.fetch_add(1, Ordering::Relaxed);
        let _ = stream.set_nodelay(true);
        let id = shared.next_client_id.fetch_add(1, Ordering::Relaxed);
        let info = ClientInfo {
            addr: stream
                .peer_addr()
                .map(|a| a.to_string())
                .unwrap_or_default(),
            laddr: stream
                .local_addr()
                .map(|a| a.to_string())
                .unwrap_or_default(),
            resp: 2,
            connected: Some(Instant::now()),
            ..ClientInfo::default()
        };
        let mut clients = shared.clients.lock();
        match clients.len() < shared.live.max_clients() {
            true => {
                log::trace!("accepted client {id} from {}", info.addr);
                clients.insert(id, ClientEntry { info });
            }
            false => {
                drop(clients);
                log::trace!("refused a client from {}: maxclients reached", info.addr);
                shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
                let _ = stream.write_all(b"-ERR max number of clients reached\r\n");
                return None;
            }
        }
        Some(worker::Admitted {
            id,
            stream,
            // Leaves CLIENT LIST, and closes the socket's last descriptor, however the
            // connection ends.
            entry: Deregister {
                shared: shared.clone(),
                id,
            },
        })
    }
}

/// Removes a connection's client entry when dropped.
pub(crate) struct Deregister {
    shared: Arc<Shared>,
    id: u64,
}

impl Drop for Deregister {
    fn drop(&mut self) {
        self.shared.clients.lock().remove(&self.id);
    }
}
