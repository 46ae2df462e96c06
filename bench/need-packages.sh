# Sourced by the benchmarks: need_packages PKG... installs the Debian packages
# that are missing (as root, through apt-get) and stops the benchmark with the
# apt log's tail when that fails. The caller defines die() and log(); the apt
# output goes to apt.log in the caller's working directory.
need_packages() {
    local p need=()
    for p in "$@"; do dpkg -s "$p" > /dev/null 2>&1 || need+=("$p"); done
    [ ${#need[@]} -gt 0 ] || return 0
    log "installing ${need[*]}"
    [ "$(id -u)" = 0 ] || die "missing Debian packages (${need[*]}): run as root or install them"
    apt-get update -qq > apt.log 2>&1 || { tail -20 apt.log >&2; die "apt-get update failed (apt.log)"; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >> apt.log 2>&1 \
        || { tail -20 apt.log >&2; die "apt-get install ${need[*]} failed (apt.log)"; }
}
