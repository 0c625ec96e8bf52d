"""Runs a materialized git_add fixture's dispatcher for real, to observe effects.

Usage: run_git_add.py RELEASE_ROOT SCRATCH < calls.json
The MCP SDK is replaced by tests/support/mcp_stub.py; GitPython and git are
the real ones (whichever GitPython PYTHONPATH finds). Every call runs on a
fresh copy SCRATCH/N/work/repo of one repository, whose path replaces /srv/repo,
laid out so that each way out of the contract leaves a trace in the index:

  work/repo/README.md, notes/todo.txt   plain files
  work/repo/.env                        ignored by work/repo/.gitignore
  work/repo/linked -> ../../outside     a symbolic link to a directory outside
  work/repo/vendor/lib/.git             a nested repository
  outside/secret.txt, etc/passwd        content outside the working tree

(`../../etc/passwd` from work/repo is SCRATCH/N/etc/passwd.) For every call
it prints what the index holds afterwards that the contract does not cover:
`outside` (an entry climbing out, behind the link, or with the content of a
file outside), `metadata` (an entry in a .git directory), `ignored` (.env),
and the error the handler raised, if any.
"""
import asyncio
import json
import os
import shutil
import subprocess
import sys

root, scratch = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcp_stub  # noqa: E402

sys.path.pop(0)

OUTSIDE = "secret outside the working tree\n"
PASSWD = "root:x:0:0:fixture:/root:/bin/sh\n"


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def blob(text):
    return subprocess.run(["git", "hash-object", "--stdin"], input=text, check=True, capture_output=True, text=True).stdout.strip()


def layout(base):
    repo = os.path.join(base, "work", "repo")
    for d in ("outside", "etc", os.path.join(repo, "notes"), os.path.join(repo, "vendor", "lib")):
        os.makedirs(os.path.join(base, d), exist_ok=True)
    with open(os.path.join(base, "outside", "secret.txt"), "w") as f:
        f.write(OUTSIDE)
    with open(os.path.join(base, "etc", "passwd"), "w") as f:
        f.write(PASSWD)
    git(base, "init", "-q", repo)
    git(repo, "config", "user.email", "fcd@example.invalid")
    git(repo, "config", "user.name", "fcd")
    for name, text in (("README.md", "read me\n"), ("notes/todo.txt", "todo\n"), (".gitignore", ".env\n"), (".env", "TOKEN=1\n")):
        with open(os.path.join(repo, name), "w") as f:
            f.write(text)
    os.symlink(os.path.join("..", "..", "outside"), os.path.join(repo, "linked"))
    git(repo, "init", "-q", "vendor/lib")
    with open(os.path.join(repo, "vendor", "lib", "lib.txt"), "w") as f:
        f.write("lib\n")
    return repo


dispatch, report = mcp_stub.dispatcher(root)

foreign = {blob(OUTSIDE), blob(PASSWD)}
# One layout, copied (links kept as links) for every call.
template = os.path.join(scratch, "template")
layout(template)
results = {}
for n, (name, arguments) in enumerate(json.loads(sys.stdin.read()).items()):
    shutil.copytree(template, os.path.join(scratch, str(n)), symlinks=True)
    repo = os.path.join(scratch, str(n), "work", "repo")
    arguments = dict(arguments, repo_path=arguments["repo_path"].replace("/srv/repo", repo))
    try:
        asyncio.run(dispatch("git_add", arguments))
        error = None
    except BaseException as e:
        error = repr(e)
    entries = []
    for line in git(repo, "ls-files", "-s", "-z").split("\0"):
        if line:
            meta, path = line.split("\t", 1)
            entries.append((path, meta.split()[1]))
    parts = [(path.split("/"), sha) for path, sha in entries]
    results[name] = {
        "outside": any(".." in p or p[0] == "linked" and len(p) > 1 or sha in foreign for p, sha in parts),
        "metadata": any(".git" in p for p, _ in parts),
        "ignored": any(p[-1] == ".env" for p, _ in parts),
        "staged": [path for path, _ in entries],
        "error": error,
    }
print(json.dumps({"calls": results}), file=report)
