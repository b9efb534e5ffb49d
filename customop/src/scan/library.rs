//! `NEURON_LIBRARY(lib, m) { m.def("op", &shape_fn, "compute_fn"); ... }`
//! blocks of a shape source. `m.def("op", &shape_fn)` (two arguments)
//! names a compute function of the op's own name.

use super::functions::matching;
use super::lexer::{Tok, Token};

/// One `m.def` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Def {
    /// The op name.
    pub op: String,
    /// The shape function.
    pub shape_fn: String,
    /// The compute function.
    pub compute_fn: String,
    /// Its line.
    pub line: u32,
}

/// One `NEURON_LIBRARY` block.
#[derive(Clone, Debug)]
pub struct Library {
    /// The library name.
    pub name: String,
    /// Its line.
    pub line: u32,
    /// The ops, in order.
    pub defs: Vec<Def>,
}

/// A malformed block: the line and what was expected.
#[derive(Debug)]
pub struct Malformed {
    /// Where.
    pub line: u32,
    /// What is wrong.
    pub what: String,
}

fn bad(line: u32, what: impl Into<String>) -> Malformed {
    Malformed { line, what: what.into() }
}

/// Every top-level `NEURON_LIBRARY` block of `toks`.
pub fn libraries(toks: &[Token]) -> Result<Vec<Library>, Malformed> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if t.is_punct("{") {
            // Nothing inside another block counts (the macro is global).
            i = matching(toks, i) + 1;
            continue;
        }
        if !t.is_ident("NEURON_LIBRARY") {
            i += 1;
            continue;
        }
        let line = t.line;
        let expect = "expected `NEURON_LIBRARY(library_name, m) { m.def(\"op\", &shape_fn, \"compute_fn\"); ... }`";
        let (lib, m) = match toks.get(i + 1..i + 7) {
            Some([o, a, c, b, cl, br])
                if o.is_punct("(") && c.is_punct(",") && cl.is_punct(")") && br.is_punct("{") && a.ident().is_some() && b.ident().is_some() =>
            {
                (a.ident().unwrap_or_default().to_owned(), b.ident().unwrap_or_default().to_owned())
            }
            _ => return Err(bad(line, expect)),
        };
        let open = i + 6;
        let close = matching(toks, open);
        if close >= toks.len() {
            return Err(bad(line, "the NEURON_LIBRARY block has no closing `}`"));
        }
        let defs = body(&toks[open + 1..close], &m, line)?;
        out.push(Library { name: lib, line, defs });
        i = close + 1;
    }
    Ok(out)
}

/// The statements of a block: each `m.def(...);`.
fn body(toks: &[Token], m: &str, line: u32) -> Result<Vec<Def>, Malformed> {
    let mut defs = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let end = (i..toks.len()).find(|&k| toks[k].is_punct(";")).unwrap_or(toks.len());
        let stmt = &toks[i..end];
        let at = stmt.first().map_or(line, |t| t.line);
        if end == toks.len() {
            return Err(bad(at, "a statement in NEURON_LIBRARY does not end with `;`"));
        }
        defs.push(def(stmt, m, at)?);
        i = end + 1;
    }
    Ok(defs)
}

/// `m . def ( "op" , [&] name , "compute" )`.
fn def(s: &[Token], m: &str, line: u32) -> Result<Def, Malformed> {
    let expected = || bad(line, format!("expected `{m}.def(\"op_name\", &shape_fn, \"compute_fn\");` in NEURON_LIBRARY"));
    if s.len() < 6 || !s[0].is_ident(m) || !s[1].is_punct(".") || !s[2].is_ident("def") || !s[3].is_punct("(") || !s.last().is_some_and(|t| t.is_punct(")")) {
        return Err(expected());
    }
    let args = &s[4..s.len() - 1];
    let Some(Tok::Str(op)) = args.first().map(|t| &t.tok) else { return Err(expected()) };
    if !args.get(1).is_some_and(|t| t.is_punct(",")) {
        return Err(expected());
    }
    let mut k = 2;
    if args.get(k).is_some_and(|t| t.is_punct("&")) {
        k += 1;
    }
    // The shape function: a (possibly qualified) name; its last part.
    let mut shape_fn = None;
    while let Some(t) = args.get(k) {
        match &t.tok {
            Tok::Ident(w) => shape_fn = Some(w.clone()),
            Tok::Punct("::") => {}
            _ => break,
        }
        k += 1;
    }
    let Some(shape_fn) = shape_fn else { return Err(expected()) };
    let compute_fn = match &args[k..] {
        [] => op.clone(),
        [c, t] if c.is_punct(",") => match &t.tok {
            Tok::Str(f) => f.clone(),
            _ => return Err(expected()),
        },
        _ => return Err(expected()),
    };
    let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !s.starts_with(|c: char| c.is_ascii_digit());
    if !ident(op) {
        return Err(bad(line, format!("op name \"{op}\" is not a C identifier")));
    }
    if !ident(&compute_fn) {
        return Err(bad(line, format!("compute function name \"{compute_fn}\" of op `{op}` is not a C identifier")));
    }
    Ok(Def { op: op.clone(), shape_fn, compute_fn, line })
}

#[cfg(test)]
mod tests {
    use super::super::lexer::tokenize;
    use super::*;

    #[test]
    fn reads_the_defs_in_order() {
        let src = "#include \"torchneuron/register.h\"\ntorch::Tensor s(const torch::Tensor& t) { return t; }\n\
                   NEURON_LIBRARY(my_ops, m) {\n  m.def(\"relu_forward\", &s, \"relu_fwd\");\n  m.def(\"b\", s);\n}\n";
        let libs = libraries(&tokenize(src)).unwrap();
        assert_eq!(libs.len(), 1);
        assert_eq!(libs[0].name, "my_ops");
        assert_eq!(
            libs[0].defs,
            [
                Def { op: "relu_forward".into(), shape_fn: "s".into(), compute_fn: "relu_fwd".into(), line: 4 },
                Def { op: "b".into(), shape_fn: "s".into(), compute_fn: "b".into(), line: 5 }
            ]
        );
    }

    #[test]
    fn malformed_blocks_name_the_line() {
        let e = libraries(&tokenize("\nNEURON_LIBRARY(my_ops) { }")).unwrap_err();
        assert_eq!(e.line, 2);
        let e = libraries(&tokenize("NEURON_LIBRARY(l, m) {\n m.def(\"x\", &s, 3);\n}")).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.what.contains("m.def(\"op_name\", &shape_fn, \"compute_fn\")"), "{}", e.what);
        let e = libraries(&tokenize("NEURON_LIBRARY(l, m) {\n m.def(\"x\", &s, \"y\")\n}")).unwrap_err();
        assert!(e.what.contains("`;`"), "{}", e.what);
    }
}
