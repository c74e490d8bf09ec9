#!/usr/bin/env bash
# nomad-flags.sh — regenerates internal/nomadcompat/flags_gen.go, the table
# of Nomad's commands and their flags, from hashicorp/nomad's command/
# sources at one commit. Usage, from the repository root:
#
#   scripts/nomad-flags.sh [COMMIT] [NOMAD_GIT_DIR]
#
# NOMAD_GIT_DIR is a clone of hashicorp/nomad (bare or not) holding COMMIT;
# without it the script clones https://github.com/hashicorp/nomad into a
# temporary directory. Then run `go test ./jobspec -update` to regenerate
# website/nomad-compatibility.md, and `go test ./cmd/drover -run Flag` to
# see what drover's commands now miss.
set -euo pipefail

commit=${1:-aa026cc99cfb74a77e519a1c1f0c78ba1b452705}
git_dir=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [[ -z "$git_dir" ]]; then
	git clone --quiet --filter=blob:none --no-checkout https://github.com/hashicorp/nomad "$tmp/nomad.git"
	git_dir="$tmp/nomad.git"
fi
mkdir -p "$tmp/src"
# command/agent's generated UI assets are large and not needed.
git -C "$git_dir" archive "$commit" -- command ':(exclude)command/agent/bindata_assetfs.go' version/version.go |
	tar -x -C "$tmp/src"
version=$(sed -n 's/^[[:space:]]*Version = "\(.*\)"/\1/p' "$tmp/src/version/version.go" | head -1)
go run ./scripts/nomadflags -src "$tmp/src" -commit "$commit" -version "$version" -out internal/nomadcompat/flags_gen.go
gofmt -l internal/nomadcompat/
