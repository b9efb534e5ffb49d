//! Reading a library's schema from its sources, as the vendor's build
//! does: the op list from the shape sources' `NEURON_LIBRARY` blocks, each
//! op's argument kinds from its compute function's definition.

pub mod cond;
pub mod functions;
pub mod lexer;
pub mod library;
pub mod types;

use crate::error::{Error, ErrorKind, Result};
use crate::schema::{Op, MAX_ARGS, MAX_OPS};
use functions::FnDef;
use std::path::PathBuf;

/// A source file and its text.
#[derive(Clone, Debug)]
pub struct Source {
    /// Its path (as given).
    pub path: PathBuf,
    /// Its contents.
    pub text: String,
}

impl Source {
    /// Reads `path` as g++ does: a UTF-8 byte-order mark is skipped, and
    /// bytes that are not UTF-8 (Latin-1 in a comment or string) are read
    /// as U+FFFD (the scanner never needs their text).
    pub fn read(path: PathBuf) -> Result<Self> {
        let bytes = std::fs::read(&path).map_err(|e| Error::io("read", &path, e))?;
        Ok(Self { path, text: Self::decode(&bytes) })
    }

    /// The text of a source's bytes (see [`Source::read`]).
    pub fn decode(bytes: &[u8]) -> String {
        let b = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        String::from_utf8_lossy(b).into_owned()
    }

    fn name(&self) -> String {
        self.path.display().to_string()
    }
}

/// What the sources declare: the library names and the ops.
#[derive(Clone, Debug)]
pub struct Scanned {
    /// `NEURON_LIBRARY` names.
    pub libraries: Vec<String>,
    /// The ops in declaration order.
    pub ops: Vec<Op>,
}

fn refused(msg: String) -> Error {
    Error::new(ErrorKind::Refused, msg)
}

const KINDS: &str = "torch::Tensor, torch::Scalar, double, int64_t, int, float, long long";

/// Scans shape and compute sources.
pub fn scan(shapes: &[Source], computes: &[Source]) -> Result<Scanned> {
    scan_with(shapes, computes, &[])
}

/// The `-D` definitions among compiler flags (`-DX`, `-DX=1`, `-D X`).
pub fn defines(flags: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = flags.iter();
    while let Some(f) = it.next() {
        if f == "-D" {
            out.extend(it.next().cloned());
        } else if let Some(d) = f.strip_prefix("-D") {
            out.push(d.to_owned());
        }
    }
    out
}

/// A parameter's tokens with type aliases (`typedef`, `using X = ...`,
/// object-like macros) replaced by what they name.
fn resolve_aliases(p: &[lexer::Token], aliases: &[(String, Vec<lexer::Token>)]) -> Vec<lexer::Token> {
    let mut cur = p.to_vec();
    // A few rounds: aliases of aliases.
    for _ in 0..4 {
        let mut changed = false;
        let mut next = Vec::new();
        for t in cur {
            match t.ident().and_then(|w| aliases.iter().find(|(n, _)| n == w)) {
                Some((_, with)) => {
                    next.extend(with.iter().cloned());
                    changed = true;
                }
                None => next.push(t),
            }
        }
        cur = next;
        if !changed {
            break;
        }
    }
    cur
}

