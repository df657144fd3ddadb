# Shared by the device scripts (sourced, not run). A payload travels as xz-compressed tar parts with
# their SHA-256 in SHA256SUMS, because the copy to the GPU machine is limited in size: jars are
# rewritten with stored (uncompressed) entries first, so that xz compresses the classes themselves,
# about half the size of the deflated jars.

# stored_jar IN OUT: the same jar (same entries, order, times), every entry and every nested jar stored.
stored_jar() {
    python3 - "$1" "$2" <<'PY'
import io, sys, zipfile
def copy(zi, zo, nested):
    for i in zi.infolist():
        data = zi.read(i)
        if nested and i.filename.endswith(".jar"):
            inner = io.BytesIO()
            with zipfile.ZipFile(io.BytesIO(data)) as a, zipfile.ZipFile(inner, "w", zipfile.ZIP_STORED) as b:
                copy(a, b, False)
            data = inner.getvalue()
        n = zipfile.ZipInfo(i.filename, i.date_time)
        n.external_attr = i.external_attr
        n.compress_type = zipfile.ZIP_STORED   # Spring Boot needs nested jars stored anyway
        zo.writestr(n, data)
with zipfile.ZipFile(sys.argv[1]) as zi, zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_STORED) as zo:
    copy(zi, zo, True)
PY
}

# pack_parts DIR OUT_PREFIX PART_MIB...: tar.xz of DIR's contents split into OUT_PREFIX.part-a, -b, ... of the
# given sizes (the last part takes the rest); appends each part's SHA-256 to SHA256SUMS beside them.
pack_parts() {
    local dir=$1 prefix=$2; shift 2
    local d; d=$(dirname "$prefix")
    tar -C "$dir" -cf - . | xz -T0 -"${XZ_LEVEL:-6}" > "$prefix.tar.xz"
    local names=(a b c d e f) i=0 off=0 size
    size=$(stat -c %s "$prefix.tar.xz")
    for mib in "$@" 0; do
        local n=$((mib * 1024 * 1024))
        [ "$mib" = 0 ] || [ $((off + n)) -ge "$size" ] && n=$((size - off))
        [ "$n" -le 0 ] && break
        dd if="$prefix.tar.xz" of="$prefix.part-${names[$i]}" bs=1M iflag=skip_bytes,count_bytes skip=$off count=$n status=none
        off=$((off + n)); i=$((i + 1))
    done
    rm "$prefix.tar.xz"
    (cd "$d" && sha256sum "$(basename "$prefix")".part-*) >> "$d/SHA256SUMS"
}

# receive_parts DIR STORE: moves the payload parts that came with this run's checkout (DIR/*.part-*, and
# DIR/SHA256SUMS, whose lines replace those of the same parts in STORE/SHA256SUMS) into STORE under /tmp.
# Each run lays the working tree anew and only /tmp stays between runs on one machine: parts carried by
# an earlier run on this machine wait in STORE for the rest of their payload.
receive_parts() {
    local dir=$1 store=$2 f
    mkdir -p "$store"
    [ -d "$dir" ] || return 0
    if [ -f "$dir/SHA256SUMS" ]; then
        touch "$store/SHA256SUMS"
        awk 'NR == FNR {new[$2] = 1; next} !($2 in new)' "$dir/SHA256SUMS" "$store/SHA256SUMS" > "$store/SHA256SUMS.new"
        cat "$dir/SHA256SUMS" >> "$store/SHA256SUMS.new"
        mv "$store/SHA256SUMS.new" "$store/SHA256SUMS"
        rm -f "$dir/SHA256SUMS"
        echo "payload: received SHA256SUMS ($(wc -l < "$store/SHA256SUMS") parts listed) into $store" >&2
    fi
    for f in "$dir"/*.part-*; do
        [ -f "$f" ] || continue
        mv -f "$f" "$store/"
        echo "payload: received $(basename "$f") into $store" >&2
    done
}

# unpack_parts STORE PREFIX DEST: checks every part of STORE/PREFIX.part-* against STORE/SHA256SUMS (all must
# be present), then unpacks them into DEST, once: DEST/.complete holds the hashes it was unpacked from.
# Returns 2 with the reason (which part is missing, and where it was looked for) when one is missing or differs.
unpack_parts() {
    local dir=$1 prefix=$2 dest=$3 want
    if ! grep -qs " $prefix\.part-" "$dir/SHA256SUMS" && [ -f "$dest/.complete" ]; then
        echo "payload: no $prefix parts listed in $dir/SHA256SUMS; using $prefix as unpacked before in $dest" >&2
        return 0
    fi
    [ -f "$dir/SHA256SUMS" ] || { echo "payload: $prefix: no SHA256SUMS, neither with this run's checkout nor left in $dir by an earlier run on this machine (send it again)" >&2; return 2; }
    want=$(grep " $prefix\.part-" "$dir/SHA256SUMS")
    [ -n "$want" ] || { echo "payload: no $prefix parts listed in $dir/SHA256SUMS (its SHA256SUMS did not come with this run's checkout nor an earlier one on this machine)" >&2; return 2; }
    if [ -f "$dest/.complete" ] && [ "$(cat "$dest/.complete")" = "$want" ]; then
        return 0
    fi
    local f missing=
    for f in $(echo "$want" | awk '{print $2}'); do
        [ -f "$dir/$f" ] || missing="$missing $f"
    done
    if [ -n "$missing" ]; then
        echo "payload: missing:$missing: not in this run's checkout and not left in $dir by an earlier run on this machine" \
            "(a fresh machine, or it was never sent: send it with this run or the one before, see cuda-kernels/README.md)" >&2
        return 2
    fi
    (cd "$dir" && echo "$want" | sha256sum --quiet -c -) || { echo "payload: a part of $prefix differs from its SHA-256" >&2; return 2; }
    rm -rf "$dest"
    mkdir -p "$dest"
    local parts; parts=$(echo "$want" | awk -v d="$dir" '{print d "/" $2}')
    if command -v xz >/dev/null 2>&1; then
        cat $parts | xz -dc | tar -C "$dest" -xf -
    else
        cat $parts | python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.stdin.buffer), sys.stdout.buffer)' \
            | tar -C "$dest" -xf -
    fi || { echo "payload: unpacking $prefix failed" >&2; return 2; }
    chmod -R a+rX "$dest"   # the packed top folder was private (mktemp -d); the platform may run as nobody
    echo "$want" > "$dest/.complete"
}
