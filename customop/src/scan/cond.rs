//! The preprocessor conditionals the scanner can decide, so that it reads
//! what g++ compiles: `#if 0`, `#if 1`, `#ifdef`/`#ifndef`/`#if defined`
//! of a name this file or `-D` defines (defined) or that nothing defines
//! (undefined), with `#elif`, `#else`, `#endif`. A condition it cannot
//! decide (an expression, a name a compiler or header may predefine:
//! `__x`, `_X`) keeps every branch, as before: a definition in both is
//! then reported as defined twice rather than silently picking one.

use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tri {
    Yes,
    No,
    Unknown,
}

#[derive(Debug)]
struct Level {
    now: Tri,
    any_yes: bool,
    any_unknown: bool,
}

/// The state of the conditionals at a point in a file.
#[derive(Debug, Default)]
pub struct Cond {
    stack: Vec<Level>,
    /// Object-like macros defined so far: name → replacement text.
    pub macros: HashMap<String, String>,
}

fn reserved(name: &str) -> bool {
    name.starts_with("__") || (name.starts_with('_') && name[1..].starts_with(|c: char| c.is_ascii_uppercase()))
}

impl Cond {
    /// With `-D` definitions (`NAME` or `NAME=VALUE`).
    pub fn with_defines(defines: &[String]) -> Self {
        let mut c = Self::default();
        for d in defines {
            let (n, v) = d.split_once('=').unwrap_or((d, "1"));
            c.macros.insert(n.to_owned(), v.to_owned());
        }
        c
    }

    /// Whether code here is compiled (or may be).
    pub fn active(&self) -> bool {
        self.stack.iter().all(|l| l.now != Tri::No)
    }

    fn defined(&self, name: &str) -> Tri {
        if self.macros.contains_key(name) {
            Tri::Yes
        } else if reserved(name) {
            Tri::Unknown
        } else {
            Tri::No
        }
    }

    fn eval(&self, expr: &str) -> Tri {
        let e = expr.trim();
        let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !s.starts_with(|c: char| c.is_ascii_digit());
        match e {
            "0" => Tri::No,
            "1" => Tri::Yes,
            _ => {
                let inner = e.strip_prefix("defined").map(str::trim).map(|r| r.strip_prefix('(').and_then(|r| r.strip_suffix(')')).unwrap_or(r).trim());
                match inner {
                    Some(n) if ident(n) => self.defined(n),
                    _ => Tri::Unknown,
                }
            }
        }
    }

    fn open(&mut self, t: Tri) {
        self.stack.push(Level { now: t, any_yes: t == Tri::Yes, any_unknown: t == Tri::Unknown });
    }

    /// Applies one directive line (the text after `#`).
    pub fn directive(&mut self, text: &str) {
        let text = text.trim_start();
        let (name, rest) = text.split_at(text.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(text.len()));
        let rest = rest.trim();
        let first = rest.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').next().unwrap_or("");
        match name {
            "if" => self.open(self.eval(rest)),
            "ifdef" => self.open(self.defined(first)),
            "ifndef" => self.open(match self.defined(first) {
                Tri::Yes => Tri::No,
                Tri::No => Tri::Yes,
                Tri::Unknown => Tri::Unknown,
            }),
            "elif" | "else" => {
                let t = if name == "else" { Tri::Yes } else { self.eval(rest) };
                if let Some(l) = self.stack.last_mut() {
                    l.now = if l.any_yes {
                        Tri::No
                    } else if l.any_unknown && t != Tri::No {
                        Tri::Unknown
                    } else {
                        t
                    };
                    l.any_yes |= l.now == Tri::Yes;
                    l.any_unknown |= l.now == Tri::Unknown;
                }
            }
            "endif" => {
                self.stack.pop();
            }
            "define" if self.active() && !first.is_empty() => {
                let after = &rest[first.len()..];
                // Object-like only (`#define T x`, not `#define F(a) ...`).
                let value = if after.starts_with('(') { String::new() } else { after.trim().to_owned() };
                self.macros.insert(first.to_owned(), value);
            }
            "undef" if self.active() => {
                self.macros.remove(first);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_conditions_are_decided_and_the_rest_kept() {
        let mut c = Cond::with_defines(&["FAST=1".into()]);
        c.directive("if 0");
        assert!(!c.active());
        c.directive("else");
        assert!(c.active());
        c.directive("endif");
        c.directive("ifdef FAST");
        assert!(c.active());
        c.directive("else");
        assert!(!c.active());
        c.directive("endif");
        c.directive("ifndef NEVER_DEFINED");
        assert!(c.active());
        c.directive("elif 1");
        assert!(!c.active());
        c.directive("endif");
        c.directive("if X > 2");
        assert!(c.active());
        c.directive("else");
        assert!(c.active(), "an undecided condition keeps both branches");
        c.directive("endif");
        c.directive("ifdef __XTENSA__");
        c.directive("else");
        assert!(c.active());
        c.directive("endif");
        c.directive("define T torch::Tensor");
        assert_eq!(c.macros["T"], "torch::Tensor");
    }
}
