# Sourced by scripts/vm.sh and scripts/vm-kernel-6.12.sh: `private_apt DIR SUITE` sets
# `apt_opts` for an apt of its own under DIR (its sources list, lists and archives),
# for SUITE of the Debian mirror the machine's apt uses (deb822 or one-line sources),
# and updates its lists: the system's apt configuration and state are left untouched.
# apt fetches as root into a directory its `_apt` user cannot enter, and says so:
# harmless (no sandbox for a download).
private_apt() {
    local mirror
    mirror=$(grep -rhoE 'https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
        | head -n 1 | tr -d ' ' || true)
    mirror=${mirror:-http://deb.debian.org/debian}
    mkdir -p "$1/lists/partial" "$1/archives/partial"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror%/} $2 main" > "$1/sources.list"
    apt_opts=(
        -o "Dir::Etc::sourcelist=$1/sources.list" -o Dir::Etc::sourceparts=-
        -o "Dir::State::Lists=$1/lists" -o Dir::State::status=/dev/null
        -o "Dir::Cache::archives=$1/archives" -o Debug::NoLocking=1 -o APT::Architecture=amd64
        -o APT::Sandbox::User=root
    )
    apt-get -qq "${apt_opts[@]}" update >&2
}
