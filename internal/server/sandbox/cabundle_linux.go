package sandbox

import (
	"os"
	"path/filepath"
)

// writeCABundle writes CABundle under the new root r (before pivot_root,
// while the host's /etc is still at hand).
func writeCABundle(r string, extra []byte) error {
	var bundle []byte
	for _, path := range systemBundles {
		if b, err := os.ReadFile(path); err == nil {
			bundle = b
			break
		}
	}
	if len(bundle) > 0 && bundle[len(bundle)-1] != '\n' {
		bundle = append(bundle, '\n')
	}
	bundle = append(bundle, extra...)
	dst := filepath.Join(r, CABundle)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, bundle, 0o644)
}
