//! `rocksketch serve /path/rocksketch.conf`: a config file in redis.conf's syntax. Each
//! line is `directive value` (split as Redis splits it: quotes and escapes), `#` starts
//! a comment line; a directive is a `serve` flag without its dashes, switches take
//! `yes` or `no`. Flags on the command line override the file. An unknown directive, a
//! missing or extra value or a repeated directive is an error naming the line.

use std::collections::HashSet;

/// Reads `path` into flags (`--name value`, or `--name` for a switch set to `yes`), to
/// be parsed ahead of the command line's own flags.
pub fn flags(path: &str, switches: &[&str], valued: &[&str]) -> Result<Vec<String>, String> {
    let text = std::fs::read(path).map_err(|e| format!("reading the config file {path}: {e}"))?;
    parse(&text, switches, valued).map_err(|(line, why)| format!("{path}:{line}: {why}"))
}

/// The flags a config file's text stands for; errors carry the line number.
pub fn parse(
    text: &[u8],
    switches: &[&str],
    valued: &[&str],
) -> Result<Vec<String>, (usize, String)> {
    let mut flags = Vec::new();
    let mut seen = HashSet::new();
    for (number, line) in text.split(|b| *b == b'\n').enumerate() {
        let at = number + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() || trimmed.starts_with(b"#") {
            continue;
        }
        let words =
            rocksketch::resp::split_args(trimmed).ok_or((at, "unbalanced quotes".to_owned()))?;
        let mut words = words
            .into_iter()
            .map(|w| String::from_utf8(w).map_err(|_| (at, "not UTF-8".to_owned())));
        let name = words
            .next()
            .ok_or((at, "empty directive".to_owned()))??
            .to_ascii_lowercase();
        let values: Vec<String> = words.collect::<Result<_, _>>()?;
        let is_switch = switches.contains(&name.as_str());
        if !is_switch && !valued.contains(&name.as_str()) {
            return Err((at, format!("unknown directive '{name}'")));
        }
        let [value] = values.as_slice() else {
            return Err((
                at,
                format!("'{name}' takes one value, got {}", values.len()),
            ));
        };
        if !seen.insert(name.clone()) {
            return Err((at, format!("'{name}' is set twice")));
        }
        match (is_switch, value.to_ascii_lowercase().as_str()) {
            (true, "yes") => flags.push(format!("--{name}")),
            (true, "no") => {}
            (true, other) => return Err((at, format!("'{name}' takes yes or no, not '{other}'"))),
            (false, _) => flags.extend([format!("--{name}"), value.clone()]),
        }
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCHES: &[&str] = &["sync"];
    const VALUED: &[&str] = &["port", "requirepass", "dir"];

    fn parsed(text: &str) -> Result<Vec<String>, (usize, String)> {
        parse(text.as_bytes(), SWITCHES, VALUED)
    }

    #[test]
    fn directives_become_flags() {
        let text =
            "# a comment\n\nport 7000\r\n  requirepass \"s3 cret\\x21\"\nsync yes\ndir '/data/x'\n";
        assert_eq!(
            parsed(text).unwrap(),
            [
                "--port",
                "7000",
                "--requirepass",
                "s3 cret!",
                "--sync",
                "--dir",
                "/data/x"
            ]
        );
        assert_eq!(parsed("SYNC no\n").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn bad_lines_are_named() {
        for (text, line, why) in [
            ("port 1\nsave 60 1\n", 2, "unknown directive 'save'"),
            ("port\n", 1, "'port' takes one value, got 0"),
            ("\n\nport 1 2\n", 3, "'port' takes one value, got 2"),
            ("port 1\nport 2\n", 2, "'port' is set twice"),
            ("sync maybe\n", 1, "'sync' takes yes or no, not 'maybe'"),
            ("requirepass \"open\n", 1, "unbalanced quotes"),
        ] {
            assert_eq!(parsed(text), Err((line, why.to_owned())), "{text:?}");
        }
    }
}
