//! Function definitions at global scope: `<ret> name(<params>) {`.
//!
//! Only the outermost scope counts (plus the inside of `extern "C" { }`):
//! a compute function is a free function the generated wrapper can
//! declare and call by its plain name. Bodies, classes, namespaces and
//! initialisers are skipped by brace matching, so a call or a local
//! declaration is never mistaken for a definition.

use super::lexer::{Tok, Token};

/// One function definition.
#[derive(Clone, Debug)]
pub struct FnDef {
    /// Its name.
    pub name: String,
    /// The tokens of its return type (specifiers and attributes removed).
    pub ret: Vec<Token>,
    /// Each parameter's tokens (default values removed).
    pub params: Vec<Vec<Token>>,
    /// The line of its name.
    pub line: u32,
}

/// Index of the token closing the bracket opened at `open`
/// (`(`/`)`, `{`/`}`, `[`/`]`); `toks.len()` when unbalanced.
pub fn matching(toks: &[Token], open: usize) -> usize {
    let (o, c) = match &toks[open].tok {
        Tok::Punct("(") => ("(", ")"),
        Tok::Punct("[") => ("[", "]"),
        _ => ("{", "}"),
    };
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate().skip(open) {
        if t.is_punct(o) {
            depth += 1;
        } else if t.is_punct(c) {
            depth -= 1;
            if depth == 0 {
                return i;
            }
        }
    }
    toks.len()
}

const SPECIFIERS: &[&str] = &["static", "inline", "extern", "constexpr", "virtual", "explicit", "friend"];
const TRAILING: &[&str] = &["const", "noexcept", "override", "final"];

/// Every function defined at global scope in `toks`, in source order.
pub fn definitions(toks: &[Token]) -> Vec<FnDef> {
    let mut out = Vec::new();
    let mut stmt = 0usize;
    let mut i = 0usize;
    while i < toks.len() {
        let t = &toks[i];
        if t.is_punct(";") {
            stmt = i + 1;
        } else if t.is_punct("}") {
            // Closes an `extern "C" {` block: every other block is skipped
            // whole below.
            stmt = i + 1;
        } else if t.is_punct("{") {
            if i >= 2 && toks[i - 2].is_ident("extern") && matches!(&toks[i - 1].tok, Tok::Str(s) if s == "C") {
                stmt = i + 1;
                i += 1;
                continue;
            }
            let end = matching(toks, i);
            if let Some(def) = definition_before(toks, stmt, i) {
                out.push(def);
                stmt = end + 1;
            }
            i = end + 1;
            continue;
        }
        i += 1;
    }
    out
}

/// The definition whose body opens at `brace`, if the tokens from `stmt`
/// to it are `<ret> name(<params>) <qualifiers>`.
fn definition_before(toks: &[Token], stmt: usize, brace: usize) -> Option<FnDef> {
    // Back over trailing qualifiers to the parameter list's `)`.
    let mut close = brace.checked_sub(1)?;
    while close > stmt && toks[close].ident().is_some_and(|w| TRAILING.contains(&w)) {
        close -= 1;
    }
    if !toks[close].is_punct(")") {
        return None;
    }
    // Its `(`.
    let mut depth = 0usize;
    let mut open = close;
    loop {
        if toks[open].is_punct(")") {
            depth += 1;
        } else if toks[open].is_punct("(") {
            depth -= 1;
            if depth == 0 {
                break;
            }
        }
        if open == stmt {
            return None;
        }
        open -= 1;
    }
    let name_at = open.checked_sub(1).filter(|&n| n >= stmt)?;
    let name = toks[name_at].ident()?;
    // A qualified name (`S::f`) defines a member, not a free function.
    if name_at > stmt && toks[name_at - 1].is_punct("::") {
        return None;
    }
    let ret = return_type(&toks[stmt..name_at]);
    if ret.is_empty() {
        // A macro invocation with a block (`NEURON_LIBRARY(l, m) {`), or a
        // constructor: not a function with a return type.
        return None;
    }
    Some(FnDef { name: name.to_owned(), ret, params: params(&toks[open + 1..close]), line: toks[name_at].line })
}

