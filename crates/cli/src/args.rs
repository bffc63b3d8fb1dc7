//! The flags a command was given, by name: from clap's matches (the command line) or
//! from `--name value` pairs (a config file's directives). A value that does not parse
//! is an error naming its flag: a mistyped `--requirepass` or `--port` must stop the
//! server from starting, not start it with a default.

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

    /// The flags and positional arguments clap matched for one (sub)command.
    pub fn from_matches(matches: &clap::ArgMatches) -> Args {
        let mut args = Args {
            values: HashMap::new(),
            switches: Vec::new(),
            positional: Vec::new(),
        };
        for id in matches.ids() {
            let name = id.as_str();
            if let Ok(Some(on)) = matches.try_get_one::<bool>(name) {
                if *on {
                    args.switches.push(name.to_owned());
                }
            } else if let Ok(Some(value)) = matches.try_get_one::<String>(name) {
                match name {
                    "config-file" | "key" => args.positional.push(value.clone()),
                    _ => drop(args.values.insert(name.to_owned(), value.clone())),
                }
            }
        }
        args
    }

    /// These arguments with `over`'s flags laid over them (a config file's, then the
    /// command line's).
    pub fn overlaid(mut self, over: Args) -> Args {
        self.values.extend(over.values);
        for switch in over.switches {
            if !self.switches.contains(&switch) {
                self.switches.push(switch);
            }
        }
        self.positional = over.positional;
        self
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
