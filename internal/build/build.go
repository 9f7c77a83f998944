// Package build holds the version stamped into the binary at link time.
package build

import "runtime/debug"

// Set with -ldflags "-X github.com/osb-dev/osb/internal/build.Version=…".
var (
	Version = ""
	Commit  = ""
	Date    = ""
)

func init() {
	if Version != "" {
		return
	}
	Version = "0.0.0-dev"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		Version = v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			if Commit == "" {
				Commit = s.Value
			}
		case "vcs.time":
			if Date == "" {
				Date = s.Value
			}
		}
	}
}
