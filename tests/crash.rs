//! Crash safety: a writer in a child process runs a mixed workload (count-min increments,
//! cuckoo adds and deletes, Bloom adds one by one and in batches, HyperLogLog adds
//! answered and blind, windowed count-min increments and Bloom adds, a key created,
//! incremented and deleted over and over) and prints each operation's number once it is acknowledged; the parent kills it
//! with SIGKILL at a random moment, reopens the store and checks it, for 60 cycles over
//! one directory (each cycle in its own namespace, all rechecked at the end).
//!
//! With synchronous commits every acknowledged operation must be there, and at most the
//! one in flight besides; without them the state must equal the effect of some prefix of
//! the operation log (a command is one write batch, so none is torn). The store must
//! always open.

mod common;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rocksketch::{CmsError, Error, Store, StoreOptions};
use rocksketch_merge::hll::{position, Registers};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CYCLES: u16 = 60;
const OPS: usize = 100_000;
const ITEMS: u8 = 12;

#[derive(Debug, Clone)]
enum Op {
    Init,
    Incr(u8, u8),
    Add(u32),
    MAdd(Vec<u32>),
    CreateTmp,
    IncrTmp(u8),
    DeleteTmp,
    CfAdd(u32),
    /// Deletes a cuckoo item the log added before and did not delete yet.
    CfDel(u32),
    PfAdd(u32),
    PfBlind(Vec<u32>),
    /// Creates the windowed sketch, then (another operation) the windowed filter.
    WInitCms,
    WInitBloom,
    WIncr(u8, u8),
    WAdd(u32),
}

/// The windows of the windowed keys: one generation until 2039, so a run's answers
/// are those of a plain structure, each write still going to its generation's pages.
fn forever() -> rocksketch::Window {
    rocksketch::Window::new(1 << 40, 1).unwrap()
}

/// The operation log of a cycle: the same for the writer and the checker.
fn ops(seed: u64) -> impl Iterator<Item = Op> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut next_item = 0u32;
    let mut in_cuckoo: Vec<u32> = Vec::new();
    (0..OPS).map(move |i| {
        match i {
            0 => return Op::Init,
            1 => return Op::WInitCms,
            2 => return Op::WInitBloom,
            _ => {}
        }
        match rng.gen_range(0..17) {
            0..=3 => Op::Incr(rng.gen_range(0..ITEMS), rng.gen_range(1..5)),
            4 | 5 => {
                next_item += 1;
                Op::Add(next_item)
            }
            6 => {
                let ids = (0..4).map(|k| next_item + 1 + k).collect();
                next_item += 4;
                Op::MAdd(ids)
            }
            7 => Op::CreateTmp,
            8 => Op::IncrTmp(rng.gen_range(0..ITEMS)),
            9 => Op::DeleteTmp,
            13 => {
                next_item += 1;
                Op::PfAdd(next_item)
            }
            14 => {
                let ids = (0..3).map(|k| next_item + 1 + k).collect();
                next_item += 3;
                Op::PfBlind(ids)
            }
            15 => Op::WIncr(rng.gen_range(0..ITEMS), rng.gen_range(1..5)),
            16 => {
                next_item += 1;
                Op::WAdd(next_item)
            }
            12 if !in_cuckoo.is_empty() => {
                Op::CfDel(in_cuckoo.swap_remove(rng.gen_range(0..in_cuckoo.len())))
            }
            _ => {
                next_item += 1;
                in_cuckoo.push(next_item);
                Op::CfAdd(next_item)
            }
        }
    })
}

fn item(id: u8) -> String {
    format!("item-{id}")
}

fn member(id: u32) -> String {
    format!("member-{id}")
}

