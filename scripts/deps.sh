# scripts/deps.sh — install missing Debian packages (sourced by the README's commands).
# Usage: need_packages pkg...   (installs only what dpkg does not already have)
need_packages() {
	local missing=()
	for pkg in "$@"; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	local sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	echo "installing: ${missing[*]}"
	if [ -z "${CNAMUTEX_APT_UPDATED:-}" ]; then
		"${sudo[@]}" apt-get update -q || return 1
		export CNAMUTEX_APT_UPDATED=1
	fi
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q "${missing[@]}"
}

# Packages the build and the test suite use.
TEST_PACKAGES=(gcc g++ meson ninja-build pkg-config libnuma-dev numactl valgrind spin pigz xz-utils stress-ng clang libclang-rt-14-dev)
