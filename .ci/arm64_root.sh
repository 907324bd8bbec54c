#!/usr/bin/env bash
# An arm64 Python for tests/distribution/test_wheel_aarch64.py, run under qemu-user:
#   .ci/arm64_root.sh DIR
# DIR/root: Debian's arm64 python3.11 and the libraries it loads, unpacked from their
# packages (apt-get download, dpkg -x: nothing is installed on this machine but the
# arm64 package lists); DIR/site: the manylinux aarch64 wheels of mlrt's dependencies at
# constraints.txt's versions (pip install --target --platform: nothing of them runs
# here).  Prints "DIR" on success; needs root (dpkg --add-architecture, apt-get update).
set -euo pipefail
dir="$(realpath -m "$1")"
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "${dir}/debs" "${dir}/root"
dpkg --add-architecture arm64
apt-get update -qq
packages=(libc6 python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libexpat1 zlib1g libffi8
          libssl3 libbz2-1.0 liblzma5 libsqlite3-0 libuuid1 libncursesw6 libtinfo6 libreadline8 libdb5.3
          libgdbm6 libnsl2 libtirpc3 libcrypt1 libzstd1 libstdc++6 libgcc-s1)
(cd "${dir}/debs" && apt-get download -qq "${packages[@]/%/:arm64}")
for deb in "${dir}"/debs/*.deb; do dpkg -x "${deb}" "${dir}/root"; done
PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --target "${dir}/site" --only-binary=:all: --python-version 3.11 \
    --implementation cp --abi cp311 --abi abi3 --abi none \
    --platform manylinux_2_28_aarch64 --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 \
    -c "${here}/constraints.txt" numpy onnx cffi Pillow opencv-python-headless pyopencl flatbuffers
test -x "${dir}/root/usr/bin/python3.11"
echo "${dir}"
