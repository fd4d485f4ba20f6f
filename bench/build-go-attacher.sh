#!/usr/bin/env bash
# build-go-attacher.sh builds the upstream Go external-attacher
# (github.com/kubernetes-csi/external-attacher/v4, cmd/csi-attacher) from the
# Go module proxy into the same cache as the test ground's components
# (test/ground/build-components.sh), keyed by version, so a warm machine
# never rebuilds. Progress goes to stderr; the binary's absolute path to stdout.
#
# Why a wrapper: the attacher's go.mod pins k8s.io/* with `replace` lines, and
# Go ignores a dependency's replaces. A tiny module that requires the attacher
# and restates those lines (read from its published go.mod) builds the same
# dependency graph upstream ships.
set -euo pipefail

GO_ATTACHER_VERSION="${GO_ATTACHER_VERSION:-v4.13.0}"
module=github.com/kubernetes-csi/external-attacher/v4
package=$module/cmd/csi-attacher

cache_root="${BUN_CSI_ATTACHER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bun-csi-attacher}"
bin_dir="$cache_root/bin"
src_dir="$cache_root/src"
out="$bin_dir/go-csi-attacher-$GO_ATTACHER_VERSION"

log() { printf '[build-go-attacher] %s\n' "$*" >&2; }

if [ -x "$out" ]; then
  log "csi-attacher $GO_ATTACHER_VERSION: cached at $out"
  echo "$out"
  exit 0
fi

mkdir -p "$bin_dir" "$src_dir"
export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:--trimpath}"

work="$src_dir/go-csi-attacher-$GO_ATTACHER_VERSION"
rm -rf "$work"
mkdir -p "$work"

# Restate every replace of the attacher's own go.mod, in either form
# (`replace a => b v` or inside a `replace ( ... )` block).
mod_file=$(cd "$src_dir" && go mod download -json "$module@$GO_ATTACHER_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
replaces=$(awk '
  /^replace \(/ { inblock = 1; next }
  inblock && /^\)/ { inblock = 0; next }
  inblock && NF { print "\t" $0; next }
  /^replace / { sub(/^replace /, ""); print "\t" $0 }
' "$mod_file")
go_minor=$(go env GOVERSION | sed -E 's/^go([0-9]+\.[0-9]+).*/\1/')
{
  printf 'module local.test/go-csi-attacher-wrapper\n\ngo %s\n\nrequire %s %s\n' "$go_minor" "$module" "$GO_ATTACHER_VERSION"
  if [ -n "$replaces" ]; then printf '\nreplace (\n%s\n)\n' "$replaces"; fi
} >"$work/go.mod"

log "csi-attacher $GO_ATTACHER_VERSION: resolving modules"
(cd "$work" && go get "$package@$GO_ATTACHER_VERSION" >&2)
log "csi-attacher $GO_ATTACHER_VERSION: building"
# The -ldflags version string mirrors upstream's Makefile, so `--version` and
# the start-up log name the release rather than "unknown".
# A partial file of this build's own, as test/ground/build-components.sh does: two runs may build it at once.
(cd "$work" && go build -ldflags "-X main.version=$GO_ATTACHER_VERSION" -o "$out.partial.$$" "$package" >&2)
mv "$out.partial.$$" "$out"
log "csi-attacher $GO_ATTACHER_VERSION: built $out"
echo "$out"
