//! What compiles: the MSBuild files that decide a C# project's compile items.
//!
//! A glob over `.cs` files is not what the compiler reads. The nearest
//! `.csproj` above a source file compiles every `.cs` file under its folder
//! (the SDK's default items) unless it, or a `Directory.Build.props` /
//! `Directory.Build.targets` in a folder above it, changes the items. So,
//! before any file is parsed, [`load`] lists the release (regular files and
//! links alike) and takes those build files into the closure ([`closure`]),
//! every `.cs` file the project compiles must be selected, and once the
//! closure is read a build file is accepted only when it uses none of the
//! constructs that change compile items, global usings, analyzers or build
//! logic ([`check`]; fcd does not evaluate MSBuild): anything else escalates.

use std::collections::BTreeSet;
use std::path::Path;

use fcd_frontends::ir::Escalation;
use fcd_frontends::ir::SourceFile;
use fcd_frontends::loader::{Listing, Loaded, escalate, read};
use fcd_model::error::InputError;

/// The build files that decide what compiles the `selected` files, and the
/// files the project compiles besides them, from the release at `root`.
pub fn load(root: &Path, selected: &[SourceFile]) -> Result<Result<Loaded, Escalation>, InputError> {
    let listing = Listing::of(root)?;
    let all: Vec<String> = listing.files.iter().cloned().collect();
    let links: Vec<String> = listing.links.iter().cloned().collect();
    let chosen: Vec<String> = selected.iter().map(|f| f.path.clone()).collect();
    let build = match closure(&all, &links, &chosen) {
        Ok(build) => build,
        Err(e) => return Ok(Err(e)),
    };
    let mut sources = Vec::new();
    for relative in build.iter().filter(|b| !chosen.contains(b)) {
        match read(root, relative)? {
            Ok(f) => sources.push(f),
            Err(e) => return Ok(Err(e)),
        }
    }
    Ok(Ok(Loaded { sources, ..Loaded::default() }))
}

/// File names (ASCII case-insensitive) that MSBuild imports from every folder above a project.
const ANCESTOR_FILES: &[&str] = &["directory.build.props", "directory.build.targets", "directory.build.rsp"];

fn lower(path: &str) -> String {
    path.to_ascii_lowercase()
}

