#!/usr/bin/env bash
# buf breaking: proto/ (as it is in the working tree) against proto/ of the
# previous commit of main. The messages in proto/ are durable formats (Redis
# streams, snapshots, the records of finished games), so a change that breaks
# what an older commit wrote or reads fails here.
#
# "The previous commit of main", the base:
#   - BREAKING_AGAINST=<commit-ish> names it outright;
#   - on main itself (CI's clone of the submitted main, or a branch that main
#     already contains): HEAD's first parent, which is main as it was before
#     the last merge, or before the last commit when it was a fast-forward
#     (then only that last commit is checked: run it on the branch before
#     merging to cover them all);
#   - on a branch: its merge-base with main (local main, else origin/main),
#     so every commit of the branch is checked against the main it left.
# The first commit of the history has no base: it passes, saying so. A shallow
# clone is deepened from origin when the base is missing; when that fails the
# check fails: a base exists but cannot be read, and passing would be silent.
#
# The base's proto/ is taken with git archive rather than buf's own git input
# (.git#ref=...): that works in a worktree (whose .git is a file), at any
# history depth, and without buf cloning the repository.
set -euo pipefail
root=$(pwd)
buf="$root/bin/buf"
say() { echo "check-breaking: $*"; }

has() { git cat-file -e "$1^{commit}" 2>/dev/null; }

main_ref=""
for r in refs/heads/main refs/remotes/origin/main; do
  if git show-ref --verify --quiet "$r"; then main_ref=$r; break; fi
done

if [ -n "${BREAKING_AGAINST:-}" ]; then
  base=$(git rev-parse --verify "${BREAKING_AGAINST}^{commit}")
  why="BREAKING_AGAINST=$BREAKING_AGAINST"
else
  mb=""
  if [ -n "$main_ref" ]; then mb=$(git merge-base HEAD "$main_ref" || true); fi
  if [ -n "$mb" ] && [ "$mb" != "$(git rev-parse HEAD)" ]; then
    base=$mb
    why="merge-base of HEAD and ${main_ref#refs/*/}"
  else
    # On main: its first parent, read from HEAD's own object: a shallow clone
    # has the parent's id there even when it lacks the parent (rev-list would
    # stop at the shallow boundary and call HEAD the first commit).
    base=$(git cat-file -p HEAD | awk '/^parent /{print $2; exit} /^$/{exit}')
    if [ -n "$main_ref" ]; then
      why="HEAD's first parent: HEAD is on ${main_ref#refs/*/}"
    else
      why="HEAD's first parent: no main branch here, HEAD taken as main"
    fi
    if [ -z "$base" ]; then
      say "HEAD is the first commit: no earlier contract to break"
      exit 0
    fi
  fi
fi

if ! has "$base"; then
  if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    say "shallow clone lacks $base; deepening from origin"
    git fetch --quiet --unshallow origin 2>/dev/null || git fetch --quiet --deepen=200 origin 2>/dev/null || true
  fi
  if ! has "$base"; then
    say "the base $base ($why) is not in this clone; fetch more history (git fetch --unshallow) or set BREAKING_AGAINST" >&2
    exit 1
  fi
fi

short=$(git rev-parse --short "$base")
if ! git cat-file -e "$base:proto/buf.yaml" 2>/dev/null; then
  say "no proto/buf.yaml at $short ($why): no earlier contract to break"
  exit 0
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git archive "$base" proto | tar -x -C "$scratch"
(cd proto && "$buf" breaking --against "$scratch/proto")
say "proto/ keeps every contract of $short ($why)"