/// The type aliases a source declares: `typedef T NAME;`, `using NAME = T;`
/// (simple types only: no function types) and object-like macros.
fn aliases(toks: &[lexer::Token], macros: &[(String, String)]) -> Vec<(String, Vec<lexer::Token>)> {
    let mut out: Vec<(String, Vec<lexer::Token>)> = macros.iter().filter(|(_, v)| !v.is_empty()).map(|(n, v)| (n.clone(), lexer::tokenize(v))).collect();
    let mut i = 0;
    while i < toks.len() {
        let end = || toks[i..].iter().position(|t| t.is_punct(";")).map(|k| i + k);
        if toks[i].is_ident("typedef") {
            if let Some(e) = end() {
                let body = &toks[i + 1..e];
                if let Some((name, ty)) = body.split_last() {
                    if let (Some(n), false) = (name.ident(), ty.iter().any(|t| t.is_punct("(")) || ty.is_empty()) {
                        out.push((n.to_owned(), ty.to_vec()));
                    }
                }
                i = e;
            }
        } else if toks[i].is_ident("using") && toks.get(i + 2).is_some_and(|t| t.is_punct("=")) {
            if let (Some(n), Some(e)) = (toks[i + 1].ident(), end()) {
                let ty = &toks[i + 3..e];
                if !ty.is_empty() && !ty.iter().any(|t| t.is_punct("(")) {
                    out.push((n.to_owned(), ty.to_vec()));
                }
                i = e;
            }
        }
        i += 1;
    }
    out
}

