//! The cluster's topology as the controller pushes it (Kvrocks' `CLUSTERX SETNODES`
//! format), which node owns each slot, and its file in the data directory.
//!
//! A node list is one line per node: `<id> <host> <port> master - [<slot> | <a>-<b>]...`
//! for a primary, `<id> <host> <port> slave <primary id>` for a replica; ids are 40
//! characters. The file is Kvrocks' too: `version <n>`, `id <my id>`, then `node <line>`.

use super::slot::SLOTS;
use std::collections::{HashMap, HashSet};

/// The length of a node id.
pub(crate) const ID_LEN: usize = 40;

/// Most nodes a topology may name (a slot's owner is kept as a 16-bit position).
const MAX_NODES: usize = SLOTS;

/// Kvrocks' texts for a bad topology.
pub(crate) const BAD_VERSION: &str = "Invalid cluster version";
pub(crate) const BAD_NODE_ID: &str = "Invalid cluster node id";
const BAD_NODES: &str = "Invalid cluster nodes info";
const SLOT_RANGE: &str = "Slot is out of range";
const OVERLAP: &str = "Slot distribution is overlapped";

/// One node of the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Node {
    pub(crate) id: String,
    pub(crate) host: String,
    pub(crate) port: u16,
    /// For a replica, the id of its primary.
    pub(crate) primary: Option<String>,
}

/// The topology: its version, this node's id, the nodes, and each slot's owner.
#[derive(Clone)]
pub(crate) struct Topology {
    /// -1 until the controller sets one.
    pub(crate) version: i64,
    pub(crate) myid: String,
    pub(crate) nodes: Vec<Node>,
    /// Per slot: 1 + the owner's position in `nodes`, or 0 for none.
    owners: Box<[u16]>,
}

impl Topology {
    /// No topology yet: no slot served, only this node's id known.
    pub(crate) fn empty(myid: String) -> Topology {
        Topology {
            version: -1,
            myid,
            nodes: Vec::new(),
            owners: vec![0; SLOTS].into_boxed_slice(),
        }
    }

    /// Parses a node list (`CLUSTERX SETNODES`), keeping `myid`.
    pub(crate) fn parse(text: &str, version: i64, myid: String) -> Result<Topology, String> {
        let mut topology = Topology::empty(myid);
        topology.version = version;
        let mut ids = std::collections::HashSet::new();
        for line in text.split('\n').map(str::trim).filter(|l| !l.is_empty()) {
            topology.add_node(line, &mut ids)?;
        }
        if topology.nodes.is_empty() {
            return Err(BAD_NODES.to_owned());
        }
        Ok(topology)
    }

