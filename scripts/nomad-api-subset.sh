#!/usr/bin/env bash
# Runs some of Nomad's API test suite against drover built from this tree,
# named nomad on PATH: scripts/nomad-api-subset.sh '^TestNamespaces'
# (a go test -run pattern). Each caller gets its own copy of the suite and
# its own binary, so that several can run at once. make nomad-api-suite runs
# the whole suite and checks it against compat/testdata/nomadapi/passing.txt.
set -euo pipefail
pattern=${1:?usage: $0 <go test -run pattern> [go test flags...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
module=github.com/hashicorp/nomad/api
version=$(sed -n 's/^\s*nomadAPIVersion\s*=\s*"\(.*\)"/\1/p' "$root/compat/nomadapi_test.go")
work=$(mktemp -d /tmp/nomad-api-subset.XXXXXX)
trap 'rm -rf "$work"' EXIT
dir=$(cd "$root" && go mod download -json "$module@$version" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
cp -r "$dir" "$work/api" && chmod -R u+w "$work/api"
(cd "$root" && go build -o "$work/bin/nomad" ./cmd/drover)
cd "$work/api"
PATH="$work/bin:$PATH" GOWORK=off GOFLAGS=-mod=mod go test -count=1 -run "$pattern" "$@" .
