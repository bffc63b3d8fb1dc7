//! The one way a command reads its arguments: a cursor over what follows the command's
//! name, front to back. A missing argument, or one left over, is the command's
//! wrong-arity error; a value that does not parse is the error its caller names, so
//! each command keeps RedisBloom's (or Redis's) own texts and order of checks.

use super::parse::{parse_f64, parse_i64};
use crate::error::{Error, Result};

/// The arguments of one command after its name.
#[derive(Clone, Copy, Debug)]
pub struct Args<'a> {
    command: &'static str,
    rest: &'a [Vec<u8>],
}

impl<'a> Args<'a> {
    /// The arguments of `request` (its name first) for the command the table calls
    /// `command`.
    pub fn new(command: &'static str, request: &'a [Vec<u8>]) -> Args<'a> {
        Args {
            command,
            rest: request.get(1..).unwrap_or_default(),
        }
    }

    /// A cursor over `args` (no name first), such as the part of a command's
    /// arguments one of its options takes.
    pub fn of(command: &'static str, args: &'a [Vec<u8>]) -> Args<'a> {
        Args {
            command,
            rest: args,
        }
    }

    /// The command's name as the table spells it (lower case).
    pub fn command(&self) -> &'static str {
        self.command
    }

    /// How many arguments are left.
    pub fn len(&self) -> usize {
        self.rest.len()
    }

    /// Whether every argument has been read.
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The next argument, without reading it.
    pub fn peek(&self) -> Option<&'a [u8]> {
        self.rest.first().map(Vec::as_slice)
    }

    /// The next argument, if there is one.
    pub fn next_opt(&mut self) -> Option<&'a [u8]> {
        let (first, rest) = self.rest.split_first()?;
        self.rest = rest;
        Some(first)
    }

    /// The next argument, which the command requires.
    pub fn next_arg(&mut self) -> Result<&'a [u8]> {
        self.next_opt().ok_or_else(|| self.wrong_arity())
    }

    /// The next argument, a key.
    pub fn next_key(&mut self) -> Result<&'a [u8]> {
        self.next_arg()
    }

    /// The next argument as Redis reads an integer, or `bad` if it is not one.
    pub fn next_i64(&mut self, bad: impl Into<Error>) -> Result<i64> {
        let arg = self.next_arg()?;
        parse_i64(arg).ok_or_else(|| bad.into())
    }

    /// The next argument as a non-negative integer, or `bad` if it is not one.
    pub fn next_u64(&mut self, bad: impl Into<Error>) -> Result<u64> {
        let arg = self.next_arg()?;
        parse_i64(arg)
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| bad.into())
    }

    /// The next argument as Redis reads a double, or `bad` if it is not one.
    pub fn next_f64(&mut self, bad: impl Into<Error>) -> Result<f64> {
        let arg = self.next_arg()?;
        parse_f64(arg).ok_or_else(|| bad.into())
    }

    /// Reads the next argument if it is `keyword` (in any case).
    pub fn next_if(&mut self, keyword: &str) -> bool {
        let matches = self
            .peek()
            .is_some_and(|a| a.eq_ignore_ascii_case(keyword.as_bytes()));
        if matches {
            self.rest = &self.rest[1..];
        }
        matches
    }

    /// The next `n` arguments, which the command requires.
    pub fn take(&mut self, n: usize) -> Result<&'a [Vec<u8>]> {
        if n > self.rest.len() {
            return Err(self.wrong_arity());
        }
        let (taken, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(taken)
    }

    /// Every argument left.
    pub fn rest(&mut self) -> &'a [Vec<u8>] {
        std::mem::take(&mut self.rest)
    }

    /// Every argument left, of which there must be at least one.
    pub fn rest_nonempty(&mut self) -> Result<&'a [Vec<u8>]> {
        match self.rest() {
            [] => Err(self.wrong_arity()),
            rest => Ok(rest),
        }
    }

    /// Checks that every argument has been read.
    pub fn finish(&self) -> Result<()> {
        match self.is_empty() {
            true => Ok(()),
            false => Err(self.wrong_arity()),
        }
    }

    /// This command's wrong-arity error.
    pub fn wrong_arity(&self) -> Error {
        Error::WrongArity(self.command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CmsError;

    fn request(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn reads_front_to_back_and_names_missing_or_extra_arguments() {
        let req = request(&["CMS.INITBYDIM", "k", "10", "x", "extra"]);
        let mut args = Args::new("cms.initbydim", &req);
        assert_eq!(args.len(), 4);
        assert_eq!(args.next_key().unwrap(), b"k");
        assert_eq!(args.next_u64(CmsError::InvalidWidth).unwrap(), 10);
        let bad = args.next_i64(CmsError::InvalidDepth).unwrap_err();
        assert!(matches!(bad, Error::Cms(CmsError::InvalidDepth)), "{bad:?}");
        assert!(matches!(
            args.finish(),
            Err(Error::WrongArity("cms.initbydim"))
        ));
        assert_eq!(args.rest(), &req[4..]);
        assert!(args.finish().is_ok());
        assert!(matches!(args.next_arg(), Err(Error::WrongArity(_))));
        assert!(matches!(args.take(1), Err(Error::WrongArity(_))));
        assert!(matches!(args.rest_nonempty(), Err(Error::WrongArity(_))));
    }

    #[test]
    fn keywords_numbers_and_runs() {
        let req = request(&["X", "items", "-1", "0.5", "a", "b"]);
        let mut args = Args::new("x", &req);
        assert!(!args.next_if("NOCREATE"));
        assert!(args.next_if("ITEMS"));
        let mut copy = args;
        assert!(matches!(
            copy.next_u64(CmsError::NumberNegative),
            Err(Error::Cms(CmsError::NumberNegative))
        ));
        assert_eq!(args.next_i64(CmsError::CannotParseNumber).unwrap(), -1);
        assert_eq!(args.next_f64(CmsError::InvalidProb).unwrap(), 0.5);
        assert_eq!(args.peek(), Some(&b"a"[..]));
        assert_eq!(args.take(2).unwrap(), &req[4..]);
        assert!(args.is_empty());
        assert!(Args::new("x", &[]).is_empty());
    }
}