    fn add_node<'l>(&mut self, line: &'l str, ids: &mut HashSet<&'l str>) -> Result<(), String> {
        let fields: Vec<&str> = line.split(' ').filter(|f| !f.is_empty()).collect();
        if fields.len() < 5 || self.nodes.len() >= MAX_NODES {
            return Err(BAD_NODES.to_owned());
        }
        let id = fields[0];
        if id.len() != ID_LEN || !ids.insert(id) {
            return Err(BAD_NODE_ID.to_owned());
        }
        let port = fields[2]
            .parse::<u16>()
            .map_err(|_| "Invalid cluster node port".to_owned())?;
        let primary = match fields[3].to_ascii_lowercase().as_str() {
            "master" if fields[4] == "-" => None,
            "slave" | "replica" if fields[4].len() == ID_LEN => Some(fields[4].to_owned()),
            "master" | "slave" | "replica" => return Err(BAD_NODE_ID.to_owned()),
            _ => return Err("Invalid cluster node role".to_owned()),
        };
        if primary.is_some() && fields.len() != 5 {
            return Err(BAD_NODES.to_owned());
        }
        let index = self.nodes.len() as u16 + 1;
        for range in &fields[5..] {
            let (first, last) = parse_range(range)?;
            for slot in first..=last {
                let owner = &mut self.owners[usize::from(slot)];
                if *owner != 0 {
                    return Err(OVERLAP.to_owned());
                }
                *owner = index;
            }
        }
        self.nodes.push(Node {
            id: id.to_owned(),
            host: fields[1].to_owned(),
            port,
            primary,
        });
        Ok(())
    }

    /// The node that serves `slot`, if any.
    pub(crate) fn owner(&self, slot: u16) -> Option<&Node> {
        match self.owners[usize::from(slot)] {
            0 => None,
            at => self.nodes.get(usize::from(at) - 1),
        }
    }

    /// This node, if the topology names it.
    pub(crate) fn me(&self) -> Option<&Node> {
        self.node(&self.myid)
    }

    /// The node of id `id`.
    pub(crate) fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// Runs of consecutive slots with one owner, in slot order: `(first, last, owner,
    /// the owner's position in `nodes`)`.
    pub(crate) fn ranges(&self) -> Vec<(u16, u16, &Node, usize)> {
        let mut out = Vec::new();
        let mut slot = 0;
        while slot < SLOTS {
            let owner = self.owners[slot];
            let first = slot;
            while slot < SLOTS && self.owners[slot] == owner {
                slot += 1;
            }
            if owner != 0 {
                let at = usize::from(owner) - 1;
                out.push((first as u16, (slot - 1) as u16, &self.nodes[at], at));
            }
        }
        out
    }

    /// Each node's runs of slots, by the node's position in `nodes`: one pass.
    pub(crate) fn slots_by_node(&self) -> Vec<Vec<(u16, u16)>> {
        let mut out = vec![Vec::new(); self.nodes.len()];
        for (first, last, _, at) in self.ranges() {
            out[at].push((first, last));
        }
        out
    }
    /// Each node's replicas, by the node's position in `nodes`: one pass.
    pub(crate) fn replicas_by_node(&self) -> Vec<Vec<&Node>> {
        let position: HashMap<&str, usize> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.as_str(), i))
            .collect();
        let mut out = vec![Vec::new(); self.nodes.len()];
        for node in &self.nodes {
            if let Some(&at) = node.primary.as_deref().and_then(|p| position.get(p)) {
                out[at].push(node);
            }
        }
        out
    }

    /// Slots with an owner.
    pub(crate) fn assigned(&self) -> usize {
        self.owners.iter().filter(|&&o| o != 0).count()
    }

    /// Assigns `slots` to the primary `id` (`CLUSTERX SETSLOT`).
    pub(crate) fn assign(&mut self, slots: (u16, u16), id: &str) -> Result<(), String> {
        let Some(at) = self.nodes.iter().position(|n| n.id == id) else {
            return Err("No this node in the cluster".to_owned());
        };
        if self.nodes[at].primary.is_some() {
            return Err("The node isn't a master".to_owned());
        }
        for slot in slots.0..=slots.1 {
            self.owners[usize::from(slot)] = at as u16 + 1;
        }
        Ok(())
    }

    /// The file's text: Kvrocks' `nodes.conf`.
    pub(crate) fn dump(&self) -> String {
        let mut out = format!("version {}\nid {}\n", self.version, self.myid);
        let slots = self.slots_by_node();
        for (node, slots) in self.nodes.iter().zip(&slots) {
            let role = match &node.primary {
                Some(primary) => format!("slave {primary}"),
                None => "master -".to_owned(),
            };
            out += &format!("node {} {} {} {role}", node.id, node.host, node.port);
            for (first, last) in slots {
                out += &match first == last {
                    true => format!(" {first}"),
                    false => format!(" {first}-{last}"),
                };
            }
            out.push('\n');
        }
        out
    }

    /// Reads what [`Topology::dump`] wrote.
    pub(crate) fn load(text: &str) -> Result<Topology, String> {
        let (mut version, mut myid, mut nodes) = (None, None, String::new());
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "version" => version = Some(value.parse::<i64>().map_err(|_| BAD_VERSION)?),
                "id" if value.len() == ID_LEN => myid = Some(value.to_owned()),
                "node" => nodes += &format!("{value}\n"),
                _ => return Err(format!("unknown line in the cluster file: {line}")),
            }
        }
        let myid = myid.ok_or(BAD_NODE_ID)?;
        match version {
            Some(version) if version >= 0 => Topology::parse(&nodes, version, myid),
            _ => Ok(Topology::empty(myid)),
        }
    }
}