/// Applies one operation to the store. Errors a model expects (a missing key) count as
/// done; anything else fails the writer.
fn apply(store: &Store, ns: u16, op: &Op) {
    let ns = store.ns(ns);
    let expected = |r: rocksketch::Result<()>| match r {
        Ok(()) | Err(Error::Cms(CmsError::KeyDoesNotExist | CmsError::KeyAlreadyExists)) => {}
        Err(e) => panic!("{op:?}: {e}"),
    };
    match op {
        Op::Init => expected(ns.cms("counts").init_by_dim(10_000, 4)),
        Op::Incr(i, by) => expected(
            ns.cms("counts")
                .incr_by_with_estimates(&[(item(*i), u64::from(*by))])
                .map(|_| ()),
        ),
        Op::Add(id) => expected(ns.bloom("members").add(member(*id)).map(|_| ())),
        Op::MAdd(ids) => {
            let names: Vec<String> = ids.iter().map(|i| member(*i)).collect();
            let (_, error) = ns.bloom("members").madd(&names);
            assert!(error.is_none(), "{error:?}");
        }
        Op::CreateTmp => expected(ns.cms("tmp").init_by_dim(10_000, 4)),
        Op::IncrTmp(i) => expected(ns.cms("tmp").incr_by(&[(item(*i), 1)])),
        Op::DeleteTmp => {
            ns.delete(b"tmp").unwrap();
        }
        Op::CfAdd(id) => ns.cuckoo("cuckoo").add(member(*id)).unwrap(),
        Op::CfDel(id) => assert!(ns.cuckoo("cuckoo").delete(member(*id)).unwrap()),
        Op::PfAdd(id) => {
            ns.hll("visitors").add(&[member(*id)]).unwrap();
        }
        Op::PfBlind(ids) => {
            let names: Vec<String> = ids.iter().map(|i| member(*i)).collect();
            ns.hll("visitors").add_blind(&names).unwrap();
        }
        Op::WInitCms => expected(ns.cms("wcounts").init_by_dim_windowed(10_000, 4, forever())),
        Op::WInitBloom => {
            match ns
                .bloom("wmembers")
                .reserve_windowed(0.001, 10_000, 2, forever())
            {
                Ok(()) | Err(Error::Bloom(rocksketch::BloomError::ItemExists)) => {}
                Err(e) => panic!("{op:?}: {e}"),
            }
        }
        Op::WIncr(i, by) => expected(
            ns.cms("wcounts")
                .incr_by_with_estimates(&[(item(*i), u64::from(*by))])
                .map(|_| ()),
        ),
        Op::WAdd(id) => {
            ns.bloom("wmembers").add(member(*id)).unwrap();
        }
    }
}

/// What a prefix of the log leaves behind.
#[derive(Debug, Default, Clone, PartialEq)]
struct State {
    counts: Option<BTreeMap<u8, u32>>,
    tmp: Option<BTreeMap<u8, u32>>,
    members: BTreeSet<u32>,
    /// Items in the cuckoo filter (`None` before its first add).
    cuckoo: Option<BTreeSet<u32>>,
    /// The HyperLogLog's registers (`None` before its first add).
    visitors: Option<Registers>,
    wcounts: Option<BTreeMap<u8, u32>>,
    wmembers: BTreeSet<u32>,
}

impl State {
    fn apply(&mut self, op: &Op) {
        match op {
            Op::Init => self.counts = Some(BTreeMap::new()),
            Op::Incr(i, by) => {
                if let Some(c) = &mut self.counts {
                    *c.entry(*i).or_default() += u32::from(*by);
                }
            }
            Op::Add(id) => {
                self.members.insert(*id);
            }
            Op::MAdd(ids) => self.members.extend(ids),
            Op::CreateTmp => {
                self.tmp.get_or_insert_with(BTreeMap::new);
            }
            Op::IncrTmp(i) => {
                if let Some(t) = &mut self.tmp {
                    *t.entry(*i).or_default() += 1;
                }
            }
            Op::DeleteTmp => self.tmp = None,
            Op::CfAdd(id) => {
                self.cuckoo.get_or_insert_with(BTreeSet::new).insert(*id);
            }
            Op::CfDel(id) => {
                if let Some(c) = &mut self.cuckoo {
                    c.remove(id);
                }
            }
            Op::PfAdd(id) => self.raise(&[*id]),
            Op::PfBlind(ids) => self.raise(ids),
            Op::WInitCms => self.wcounts = Some(BTreeMap::new()),
            Op::WInitBloom => {}
            Op::WIncr(i, by) => {
                if let Some(c) = &mut self.wcounts {
                    *c.entry(*i).or_default() += u32::from(*by);
                }
            }
            Op::WAdd(id) => {
                self.wmembers.insert(*id);
            }
        }
    }

    fn raise(&mut self, ids: &[u32]) {
        let regs = self.visitors.get_or_insert_with(Registers::new);
        for id in ids {
            let (index, rank) = position(member(*id).as_bytes());
            regs.raise(index, rank);
        }
    }

    /// Whether the store holds exactly this state's sketches and at least its members.
    fn matches(&self, store: &Store, ns: u16) -> bool {
        let ns = store.ns(ns);
        let items: Vec<String> = (0..ITEMS).map(item).collect();
        let read = |key: &str| match ns.cms(key).query(&items) {
            Ok(est) => Some(
                est.into_iter()
                    .enumerate()
                    .filter(|(_, e)| *e > 0)
                    .map(|(i, e)| (i as u8, e))
                    .collect::<BTreeMap<u8, u32>>(),
            ),
            Err(Error::Cms(CmsError::KeyDoesNotExist)) => None,
            Err(e) => panic!("{e}"),
        };
        if read("counts") != self.counts
            || read("tmp") != self.tmp
            || read("wcounts") != self.wcounts
        {
            return false;
        }
        // A prefix's registers exactly: none lost, none from an operation not made.
        if ns.hll("visitors").registers().unwrap() != self.visitors {
            return false;
        }
        let cuckoo = ns.cuckoo("cuckoo");
        match (&self.cuckoo, cuckoo.info()) {
            (None, Err(Error::Cuckoo(rocksketch::CuckooError::NotFound))) => {}
            (Some(items), Ok(info)) => {
                // The tally counts exactly what is held: a prefix's adds less its deletes.
                if info.inserted != items.len() as u64 {
                    return false;
                }
                let names: Vec<String> = items.iter().map(|m| member(*m)).collect();
                if !cuckoo.mexists(&names).unwrap().iter().all(|f| *f) {
                    return false;
                }
            }
            (_, Err(e)) if !matches!(e, Error::Cuckoo(_)) => panic!("{e}"),
            _ => return false,
        }
        let windowed: Vec<String> = self.wmembers.iter().map(|m| member(*m)).collect();
        if !ns
            .bloom("wmembers")
            .mexists(&windowed)
            .unwrap()
            .iter()
            .all(|f| *f)
        {
            return false;
        }
        let names: Vec<String> = self.members.iter().map(|m| member(*m)).collect();
        ns.bloom("members")
            .mexists(&names)
            .unwrap()
            .iter()
            .all(|f| *f)
    }
}

