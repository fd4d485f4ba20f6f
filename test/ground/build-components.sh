#!/usr/bin/env bash
# build-components.sh builds the real Go components the test ground runs
# (kube-apiserver, kube-controller-manager, etcd, the upstream CSI mock
# driver; kubelet, kube-scheduler and a pause program for the node) and the tools its
# tests check with (Prometheus' promtool and server) from their Go modules,
# pinned, into a cache directory outside the repository keyed by version, so
# a warm machine never rebuilds. Prints nothing but progress on stderr; the
# binary directory on stdout, or with BUILD_COMPONENTS_PRINT=paths one
# `name=absolute path` line per component (what test/ground/components.ts
# reads, so it never has to recompute the mock driver's source hash).
#
# Why wrappers: each of these modules carries `replace` lines in its own
# go.mod (kubernetes points its staging modules at ./staging, etcd at ../api),
# and Go ignores a dependency's replaces. A tiny wrapper module that requires
# the component and restates the replaces as versions is the supported way to
# build them with the module proxy alone.
set -euo pipefail

KUBERNETES_VERSION="${KUBERNETES_VERSION:-v1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
# Prometheus v3.13.5 (its Go module numbers v3.x.y as v0.3xx.y). Newer ones
# need dependency versions the module proxy here does not serve.
PROMETHEUS_VERSION="${PROMETHEUS_VERSION:-v0.313.5}"

cache_root="${BUN_CSI_ATTACHER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bun-csi-attacher}"
bin_dir="$cache_root/bin"
src_dir="$cache_root/src"
mkdir -p "$bin_dir" "$src_dir"
declare -A built_paths=()

export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:--trimpath}"

log() { printf '[build-components] %s\n' "$*" >&2; }