/// `<slot>` or `<first>-<last>` (first below last), within the slots.
pub(crate) fn parse_range(text: &str) -> Result<(u16, u16), String> {
    let slot = |s: &str| {
        s.parse::<u16>()
            .ok()
            .filter(|&n| usize::from(n) < SLOTS)
            .ok_or_else(|| SLOT_RANGE.to_owned())
    };
    match text.split_once('-') {
        None => slot(text).map(|s| (s, s)),
        Some((a, b)) => match (slot(a)?, slot(b)?) {
            (a, b) if a < b => Ok((a, b)),
            _ => Err(SLOT_RANGE.to_owned()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(c: char) -> String {
        std::iter::repeat_n(c, ID_LEN).collect()
    }

    #[test]
    fn parses_owns_dumps_and_loads() {
        let text = format!(
            "{a} 127.0.0.1 7000 master - 0-100 200\n{b} 127.0.0.1 7001 slave {a}\n\
             {c} 127.0.0.1 7002 master - 101-199 201-16383",
            a = id('a'),
            b = id('b'),
            c = id('c')
        );
        let t = Topology::parse(&text, 3, id('b')).unwrap();
        assert_eq!(t.owner(0).unwrap().id, id('a'));
        assert_eq!(t.owner(150).unwrap().port, 7002);
        assert_eq!(t.owner(200).unwrap().port, 7000);
        assert_eq!(t.assigned(), 16384);
        assert_eq!(t.me().unwrap().primary, Some(id('a')));
        let replicas = t.replicas_by_node();
        assert_eq!(
            replicas[0].iter().map(|n| &n.id).collect::<Vec<_>>(),
            [&id('b')]
        );
        assert!(replicas[1].is_empty() && replicas[2].is_empty());
        let slots = t.slots_by_node();
        assert_eq!(slots[0], [(0, 100), (200, 200)]);
        assert!(slots[1].is_empty());
        let ranges: Vec<_> = t
            .ranges()
            .iter()
            .map(|(a, b, n, _)| (*a, *b, n.port))
            .collect();
        assert_eq!(
            ranges,
            [
                (0, 100, 7000),
                (101, 199, 7002),
                (200, 200, 7000),
                (201, 16383, 7002)
            ]
        );
        let back = Topology::load(&t.dump()).unwrap();
        assert_eq!(
            (back.version, &back.myid, &back.nodes),
            (3, &t.myid, &t.nodes)
        );
        assert_eq!(back.ranges().len(), 4);
    }

    #[test]
    fn refuses_what_kvrocks_refuses() {
        let a = id('a');
        let bad = |text: String| Topology::parse(&text, 1, a.clone()).err().unwrap();
        assert_eq!(bad(format!("{a} h 1 master - 0-16384")), SLOT_RANGE);
        assert_eq!(bad(format!("{a} h 1 master - 5-5")), SLOT_RANGE);
        assert_eq!(
            bad(format!("{a} h 1 master - 0-9\n{} h 2 master - 9", id('b'))),
            OVERLAP
        );
        assert_eq!(bad(format!("{a} h 1 slave -")), BAD_NODE_ID);
        assert_eq!(bad(format!("{a} h 1 slave {} 5", id('b'))), BAD_NODES);
        assert_eq!(
            bad(format!("{a} h x master -")),
            "Invalid cluster node port"
        );
        assert_eq!(bad(format!("{a} h 1 boss -")), "Invalid cluster node role");
        assert_eq!(bad("abc h 1 master -".to_owned()), BAD_NODE_ID);
        assert_eq!(
            bad(format!("{a} h 1 master -\n{a} h 2 master -")),
            BAD_NODE_ID
        );
        assert_eq!(bad(String::new()), BAD_NODES);
    }

    #[test]
    fn random_node_lists_are_taken_or_refused_and_dump_back() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(37);
        // Lines shaped as node lines, each field mostly valid, sometimes not.
        let mut pick = |valid: &[String], invalid: &[&str]| -> String {
            match rng.gen_ratio(1, 12) {
                true => invalid[rng.gen_range(0..invalid.len())].to_owned(),
                false => valid[rng.gen_range(0..valid.len())].clone(),
            }
        };
        let ids = [id('a'), id('b'), id('c'), id('d')];
        let hosts = ["127.0.0.1".to_owned(), "h".to_owned()];
        let ports = ["7000".to_owned(), "1".to_owned()];
        let roles = ["master".to_owned(), "slave".to_owned()];
        let masters = ["-".to_owned(), id('a'), id('b')];
        let slots = ["0", "16383", "5-9", "100-200", "0-99", "8000-16383"].map(String::from);
        let mut taken = 0;
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..pick(&["1", "2", "3"].map(String::from), &["0"])
                .parse()
                .unwrap()
            {
                let mut line = vec![
                    pick(&ids, &["abc", ""]),
                    pick(&hosts, &[""]),
                    pick(&ports, &["x", "65536", "-1"]),
                    pick(&roles, &["boss", "replica"]),
                    pick(&masters, &["+", "abc"]),
                ];
                for _ in 0..pick(&["0", "1", "2"].map(String::from), &["3"])
                    .parse()
                    .unwrap()
                {
                    line.push(pick(&slots, &["16384", "9-5", "x-y", "5-5", "1-2-3"]));
                }
                text += &line.join(" ");
                text += &pick(&["\n".to_owned()], &[" ", "\n\n"]);
            }
            let _ = Topology::load(&text);
            let Ok(t) = Topology::parse(&text, 1, id('a')) else {
                continue;
            };
            taken += 1;
            let back = Topology::load(&t.dump()).expect("a dump loads");
            assert_eq!(back.nodes, t.nodes);
            assert_eq!(back.owners, t.owners, "{text:?}");
        }
        assert!(taken > 0, "no random list was valid");
    }

    #[test]
    fn a_list_of_too_many_nodes_is_refused() {
        let line = |n: usize| format!("{n:040} h 1 master -\n");
        let most: String = (0..MAX_NODES).map(line).collect();
        let t = Topology::parse(&most, 1, id('a')).unwrap();
        assert_eq!(t.nodes.len(), MAX_NODES);
        let one_more = most + &line(MAX_NODES);
        assert_eq!(
            Topology::parse(&one_more, 1, id('a')).err().unwrap(),
            BAD_NODES
        );
    }
}
