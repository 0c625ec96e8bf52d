#!/usr/bin/env bash
# Regenerate src/rpc/generated/*.rs from proto/ with the generator upstream's
# build.rs uses (tonic-prost-build). Needs `protoc` (Debian: protobuf-compiler)
# and cargo; run it only when this crate or tonic/prost is bumped (VENDORED.md).
#
#   vendor/etcd-client/regenerate.sh [TONIC_VERSION]
#
# The generator is pinned to the workspace: tonic-build and tonic-prost-build
# to the tonic version in the workspace's Cargo.lock, prost-build and
# prost-types to its prost version, so the generated code matches the
# tonic/prost runtime it is compiled against (pass TONIC_VERSION to override
# tonic's). Everything else the generator uses (prettyplease, syn, ...) is
# locked by regenerate.lock next to this script, which the run updates; the
# scratch crate lives in a temporary directory outside the repository and is
# removed afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lock="$here/../../Cargo.lock"
locked() { awk -v n="$1" '$0 == "name = \"" n "\"" { getline; gsub(/version = |"/, ""); print; exit }' "$lock"; }
tonic=${1:-$(locked tonic)}
prost=$(locked prost)
[ -n "$tonic" ] && [ -n "$prost" ] || { echo "no tonic or prost in $lock" >&2; exit 1; }
command -v protoc >/dev/null || [ -n "${PROTOC:-}" ] || { echo "protoc is needed to regenerate (apt-get install protobuf-compiler)" >&2; exit 1; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/src" "$scratch/out"
cp -r "$here/proto" "$scratch/proto"
[ ! -f "$here/regenerate.lock" ] || cp "$here/regenerate.lock" "$scratch/Cargo.lock"
: >"$scratch/src/lib.rs"
cat >"$scratch/Cargo.toml" <<EOF
[package]
name = "etcdgen"
version = "0.0.0"
edition = "2021"
publish = false
build = "build.rs"

[build-dependencies]
tonic-build = { version = "=$tonic", default-features = false }
tonic-prost-build = "=$tonic"
prost-build = "=$prost"
prost-types = "=$prost"

[workspace]
EOF
# Upstream's build.rs with build_server(false) (the vendored crate has no
# build-server feature) and the output written where we can pick it up.
cat >"$scratch/build.rs" <<'EOF'
fn main() {
    let proto_root = "proto";
    println!("cargo:rerun-if-changed={proto_root}");

    tonic_prost_build::configure()
        .build_server(false)
        .out_dir(std::env::var("ETCDGEN_OUT").unwrap())
        .compile_protos(
            &[
                "proto/etcd/api/authpb/auth.proto",
                "proto/etcd/api/etcdserverpb/rpc.proto",
                "proto/etcd/api/mvccpb/kv.proto",
                "proto/etcd/server/etcdserver/api/v3election/v3electionpb/v3election.proto",
                "proto/etcd/server/etcdserver/api/v3lock/v3lockpb/v3lock.proto",
            ],
            &[proto_root],
        )
        .expect("Failed to compile proto files");
}
EOF
(cd "$scratch" && ETCDGEN_OUT="$scratch/out" CARGO_TARGET_DIR="$scratch/target" cargo build --quiet)
cp "$scratch/Cargo.lock" "$here/regenerate.lock"

rm -rf "$here/src/rpc/generated"
mkdir -p "$here/src/rpc/generated"
cp "$scratch"/out/*.rs "$here/src/rpc/generated/"
echo "regenerated with tonic-prost-build $tonic, prost-build $prost, $("${PROTOC:-protoc}" --version):"
ls "$here/src/rpc/generated"
