//! Reading a library's schema from its sources, as the vendor's build
//! does: the op list from the shape sources' `NEURON_LIBRARY` blocks, each
//! op's argument kinds from its compute function's definition.

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
    /// Reads `path`.
    pub fn read(path: PathBuf) -> Result<Self> {
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io("read", &path, e))?;
        Ok(Self { path, text })
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
    let list = |s: &[Source]| s.iter().map(Source::name).collect::<Vec<_>>().join(", ");
    let mut libraries: Vec<(String, String)> = Vec::new();
    let mut defs = Vec::new();
    let mut shape_fns: Vec<(FnDef, String)> = Vec::new();
    for s in shapes {
        let toks = lexer::tokenize(&s.text);
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
        compute_fns.extend(functions::definitions(&lexer::tokenize(&s.text)).into_iter().map(|d| (d, s.name())));
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
}