/// The return type: the tokens before the name without specifiers,
/// attributes (`[[...]]`, `__attribute__((...))`) and `template <...>` headers.
fn return_type(toks: &[Token]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if t.is_punct("[") && toks.get(i + 1).is_some_and(|n| n.is_punct("[")) {
            i = matching(toks, i) + 1;
            continue;
        }
        if t.is_ident("__attribute__") && toks.get(i + 1).is_some_and(|n| n.is_punct("(")) {
            i = matching(toks, i + 1) + 1;
            continue;
        }
        if t.is_ident("template") && toks.get(i + 1).is_some_and(|n| n.is_punct("<")) {
            // Keep it: a template is refused later as a non-tensor return.
            out.push(t.clone());
            i += 1;
            continue;
        }
        if t.ident().is_some_and(|w| SPECIFIERS.contains(&w)) {
            i += 1;
            continue;
        }
        out.push(t.clone());
        i += 1;
    }
    out
}

/// Splits a parameter list at its top-level commas; `(void)` and `()`
/// are empty; default values are dropped.
pub fn params(toks: &[Token]) -> Vec<Vec<Token>> {
    if toks.is_empty() || (toks.len() == 1 && toks[0].is_ident("void")) {
        return Vec::new();
    }
    let mut out = vec![Vec::new()];
    let mut depth = 0i32;
    let mut defaulted = false;
    for t in toks {
        match &t.tok {
            Tok::Punct("(" | "[" | "{" | "<") => depth += 1,
            Tok::Punct(")" | "]" | "}" | ">") => depth -= 1,
            Tok::Punct(",") if depth == 0 => {
                out.push(Vec::new());
                defaulted = false;
                continue;
            }
            Tok::Punct("=") if depth == 0 => defaulted = true,
            _ => {}
        }
        if !defaulted {
            out.last_mut().expect("one parameter at least").push(t.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::lexer::tokenize;
    use super::*;

    fn names(src: &str) -> Vec<String> {
        definitions(&tokenize(src)).into_iter().map(|d| d.name).collect()
    }

    #[test]
    fn finds_global_definitions_only() {
        let src = r#"
            #include <torch/torch.h>
            static int helper(int x) { return g(x) + h(1); }
            namespace detail { torch::Tensor hidden(torch::Tensor t) { return t; } }
            struct S { torch::Tensor m(torch::Tensor t) { return t; } };
            torch::Tensor S2::m2(torch::Tensor t) { return t; }
            torch::Tensor decl_only(const torch::Tensor& t);
            extern "C" { int c_fn(void) { return 0; } }
            NEURON_LIBRARY(lib, m) { m.def("x", &shape, "x"); }
            int arr[] = {1, 2};
            torch::Tensor __attribute__((noinline)) attr(torch::Tensor t) { return t; }
            [[nodiscard]] inline torch::Tensor relu(const torch::Tensor& t_in, double a = 1.0) noexcept {
                if (a > 0) { return t_in; }
                return t_in;
            }
        "#;
        assert_eq!(names(src), ["helper", "c_fn", "attr", "relu"]);
        let defs = definitions(&tokenize(src));
        assert_eq!(defs[2].ret.len(), 3, "attribute dropped: {:?}", defs[2].ret);
        let relu = &defs[3];
        assert_eq!(relu.params.len(), 2);
        assert_eq!(relu.params[1].len(), 2, "default value dropped: {:?}", relu.params[1]);
        assert_eq!(relu.ret.len(), 3);
    }

    #[test]
    fn void_and_empty_parameter_lists_are_empty() {
        assert!(params(&tokenize("void")).is_empty());
        assert!(params(&[]).is_empty());
        assert_eq!(params(&tokenize("std::map<int, int> m, int b")).len(), 2);
    }
}
