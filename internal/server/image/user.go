package image

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// User resolves the image's User ("name", "uid", "name:group",
// "uid:gid") against its own /etc/passwd and /etc/group, as a container
// runtime does: a user without a group gets its passwd group (0 when
// the image has no such entry, as for a bare numeric uid).
func (img *Image) User() (uid, gid uint32, err error) {
	spec := img.Config.User
	if spec == "" {
		return 0, 0, nil
	}
	u, g, hasGroup := strings.Cut(spec, ":")
	passwd := img.file("etc/passwd")
	uid, pwGID, found := lookupID(passwd, u, 2)
	if !found {
		return 0, 0, fmt.Errorf("image user %q: no such user in the image's /etc/passwd", u)
	}
	gid = pwGID
	if hasGroup {
		var ok bool
		gid, _, ok = lookupID(img.file("etc/group"), g, 2)
		if !ok {
			return 0, 0, fmt.Errorf("image group %q: no such group in the image's /etc/group", g)
		}
	}
	return uid, gid, nil
}

// lookupID finds a name or number in a passwd or group file: the id in
// field idField, and the field after it (passwd's primary group).
// A number is found even when no line names it.
func lookupID(content []byte, s string, idField int) (id, next uint32, ok bool) {
	n, numErr := strconv.ParseUint(s, 10, 32)
	sc := bufio.NewScanner(bytes.NewReader(content))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ":")
		if len(f) <= idField {
			continue
		}
		if f[0] != s && (numErr != nil || f[idField] != s) {
			continue
		}
		v, err := strconv.ParseUint(f[idField], 10, 32)
		if err != nil {
			continue
		}
		var nx uint64
		if len(f) > idField+1 {
			nx, _ = strconv.ParseUint(f[idField+1], 10, 32)
		}
		return uint32(v), uint32(nx), true
	}
	if numErr == nil {
		return uint32(n), 0, true
	}
	return 0, 0, false
}

// file reads a file of the image's merged tree: from the highest layer
// that has it, unless a layer above deleted it.
func (img *Image) file(rel string) []byte {
	for i := len(img.Layers) - 1; i >= 0; i-- {
		p := filepath.Join(img.Layers[i], rel)
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if IsWhiteout(fi) || !fi.Mode().IsRegular() {
			return nil
		}
		b, _ := os.ReadFile(p)
		return b
	}
	return nil
}

// Home is the home directory the image's /etc/passwd gives uid, or "".
func (img *Image) Home(uid uint32) string {
	sc := bufio.NewScanner(bytes.NewReader(img.file("etc/passwd")))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ":")
		if len(f) >= 6 && f[2] == strconv.FormatUint(uint64(uid), 10) {
			return f[5]
		}
	}
	return ""
}
