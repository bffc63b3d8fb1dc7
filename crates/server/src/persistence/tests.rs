use super::*;

fn checkpoints(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != LATEST)
        .collect();
    names.sort();
    names
}

#[test]
fn a_save_keeps_the_newest_checkpoint_behind_latest() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("db"), Default::default()).unwrap();
    let backups = dir.path().join("backups");
    // What a save cut short by a crash leaves behind.
    std::fs::create_dir_all(backups.join(".checkpoint-1.partial")).unwrap();
    let saves = Saves::new(backups.clone());
    assert!(saves.newest().is_none());
    store.ns(0).cms(b"c").init_by_dim(100, 3).unwrap();
    let first = saves.save(&store).unwrap();
    store
        .ns(0)
        .cms(b"c")
        .incr_by(&[(b"a".as_slice(), 2)])
        .unwrap();
    let second = saves.save(&store).unwrap();
    assert!(second.sequence > first.sequence);
    assert_ne!(first.path, second.path);
    let name = second
        .path
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(
        checkpoints(&backups),
        vec![name.clone()],
        "older ones removed"
    );
    assert_eq!(
        std::fs::read_link(backups.join(LATEST)).unwrap(),
        Path::new(&name)
    );
    assert_eq!(saves.count(), 2);
    assert!(!saves.last_failed());
    drop(store);

    let restored = Store::open(backups.join(LATEST), Default::default()).unwrap();
    assert_eq!(restored.ns(0).cms(b"c").query(&[b"a"]).unwrap(), vec![2]);
    drop(restored);
    // A server started again finds it.
    let again = Saves::new(backups.clone());
    assert_eq!(again.newest().unwrap().path, backups.join(&name));
}

#[test]
fn a_save_that_cannot_write_fails_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("db"), Default::default()).unwrap();
    let blocked = dir.path().join("a-file");
    std::fs::write(&blocked, b"not a directory").unwrap();
    let saves = Saves::new(blocked.join("backups"));
    assert!(saves.save(&store).is_err());
    assert!(saves.last_failed());
    assert_eq!(saves.count(), 0);
    assert!(saves.newest().is_none());
}

#[test]
fn one_background_save_runs_and_a_scheduled_one_follows_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("db"), Default::default()).unwrap();
    let saves = Saves::new(dir.path().join("backups"));
    assert!(matches!(saves.begin_background(false), Begun::Start));
    assert!(matches!(saves.begin_background(false), Begun::Busy));
    assert!(matches!(saves.begin_background(true), Begun::Scheduled));
    assert!(saves.background_running());
    saves.run_background(&store);
    assert!(!saves.background_running());
    assert!(!saves.background.lock().scheduled);
    assert_eq!(saves.count(), 2, "the scheduled pass ran too");
    assert!(matches!(saves.begin_background(false), Begun::Start));
}
