//! The target's side of a slot's migration: the source's link sends `CLUSTERX IMPORT
//! slot 0` (start: whatever this node held of the slot goes), then `CLUSTERX APPLY slot
//! chunk` for the copy and the writes since, then `CLUSTERX IMPORT slot 1` (success:
//! this node serves the slot from then on, before the topology says so) or `2`
//! (failure: what it received goes; after success, on the same link, the import is
//! taken back). Chunks are taken only from the connection that started the import,
//! and only inside the slot's namespace; a link that closes before success fails the
//! import.

use super::slot::CLUSTER_NS;
use super::Cluster;
use crate::commands::err;
use crate::conn::Connection;
use crate::Shared;
use rocksketch::command::Reply;

/// Held by the connection that imports a slot.
pub(crate) struct ImportLink {
    slot: u16,
}

/// `CLUSTERX IMPORT slot state`.
pub(crate) fn import(
    conn: &mut Connection,
    cluster: &Cluster,
    slot: u16,
    state: &str,
) -> Result<Reply, Reply> {
    let fail = |text: &str| Err(err(&format!("ERR {text}")));
    let shared = conn.shared.clone();
    let topology = cluster.topology();
    let linked = conn.import_link.as_ref().map(|l| l.slot);
    match state {
        "0" => {
            if topology.me().is_some_and(|me| me.primary.is_some()) {
                return fail("Slave can't import slot");
            }
            let Some(owner) = topology.owner(slot) else {
                return fail("Can't import a slot nobody serves");
            };
            if owner.id == topology.myid {
                return fail("Can't import slot which belongs to me");
            }
            if cluster.moves.is_imported(slot) {
                return fail("Can't import slot which has been imported");
            }
            if linked.is_some() || !cluster.moves.begin_import(slot, &owner.id) {
                return fail("There is already an importing job");
            }
            if let Err(e) = shared.store.drop_ns(CLUSTER_NS + slot) {
                let _ = cluster.moves.end_import(slot, false);
                return Err(e.into());
            }
            conn.import_link = Some(ImportLink { slot });
        }
        "1" | "2" if linked == Some(slot) && cluster.moves.is_importing(slot) => {
            end(&shared, cluster, slot, state == "1").map_err(|e| err(&format!("ERR {e}")))?;
        }
        "2" if linked == Some(slot) => {
            // After success, on the same link: the source could not save the hand-over.
            conn.import_link = None;
            if cluster
                .moves
                .revoke_import(slot)
                .map_err(|e| err(&format!("ERR {e}")))?
            {
                shared.store.drop_ns(CLUSTER_NS + slot)?;
            }
        }
        "1" | "2" => return fail(&format!("No import of slot {slot} runs on this connection")),
        _ => return fail("Invalid import state"),
    }
    Ok(Reply::ok())
}

/// `CLUSTERX APPLY slot chunk`: how many writes the chunk held.
pub(crate) fn apply(
    conn: &mut Connection,
    cluster: &Cluster,
    slot: u16,
    chunk: &[u8],
) -> Result<Reply, Reply> {
    let linked = conn.import_link.as_ref().map(|l| l.slot);
    if linked != Some(slot) || !cluster.moves.is_importing(slot) {
        return Err(err(&format!(
            "ERR No import of slot {slot} runs on this connection"
        )));
    }
    let count = conn.shared.store.import_ns(CLUSTER_NS + slot, chunk)?;
    Ok(Reply::Int(count as i64))
}

/// The importing connection closed: an import not yet done fails.
pub(crate) fn link_closed(shared: &Shared, link: ImportLink) {
    if let Some(cluster) = &shared.cluster {
        if let Err(e) = end(shared, cluster, link.slot, false) {
            log::warn!("ending the import of slot {}: {e}", link.slot);
        }
    }
}

/// Ends the import of `slot` if it runs: served here, or what it received dropped.
fn end(shared: &Shared, cluster: &Cluster, slot: u16, success: bool) -> Result<(), String> {
    let ended = cluster.moves.end_import(slot, success);
    let failed = match ended {
        Ok(false) => return Ok(()),
        Ok(true) if success => return Ok(()),
        Ok(true) => None,
        Err(e) => Some(format!("saving the imported slot failed: {e}")),
    };
    shared
        .store
        .drop_ns(CLUSTER_NS + slot)
        .map_err(|e| e.to_string())?;
    failed.map_or(Ok(()), Err)
}