/// Whether a path is a build file that can decide what compiles.
pub(crate) fn is_build_file(path: &str) -> bool {
    let name = lower(path.rsplit('/').next().unwrap_or(path));
    name.ends_with(".csproj") || name.ends_with(".props") || name.ends_with(".targets") || ANCESTOR_FILES.contains(&name.as_str())
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// `dir` and every folder above it, up to the release root (`""`).
fn ancestors(dir: &str) -> Vec<&str> {
    let mut out = vec![dir];
    let mut d = dir;
    while !d.is_empty() {
        d = dir_of(d);
        out.push(d);
    }
    out
}

fn under(path: &str, dir: &str) -> bool {
    dir.is_empty() || path.starts_with(&format!("{dir}/"))
}

/// The build files the closure must hold for the selected `.cs` files, given
/// every file path of the release; escalates when a selected file has no
/// project, a folder has two projects, or the project compiles a `.cs` file
/// the profile does not select.
fn closure(all: &[String], links: &[String], selected: &[String]) -> Result<Vec<String>, Escalation> {
    let chosen: BTreeSet<&str> = selected.iter().map(String::as_str).collect();
    let mut add = BTreeSet::new();
    for file in selected.iter().filter(|p| p.ends_with(".cs")) {
        let project_dir = ancestors(dir_of(file)).into_iter().find(|d| all.iter().any(|p| dir_of(p) == *d && lower(p).ends_with(".csproj")));
        let Some(project_dir) = project_dir else {
            return Err(escalate(file, 1, format!("no `.csproj` above `{file}` in the release: fcd cannot tell what compiles it")));
        };
        let projects: Vec<&String> = all.iter().filter(|p| dir_of(p) == project_dir && lower(p).ends_with(".csproj")).collect();
        if projects.len() > 1 {
            return Err(escalate(projects[1], 1, format!("{} projects in `{project_dir}`: fcd cannot tell which compiles `{file}`", projects.len())));
        }
        add.extend(projects.iter().map(|p| p.as_str()));
        for d in ancestors(project_dir) {
            add.extend(
                all.iter().filter(|p| dir_of(p) == d && ANCESTOR_FILES.contains(&lower(p.rsplit('/').next().unwrap_or(p)).as_str())).map(String::as_str),
            );
        }
        if let Some(link) = links.iter().find(|l| under(l, project_dir)) {
            return Err(escalate(
                link,
                1,
                format!("`{link}` is a symbolic link inside the project folder `{project_dir}`: the compiler follows it, fcd does not"),
            ));
        }
        let compiled = all.iter().filter(|p| under(p, project_dir) && p.ends_with(".cs") && !in_output(p, project_dir));
        if let Some(missed) = compiled.into_iter().find(|p| !chosen.contains(p.as_str())) {
            return Err(escalate(
                missed,
                1,
                format!("`{missed}` is compiled by `{}` (default compile items) but is not in the profile's source files", projects[0]),
            ));
        }
    }
    Ok(add.into_iter().filter(|p| !chosen.contains(p)).map(str::to_owned).collect())
}

/// `bin/` and `obj/` right under the project folder are excluded by the SDK.
fn in_output(path: &str, project_dir: &str) -> bool {
    let rest = if project_dir.is_empty() { path } else { &path[project_dir.len() + 1..] };
    rest.starts_with("bin/") || rest.starts_with("obj/")
}

/// Elements fcd accepts in a build file; any other escalates.
const ELEMENTS: &[&str] = &[
    "project",
    "propertygroup",
    "itemgroup",
    "packagereference",
    "projectreference",
    "embeddedresource",
    "none",
    "content",
    "internalsvisibleto",
    "folder",
    "packageversion",
];

/// Property names (lower case) that change compile items or the build: they escalate.
fn changes_build(name: &str) -> bool {
    name.contains("compile")
        || name.contains("defaultitem")
        || name.starts_with("enabledefault")
        || name.contains("dependson")
        || name.contains("generator")
        || name == "usings"
        || name.contains("analyzer")
}

/// Checks one build file: a restricted MSBuild whose meaning for compilation
/// is nothing but the SDK's defaults.
pub(crate) fn check(file: &SourceFile) -> Result<(), Escalation> {
    let Ok(text) = std::str::from_utf8(&file.bytes) else {
        return Err(escalate(&file.path, 1, "the build file is not UTF-8".into()));
    };
    if lower(&file.path).ends_with(".rsp") {
        return Err(escalate(&file.path, 1, "a response file passes options to every build: fcd does not interpret it".into()));
    }
    let line_of = |at: usize| text[..at].bytes().filter(|&b| b == b'\n').count() as u32 + 1;
    let mut depth_in_properties = false;
    let mut rest = 0;
    while let Some(i) = text[rest..].find('<') {
        let at = rest + i;
        let tail = &text[at..];
        if let Some(body) = tail.strip_prefix("<!--") {
            rest = at + 4 + body.find("-->").map(|e| e + 3).ok_or_else(|| escalate(&file.path, line_of(at), "an unclosed comment".into()))?;
            continue;
        }
        if tail.starts_with("<?xml") {
            rest = at + 5;
            continue;
        }
        if tail.starts_with("<!") || tail.starts_with("<?") {
            return Err(escalate(&file.path, line_of(at), "a DOCTYPE, entity, CDATA or processing instruction: fcd does not interpret it".into()));
        }
        let closing = tail.starts_with("</");
        let name: String = tail[if closing { 2 } else { 1 }..].chars().take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')).collect();
        let end = tail.find('>').ok_or_else(|| escalate(&file.path, line_of(at), "an unclosed tag".into()))?;
        let tag = &tail[..end];
        rest = at + end + 1;
        let lname = lower(&name);
        if lname == "propertygroup" {
            depth_in_properties = !closing && !tag.ends_with('/');
            continue;
        }
        if closing {
            continue;
        }
        if depth_in_properties {
            if changes_build(&lname) {
                return Err(escalate(&file.path, line_of(at), format!("property `{name}` can change what compiles; fcd does not evaluate it")));
            }
            continue;
        }
        if !ELEMENTS.contains(&lname.as_str()) {
            return Err(escalate(
                &file.path,
                line_of(at),
                format!("`<{name}>` can change what compiles (compile items, usings, imports, targets); fcd does not evaluate it"),
            ));
        }
        if lname == "projectreference" && lower(tag).contains("outputitemtype") {
            return Err(escalate(&file.path, line_of(at), "a project reference used as an analyzer or generator".into()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> SourceFile {
        SourceFile { path: path.into(), bytes: text.as_bytes().to_vec() }
    }

    #[test]
    fn closure_takes_project_and_ancestor_props() {
        let all: Vec<String> =
            ["Directory.Build.props", "t/src/P.csproj", "t/src/A.cs", "t/src/B/C.cs", "t/tests/T.cs", "t/src/obj/G.cs"].map(String::from).to_vec();
        let selected = vec!["t/src/A.cs".to_string(), "t/src/B/C.cs".to_string()];
        assert_eq!(closure(&all, &[], &selected).unwrap(), vec!["Directory.Build.props", "t/src/P.csproj"]);
        let partial = vec!["t/src/A.cs".to_string()];
        assert!(closure(&all, &[], &partial).unwrap_err().detail.contains("t/src/B/C.cs"));
        assert!(closure(&all[2..3], &[], &partial).is_err(), "no project");
        assert!(closure(&all, &["t/src/L.cs".to_string()], &selected).is_err(), "a link in the project");
    }

    #[test]
    fn build_files_that_change_compilation_escalate() {
        let ok = "<Project Sdk=\"Microsoft.NET.Sdk\">\n<!-- <Compile Remove=\"x\"/> -->\n<PropertyGroup><Nullable>enable</Nullable><DefineConstants>A</DefineConstants></PropertyGroup>\n<ItemGroup><PackageReference Include=\"X\" /></ItemGroup></Project>";
        assert!(check(&file("P.csproj", ok)).is_ok());
        for bad in [
            "<Project><ItemGroup><Compile Remove=\"A.cs\" /></ItemGroup></Project>",
            "<Project><PropertyGroup><EnableDefaultCompileItems>false</EnableDefaultCompileItems></PropertyGroup></Project>",
            "<Project><Import Project=\"x.props\" /></Project>",
            "<Project><ItemGroup><Using Include=\"X\" Alias=\"Y\" /></ItemGroup></Project>",
            "<Project><Target Name=\"T\" /></Project>",
        ] {
            let e = check(&file("P.csproj", bad)).unwrap_err();
            assert_eq!(e.anchor.as_ref().map(|a| a.line), Some(1), "{bad}");
        }
    }
}