/// Scans shape and compute sources as compiled with `-D` definitions
/// `defines` (the conditionals the scanner can decide, see [`cond`]).
pub fn scan_with(shapes: &[Source], computes: &[Source], defines: &[String]) -> Result<Scanned> {
    let list = |s: &[Source]| s.iter().map(Source::name).collect::<Vec<_>>().join(", ");
    let mut libraries: Vec<(String, String)> = Vec::new();
    let mut defs = Vec::new();
    let mut shape_fns: Vec<(FnDef, String)> = Vec::new();
    for s in shapes {
        let toks = lexer::lex(&s.text, defines).0;
        let libs = library::libraries(&toks).map_err(|m| refused(format!("{}:{}: malformed NEURON_LIBRARY: {}", s.name(), m.line, m.what)))?;
        for l in libs {
            if let Some((_, first)) = libraries.iter().find(|(n, _)| *n == l.name) {
                return Err(refused(format!(
                    "{}:{}: NEURON_LIBRARY({}, ...) is declared twice (first at {first}): one block per library",
                    s.name(),
                    l.line,
                    l.name
                )));
            }
            libraries.push((l.name.clone(), format!("{}:{}", s.name(), l.line)));
            defs.extend(l.defs.into_iter().map(|d| (d, s.name(), l.name.clone())));
        }
        shape_fns.extend(functions::definitions(&toks).into_iter().map(|d| (d, s.name())));
    }
    if libraries.is_empty() {
        return Err(refused(format!(
            "no NEURON_LIBRARY block in the shape sources ({}): a shape source declares its ops with \
             `NEURON_LIBRARY(library_name, m) {{ m.def(\"op\", &shape_fn, \"compute_fn\"); }}`",
            list(shapes)
        )));
    }
    let mut compute_fns: Vec<(FnDef, String)> = Vec::new();
    for s in computes {
        let (toks, macros) = lexer::lex(&s.text, defines);
        let al = aliases(&toks, &macros);
        compute_fns.extend(functions::definitions(&toks).into_iter().map(|mut d| {
            d.params = d.params.iter().map(|p| resolve_aliases(p, &al)).collect();
            (d, s.name())
        }));
    }
    let mut ops: Vec<Op> = Vec::new();
    for (i, (d, file, lib)) in defs.iter().enumerate() {
        let at = format!("{file}:{}", d.line);
        if i >= MAX_OPS {
            return Err(refused(format!("{at}: op `{}` is op number {} of library `{lib}`: a custom-op library has at most {MAX_OPS} ops", d.op, i + 1)));
        }
        if let Some(prev) = ops.iter().find(|o| o.name == d.op) {
            return Err(refused(format!("{at}: op `{}` is declared twice (first at {})", d.op, prev.declared_at)));
        }
        let shape = shape_fns.iter().find(|(f, _)| f.name == d.shape_fn);
        let Some((shape, shape_file)) = shape else {
            return Err(refused(format!(
                "{at}: op `{}`: shape function `{}` is not defined at global scope in the shape sources ({})",
                d.op,
                d.shape_fn,
                list(shapes)
            )));
        };
        if !types::returns_tensor(&shape.ret) {
            return Err(refused(format!(
                "{shape_file}:{}: shape function `{}` of op `{}` returns `{}`: a shape function returns one tensor (torch::Tensor) of the output's shape and dtype",
                shape.line,
                shape.name,
                d.op,
                types::spell(&shape.ret)
            )));
        }
        let found: Vec<&(FnDef, String)> = compute_fns.iter().filter(|(f, _)| f.name == d.compute_fn).collect();
        let (f, cfile) = match found.as_slice() {
            [] => {
                return Err(refused(format!(
                    "{at}: op `{}`: compute function `{}` is not defined at global scope in the compute sources ({})",
                    d.op,
                    d.compute_fn,
                    list(computes)
                )))
            }
            [one] => (&one.0, &one.1),
            [a, b, ..] => {
                return Err(refused(format!(
                    "{}:{}: op `{}`: compute function `{}` is defined more than once (also {}:{}): the wrapper calls it by name",
                    b.1, b.0.line, d.op, d.compute_fn, a.1, a.0.line
                )))
            }
        };
        let fat = format!("{cfile}:{}", f.line);
        if !types::returns_tensor(&f.ret) {
            return Err(refused(format!(
                "{fat}: compute function `{}` of op `{}` returns `{}`: a compute function returns exactly one tensor (torch::Tensor)",
                f.name,
                d.op,
                types::spell(&f.ret)
            )));
        }
        if f.params.len() > MAX_ARGS {
            return Err(refused(format!("{fat}: compute function `{}` of op `{}` takes {} arguments: at most {MAX_ARGS}", f.name, d.op, f.params.len())));
        }
        let mut params = Vec::new();
        for (k, p) in f.params.iter().enumerate() {
            params.push(types::param(p).map_err(|u| {
                refused(format!("{fat}: compute function `{}` of op `{}`: argument {} `{}` is not a supported kind ({KINDS})", f.name, d.op, k + 1, u.0))
            })?);
        }
        // The shape function is called with the same arguments.
        let sat = format!("{shape_file}:{}", shape.line);
        if shape.params.len() != params.len() {
            return Err(refused(format!(
                "op `{}`: shape function `{}` ({sat}) takes {} argument(s), compute function `{}` ({fat}) takes {}: both are called with the op's arguments",
                d.op,
                shape.name,
                shape.params.len(),
                f.name,
                params.len()
            )));
        }
        for (k, (sp, cp)) in shape.params.iter().zip(&params).enumerate() {
            if let Ok(sp) = types::param(sp) {
                if (sp.kind == crate::schema::ArgKind::Tensor) != (cp.kind == crate::schema::ArgKind::Tensor) {
                    return Err(refused(format!(
                        "op `{}`: argument {} is `{}` in shape function `{}` ({sat}) but `{}` in compute function `{}` ({fat}): a tensor in one must be a tensor in the other",
                        d.op,
                        k + 1,
                        sp.cpp_type,
                        shape.name,
                        cp.cpp_type,
                        f.name
                    )));
                }
            }
        }
        ops.push(Op { name: d.op.clone(), compute_fn: d.compute_fn.clone(), shape_fn: d.shape_fn.clone(), params, declared_at: at });
    }
    if ops.is_empty() {
        return Err(refused(format!("NEURON_LIBRARY at {} declares no op (add `m.def(\"op\", &shape_fn, \"compute_fn\");`)", libraries[0].1)));
    }
    Ok(Scanned { libraries: libraries.into_iter().map(|(n, _)| n).collect(), ops })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::ArgKind;

    fn src(name: &str, text: &str) -> Source {
        Source { path: name.into(), text: text.into() }
    }

    const SHAPE: &str = "torch::Tensor sh(const torch::Tensor& a, const torch::Tensor& b) { return a; }\n\
                         NEURON_LIBRARY(ops, m) { m.def(\"bwd\", &sh, \"relu_bwd\"); }\n";

    #[test]
    fn ops_take_their_kinds_from_the_compute_definition() {
        let c = src("relu.cpp", "torch::Tensor relu_bwd(const torch::Tensor& g, torch::Tensor x) { return g; }");
        let s = scan(&[src("shape.cpp", SHAPE)], &[c]).unwrap();
        assert_eq!(s.libraries, ["ops"]);
        assert_eq!(s.ops[0].params.iter().map(|p| p.kind).collect::<Vec<_>>(), [ArgKind::Tensor, ArgKind::Tensor]);
        assert_eq!(s.ops[0].params[1].cpp_type, "torch::Tensor");
        assert_eq!(s.ops[0].declared_at, "shape.cpp:2");
    }

    #[test]
    fn an_overloaded_compute_function_is_refused() {
        let c = src("relu.cpp", "torch::Tensor relu_bwd(torch::Tensor g) { return g; }\ntorch::Tensor relu_bwd(torch::Tensor g, int k) { return g; }");
        let e = scan(&[src("shape.cpp", SHAPE)], &[c]).unwrap_err();
        assert!(e.message.contains("defined more than once"), "{e}");
    }

    #[test]
    fn what_gxx_accepts_is_accepted() {
        // A BOM, Latin-1 in a comment and a string, a second definition in
        // `#if 0` / `#else` / `#ifdef`, typedef'd, `using` and macro types.
        let mut bytes = b"\xEF\xBB\xBF// caf\xE9\n#define GRAD_T const torch::Tensor&\ntypedef torch::Tensor T;\nusing I = int64_t;\n".to_vec();
        bytes.extend_from_slice(b"#if 0\ntorch::Tensor relu_bwd(int a) { return {}; }\n#else\n");
        bytes.extend_from_slice(b"const char* s = \"\xE9\";\ntorch::Tensor relu_bwd(GRAD_T g, T x) { return g; }\n#endif\n");
        bytes.extend_from_slice(b"#ifdef FAST\ntorch::Tensor other(I n) { return {}; }\n#else\ntorch::Tensor other(T t, I n) { return t; }\n#endif\n");
        let c = Source { path: "relu.cpp".into(), text: Source::decode(&bytes) };
        let shape = "torch::Tensor sh(const torch::Tensor& a, const torch::Tensor& b) { return a; }\n\
                     torch::Tensor sh2(torch::Tensor a, int64_t n) { return a; }\n\
                     NEURON_LIBRARY(ops, m) { m.def(\"bwd\", &sh, \"relu_bwd\"); m.def(\"o\", &sh2, \"other\"); }\n";
        let s = scan(&[src("shape.cpp", shape)], std::slice::from_ref(&c)).unwrap();
        assert_eq!(s.ops[0].params.iter().map(|p| p.cpp_type.as_str()).collect::<Vec<_>>(), ["const torch::Tensor&", "torch::Tensor"]);
        assert_eq!(s.ops[1].params.iter().map(|p| p.kind).collect::<Vec<_>>(), [ArgKind::Tensor, ArgKind::LongLong]);
        // With -DFAST the other definition is compiled: its one argument
        // no longer matches the shape function's two.
        let e = scan_with(&[src("shape.cpp", shape)], &[c], &defines(&["-DFAST".into()])).unwrap_err();
        assert!(e.message.contains("shape function `sh2` (shape.cpp:2) takes 2 argument(s), compute function `other` (relu.cpp:"), "{e}");
    }

    #[test]
    fn a_tensor_in_the_shape_function_is_a_tensor_in_the_compute_function() {
        let c = src("relu.cpp", "torch::Tensor relu_bwd(const torch::Tensor& g, double x) { return g; }");
        let e = scan(&[src("shape.cpp", SHAPE)], &[c]).unwrap_err();
        assert!(
            e.message
                .contains("argument 2 is `const torch::Tensor&` in shape function `sh` (shape.cpp:1) but `double` in compute function `relu_bwd` (relu.cpp:1)"),
            "{e}"
        );
    }
}
