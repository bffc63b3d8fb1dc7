//! `rocksketch inspect --dir DIR [KEY] [--json]`: a store read offline (see
//! [`rocksketch::inspect`]), for a person or, with `--json`, for a script.

use crate::args::Args;
use rocksketch::inspect::{inspect, Report};
use serde_json::json;

pub fn run(args: Args) -> Result<(), String> {
    let dir = args.string("dir").unwrap_or("./rocksketch-data").to_owned();
    let key = args.positional.first().map(String::as_bytes);
    let report =
        inspect(std::path::Path::new(&dir), key).map_err(|e| format!("inspecting {dir}: {e}"))?;
    if key.is_some() && report.keys.is_empty() {
        return Err(format!("no key {} in {dir}", args.positional[0]));
    }
    match args.switch("json") {
        true => println!("{:#}", to_json(&report)),
        false => print!("{}", to_text(&dir, &report)),
    }
    Ok(())
}

fn to_json(report: &Report) -> serde_json::Value {
    json!({
        "column_families": report.column_families.iter().map(|cf| json!({
            "name": cf.name,
            "levels": cf.levels.iter().map(|(level, files, bytes)| json!({
                "level": level, "files": files, "bytes": bytes,
            })).collect::<Vec<_>>(),
            "memtable_bytes": cf.memtable_bytes,
            "estimated_keys": cf.estimated_keys,
        })).collect::<Vec<_>>(),
        "keys": report.keys.iter().map(|k| json!({
            "db": k.db,
            "key": String::from_utf8_lossy(&k.key),
            "type": k.key_type.redis_name(),
            "version": k.version,
            "expire_at_ms": k.expire_at_ms,
            "params": k.params,
            "bytes_on_disk": k.bytes_on_disk,
            "operands_waiting": k.pages.iter().map(|p| p.operands).sum::<usize>(),
            "pages": k.pages.iter().map(|p| json!({
                "sub": p.sub, "page": p.page, "bytes": p.bytes, "operands": p.operands,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

fn to_text(dir: &str, report: &Report) -> String {
    use std::fmt::Write;
    let mut out = format!("store {dir}\n");
    for cf in &report.column_families {
        let _ = writeln!(
            out,
            "  column family {}: about {} keys, {} bytes in memtables",
            cf.name, cf.estimated_keys, cf.memtable_bytes
        );
        for (level, files, bytes) in &cf.levels {
            let _ = writeln!(out, "    L{level}: {files} files, {bytes} bytes");
        }
    }
    for k in &report.keys {
        let waiting: usize = k.pages.iter().map(|p| p.operands).sum();
        let _ = writeln!(
            out,
            "key {:?} (db {}): {}, version {}, {}\n  {}\n  {} pages, {} operands waiting, about {} bytes on disk",
            String::from_utf8_lossy(&k.key),
            k.db,
            k.key_type.redis_name(),
            k.version,
            match k.expire_at_ms {
                0 => "no expiry".to_owned(),
                at => format!("expires at {at} (Unix ms)"),
            },
            k.params,
            k.pages.len(),
            waiting,
            k.bytes_on_disk
        );
        for p in &k.pages {
            let sub = match p.sub {
                u16::MAX => "tally".to_owned(),
                sub => format!("sub {sub}"),
            };
            let _ = writeln!(
                out,
                "    {sub} page {}: {} bytes, {} operands",
                p.page, p.bytes, p.operands
            );
        }
    }
    out
}