/// The writer, run in a child process: `cargo test` runs it only when asked to.
#[test]
#[ignore = "run by crash_cycles in a child process"]
fn crash_writer() {
    let Ok(dir) = std::env::var("ROCKSKETCH_CRASH_DIR") else {
        return;
    };
    let ns: u16 = std::env::var("ROCKSKETCH_CRASH_NS")
        .unwrap()
        .parse()
        .unwrap();
    let sync = std::env::var("ROCKSKETCH_CRASH_SYNC").is_ok();
    let options = StoreOptions {
        sync_writes: sync,
        ..StoreOptions::default()
    };
    let store = Store::open(&dir, options).unwrap();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    writeln!(out, "open").unwrap();
    out.flush().unwrap();
    for (i, op) in ops(u64::from(ns)).enumerate() {
        apply(&store, ns, &op);
        writeln!(out, "ack {i}").unwrap();
        out.flush().unwrap();
    }
}

/// Runs one writer, kills it after `delay` from its first line, and returns how many
/// operations it acknowledged.
fn run_and_kill(dir: &Path, ns: u16, sync: bool, delay: Duration) -> usize {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "crash_writer",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("ROCKSKETCH_CRASH_DIR", dir)
    .env("ROCKSKETCH_CRASH_NS", ns.to_string())
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    if sync {
        cmd.env("ROCKSKETCH_CRASH_SYNC", "1");
    }
    let mut child = cmd.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Wait until the store is open, then let it write for `delay`.
    // (libtest prints "test crash_writer ... " before it, on the same line.)
    for line in lines.by_ref() {
        if line.unwrap().ends_with("open") {
            break;
        }
    }
    let start = Instant::now();
    let reader = std::thread::spawn(move || {
        let mut acked = 0;
        for line in lines {
            match line {
                Ok(l) if l.starts_with("ack ") => acked += 1,
                _ => {}
            }
        }
        acked
    });
    std::thread::sleep(delay.saturating_sub(start.elapsed()));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    reader.join().unwrap()
}

#[test]
fn crash_cycles() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = StdRng::seed_from_u64(7);
    let mut verified: Vec<(u16, State)> = Vec::new();
    let (mut acked_total, mut lost) = (0, 0);
    for cycle in 0..CYCLES {
        let sync = cycle % 2 == 0;
        let delay = Duration::from_millis(rng.gen_range(20..250));
        let acked = run_and_kill(dir.path(), cycle, sync, delay);
        acked_total += acked;
        let store = Store::open(dir.path(), StoreOptions::default())
            .unwrap_or_else(|e| panic!("cycle {cycle}: the store does not open: {e}"));
        // States after each prefix, up to the one in flight.
        let mut state = State::default();
        let mut prefixes = vec![state.clone()];
        for op in ops(u64::from(cycle)).take(acked + 1) {
            state.apply(&op);
            prefixes.push(state.clone());
        }
        let candidates = if sync {
            acked..=acked + 1
        } else {
            0..=acked + 1
        };
        // The longest matching prefix: Bloom adds leave the sketches as they were, so a
        // shorter prefix can match too.
        let found = candidates
            .clone()
            .rev()
            .find(|k| prefixes[*k].matches(&store, cycle));
        match found {
            Some(k) => {
                lost += acked.saturating_sub(k);
                verified.push((cycle, prefixes[k].clone()));
            }
            None => panic!(
                "cycle {cycle} (sync {sync}): {acked} acknowledged, no prefix in {candidates:?} matches"
            ),
        }
    }
    // Every earlier cycle's state survived the later crashes.
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    for (cycle, state) in &verified {
        assert!(state.matches(&store, *cycle), "cycle {cycle} changed later");
    }
    assert!(
        acked_total > 1000,
        "the writers got going: {acked_total} acknowledged"
    );
    assert_eq!(lost, 0, "acknowledged operations lost");
    println!("{CYCLES} kill cycles, {acked_total} acknowledged operations checked, {lost} lost");
}
