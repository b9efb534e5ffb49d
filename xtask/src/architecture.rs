//! docs/architecture.md's table of arrows between the repository's crates
//! is `cargo metadata`'s graph: a test keeps the two the same.

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    /// The table between the `<!-- arrows -->` markers: crate -> its dependencies.
    fn documented(doc: &str) -> BTreeMap<String, BTreeSet<String>> {
        let start = doc.find("<!-- arrows -->").expect("docs/architecture.md: no <!-- arrows --> table");
        let end = doc.find("<!-- /arrows -->").expect("docs/architecture.md: no <!-- /arrows --> marker");
        let names = |cell: &str| cell.split(',').map(|n| n.trim().trim_matches('`').to_owned()).filter(|n| !n.is_empty()).collect::<BTreeSet<_>>();
        doc[start..end]
            .lines()
            .filter(|l| l.starts_with("| `"))
            .map(|l| {
                let cells: Vec<&str> = l.split('|').collect();
                // "`name` (where)": the name alone.
                let name = cells[1].split_whitespace().next().unwrap_or("").trim_matches('`').to_owned();
                (name, names(cells[2]))
            })
            .collect()
    }

    /// The workspace's crates and each one's normal dependencies among them.
    fn metadata() -> BTreeMap<String, BTreeSet<String>> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let out = std::process::Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
            .current_dir(root)
            .output()
            .expect("run cargo metadata");
        assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
        let m: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let packages = m["packages"].as_array().unwrap();
        let names: BTreeSet<String> = packages.iter().map(|p| p["name"].as_str().unwrap().to_owned()).collect();
        packages
            .iter()
            .map(|p| {
                let deps = p["dependencies"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|d| d["kind"].is_null())
                    .map(|d| d["name"].as_str().unwrap().to_owned())
                    .filter(|n| names.contains(n))
                    .collect();
                (p["name"].as_str().unwrap().to_owned(), deps)
            })
            .collect()
    }

    #[test]
    fn the_arrows_match_cargo_metadata() {
        let doc = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/architecture.md")).unwrap();
        let (doc, meta) = (documented(&doc), metadata());
        for (k, v) in &meta {
            assert_eq!(doc.get(k), Some(v), "docs/architecture.md's arrows for `{k}` differ from cargo metadata's");
        }
        let extra: Vec<&String> = doc.keys().filter(|k| !meta.contains_key(*k)).collect();
        assert!(extra.is_empty(), "docs/architecture.md names crates the workspace does not have: {extra:?}");
    }
}
