//! The oracle shares nothing with the compiler: `cargo tree` proves it depends
//! on neither `fcd`, nor `fcd-frontends`, nor any tree-sitter crate.

#[test]
fn oracle_depends_on_no_compiler_crate() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["tree", "--offline", "-p", "fcd-oracle", "-e", "normal,build", "--prefix", "none"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(tree.lines().any(|l| l.starts_with("fcd-oracle ")), "the check reads the real tree:\n{tree}");
    for line in tree.lines() {
        let name = line.split_whitespace().next().unwrap_or_default();
        assert!(name != "fcd" && name != "fcd-frontends" && !name.starts_with("tree-sitter"), "fcd-oracle depends on `{name}`:\n{tree}");
    }
}
