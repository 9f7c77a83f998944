package sandbox

import (
	"io"
	"os"
	"path/filepath"
)

// writeCABundle writes CABundle under the new root r (before pivot_root,
// while the host's /etc is still at hand). The system bundle is copied
// file to file, not read into memory: the init lives as long as the
// sandbox, and what it once allocated stays its own.
func writeCABundle(r string, extra []byte) error {
	dst := filepath.Join(r, CABundle)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	err = copySystemBundle(out)
	if err == nil {
		_, err = out.Write(extra)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// appendCA adds extra to the CA bundle writeCABundle wrote under r.
func appendCA(r string, extra []byte) error {
	if len(extra) == 0 {
		return nil
	}
	out, err := os.OpenFile(filepath.Join(r, CABundle), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = out.Write(extra)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// copySystemBundle copies the first system bundle found to out, ending it
// with a newline.
func copySystemBundle(out *os.File) error {
	for _, path := range systemBundles {
		in, err := os.Open(path)
		if err != nil {
			continue
		}
		defer in.Close()
		n, err := io.Copy(out, in)
		if err != nil || n == 0 {
			return err
		}
		last := make([]byte, 1)
		if _, err := in.ReadAt(last, n-1); err != nil {
			return err
		}
		if last[0] != '\n' {
			_, err = out.Write([]byte{'\n'})
		}
		return err
	}
	return nil
}
