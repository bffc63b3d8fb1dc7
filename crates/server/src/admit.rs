//! Admitting a connection: `maxclients`, the client table, and leaving it.

use super::activity::Activity;
use super::{worker, ClientEntry, ClientInfo, Server, Shared};
use std::io::Write;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

impl Server {
    /// Registers a new connection, for an I/O thread to serve; refuses it past
    /// `max_clients`.
    pub(super) fn admit(
        &self,
        mut stream: TcpStream,
        workers: &mut worker::Workers,
    ) -> Option<(usize, worker::Admitted)> {
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
            fd: stream.as_raw_fd(),
            resp: 2,
            connected: Some(Instant::now()),
            ..ClientInfo::default()
        };
        let activity = Arc::new(Activity::new());
        let mut clients = shared.clients.lock();
        let (lane, kill) = workers.next_lane(id);
        let killed = kill.flag();
        match clients.len() < shared.live.max_clients() {
            true => {
                log::trace!("accepted client {id} from {}", info.addr);
                let activity = activity.clone();
                clients.insert(
                    id,
                    ClientEntry {
                        info,
                        kill,
                        activity,
                        feed: None,
                    },
                );
            }
            false => {
                drop(clients);
                log::trace!("refused a client from {}: maxclients reached", info.addr);
                shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
                let _ = stream.write_all(b"-ERR max number of clients reached\r\n");
                return None;
            }
        }
        let admitted = worker::Admitted {
            id,
            stream,
            activity,
            killed,
            // Leaves CLIENT LIST, and closes the socket's last descriptor, however the
            // connection ends.
            entry: Deregister {
                shared: shared.clone(),
                id,
            },
        };
        Some((lane, admitted))
    }
}

/// Removes a connection's client entry when dropped.
pub(crate) struct Deregister {
    shared: Arc<Shared>,
    id: u64,
}

impl Deregister {
    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for Deregister {
    fn drop(&mut self) {
        self.shared.clients.lock().remove(&self.id);
        self.shared.cursors.lock().drop_owner(self.id);
    }
}