# build_in_wrapper NAME VERSION MODULE PACKAGE [REPLACE_LINES] [MAIN_DIR]
# Builds PACKAGE (from MODULE@VERSION) into $bin_dir/NAME-VERSION unless it
# is already there. With MAIN_DIR, the wrapper's own main package (copied
# from that directory of this repository) is built instead of PACKAGE, and
# the cache key also carries a hash of its source. The binary is written under a temporary name and renamed,
# so an interrupted build never leaves a half-written binary in the cache.
build_in_wrapper() {
  local name=$1 version=$2 module=$3 package=$4 replaces=${5:-} main_dir=${6:-}
  local key=$version
  if [ -n "$main_dir" ]; then
    key="$version-$(cat "$main_dir"/*.go | sha256sum | cut -c1-12)"
  fi
  local out="$bin_dir/$name-$key"
  built_paths[$name]=$out
  if [ -x "$out" ]; then
    log "$name $version: cached at $out"
    return
  fi
  local work="$src_dir/$name-$key"
  rm -rf "$work"
  mkdir -p "$work"
  local go_minor
  go_minor=$(go env GOVERSION | sed -E 's/^go([0-9]+\.[0-9]+).*/\1/')
  {
    printf 'module local.test/%s-wrapper\n\ngo %s\n\nrequire %s %s\n' "$name" "$go_minor" "$module" "$version"
    if [ -n "$replaces" ]; then printf '\nreplace (\n%s\n)\n' "$replaces"; fi
  } >"$work/go.mod"
  log "$name $version: resolving modules"
  (cd "$work" && go get "$package@$version" >&2)
  log "$name $version: building (a first build takes minutes; later runs find it in the cache)"
  local target=$package
  if [ -n "$main_dir" ]; then
    cp "$main_dir"/*.go "$work/"
    target=.
  fi
  # -mod=mod: a wrapper's own main may import packages of the graph that the
  # component's package does not (the mock driver's kubelet registration API).
  # Each build writes a partial file of its own: two runs on one cold cache
  # (a test run and a bench) may build the same component at once, and the
  # second rename then finds its file instead of failing on the first's.
  (cd "$work" && go build ${main_dir:+-mod=mod} -o "$out.partial.$$" "$target" >&2)
  mv "$out.partial.$$" "$out"
  log "$name $version: built $out"
}

# kube-apiserver: every k8s.io staging module that kubernetes' go.mod lists as
# v0.0.0 is published as v0.<minor>.<patch>; restate each as a replace.
kubernetes_replaces() {
  local mod_file staging_version
  mod_file=$(cd "$src_dir" && go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  staging_version="v0.${KUBERNETES_VERSION#v1.}"
  awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" { print $1 }' "$mod_file" | sort -u |
    while read -r staging; do printf '\t%s => %s %s\n' "$staging" "$staging" "$staging_version"; done
}

here=$(cd "$(dirname "$0")" && pwd)
k8s_replaces=$(kubernetes_replaces)
build_in_wrapper kube-apiserver "$KUBERNETES_VERSION" k8s.io/kubernetes k8s.io/kubernetes/cmd/kube-apiserver "$k8s_replaces"
# kube-controller-manager runs the attach/detach controller, the attacher's
# real client, in the controller-driven tests; same module graph, so it
# reuses kube-apiserver's build cache (a minute or two on top of it).
build_in_wrapper kube-controller-manager "$KUBERNETES_VERSION" k8s.io/kubernetes k8s.io/kubernetes/cmd/kube-controller-manager "$k8s_replaces"
# kubelet and kube-scheduler make the ground a node (test/ground/node/):
# same module graph again, so each is about a minute on a warm build cache.
build_in_wrapper kubelet "$KUBERNETES_VERSION" k8s.io/kubernetes k8s.io/kubernetes/cmd/kubelet "$k8s_replaces"
build_in_wrapper kube-scheduler "$KUBERNETES_VERSION" k8s.io/kubernetes k8s.io/kubernetes/cmd/kube-scheduler "$k8s_replaces"
build_in_wrapper etcd "$ETCD_VERSION" go.etcd.io/etcd/server/v3 go.etcd.io/etcd/server/v3
# Kubernetes' mock CSI driver lives in the kubernetes module (test/e2e), so it
# shares kube-apiserver's module graph and most of its build cache.
build_in_wrapper mock-csi-driver "$KUBERNETES_VERSION" k8s.io/kubernetes k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/mock/service "$k8s_replaces" "$here/mock-csi-driver"

# The node's pause image (containerd's sandbox_image): a static program
# that waits for a signal, in this repository, with no dependency at all.
build_local() {
  local name=$1 dir=$2
  local out
  out="$bin_dir/$name-$(cat "$dir"/go.mod "$dir"/*.go | sha256sum | cut -c1-12)"
  built_paths[$name]=$out
  if [ -x "$out" ]; then
    log "$name: cached at $out"
    return
  fi
  (cd "$dir" && go build -ldflags=-s -o "$out.partial.$$" . >&2)
  mv "$out.partial.$$" "$out"
  log "$name: built $out"
}
build_local pause "$here/node/pause"

# promtool lints the attacher's /metrics output (`promtool check metrics`).
# remove_all_sd leaves out Prometheus' service discovery plugins: promtool's
# linter needs none of them, and their SDKs are most of the download.
GOFLAGS="$GOFLAGS -tags=remove_all_sd" build_in_wrapper promtool "$PROMETHEUS_VERSION" github.com/prometheus/prometheus github.com/prometheus/prometheus/cmd/promtool
# The Prometheus server scrapes a real attacher and evaluates the shipped
# alerting rules in test/e2e/monitoring-prometheus. Same module, version and
# tags as promtool: it reuses promtool's module downloads and most of its
# build cache (the server adds the TSDB's head, the web API and the rule
# manager's notifier).
GOFLAGS="$GOFLAGS -tags=remove_all_sd" build_in_wrapper prometheus "$PROMETHEUS_VERSION" github.com/prometheus/prometheus github.com/prometheus/prometheus/cmd/prometheus

# The upstream Go attacher is only needed by the benchmark (bench/), so it is
# built only on request; it has its own script, cached the same way.
if [ "${BUILD_COMPONENTS_GO_ATTACHER:-}" = 1 ]; then
  built_paths[go-attacher]=$(bash "$here/../../bench/build-go-attacher.sh")
fi

if [ "${BUILD_COMPONENTS_PRINT:-}" = paths ]; then
  for name in kube-apiserver kube-controller-manager kubelet kube-scheduler etcd mock-csi-driver pause promtool prometheus ${built_paths[go-attacher]:+go-attacher}; do printf '%s=%s
' "$name" "${built_paths[$name]}"; done
else
  echo "$bin_dir"
fi
