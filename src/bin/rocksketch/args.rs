//! A small flag parser: `--name value` pairs and bare `--switch`es. A flag the command
//! does not know, or a value that does not parse, is an error naming it: a mistyped
//! `--requirepass` must stop the server from starting, not start it without a password.

use std::collections::HashMap;
use std::str::FromStr;

pub struct Args {
    values: HashMap<String, String>,
    switches: Vec<String>,
    pub positional: Vec<String>,
}

impl Args {
    /// Parses `argv`; `switches` are the flags that take no value, `valued` the flags
    /// that take one. Any other `--flag` is an error.
    pub fn parse(argv: &[String], switches: &[&str], valued: &[&str]) -> Result<Args, String> {
        let mut args = Args {
            values: HashMap::new(),
            switches: Vec::new(),
            positional: Vec::new(),
        };
        let mut it = argv.iter();
        while let Some(arg) = it.next() {
            match arg.strip_prefix("--") {
                Some(name) if switches.contains(&name) => args.switches.push(name.to_owned()),
                Some(name) if valued.contains(&name) => {
                    let value = it.next().ok_or(format!("--{name} needs a value"))?;
                    args.values.insert(name.to_owned(), value.clone());
                }
                Some(name) => return Err(format!("unknown flag --{name} (see --help)")),
                None => args.positional.push(arg.clone()),
            }
        }
        Ok(args)
    }

    pub fn get<T: FromStr>(&self, name: &str, default: T) -> Result<T, String> {
        match self.values.get(name) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("--{name}: cannot parse '{v}'")),
        }
    }

    pub fn string(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    pub fn switch(&self, name: &str) -> bool {
        self.switches.iter().any(|s| s == name)
    }
}
