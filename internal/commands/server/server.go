// Package server implements `osb server`, a local OpenSandbox-compatible server.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

type serverOptions struct {
	cmdutil.Base
	Listen     string
	APIKey     string // refused: argv is visible to every local user
	APIKeyFile string
	NoAuth     bool
	ReadyFD    int
	DataDir    string
	// Isolation (see docs/security.md).
	UnsafeNoIsolation bool
	AllowUnlimited    bool
	NoSpare           bool
	// Images and volumes (see docs/server.md).
	ImageDir       string
	HostPrograms   bool
	AllowHostPaths []string
}

// NewCmdServer returns `osb server`.
func NewCmdServer(f *cmdutil.Factory) *cobra.Command {
	opts := &serverOptions{}
	cmd := cmdutil.NewVerb(f, opts, cmdutil.Verb[serverOptions]{
		Name:  "server",
		Short: "Run a local OpenSandbox-compatible server (no Docker needed).",
		Long: "Run an OpenSandbox-compatible lifecycle and execd API on this machine.\n\n" +
			"Sandboxes are process trees isolated from the host (own user, mount, pid and\n" +
			"network namespaces, cgroup limits; this needs Linux) that run the OCI\n" +
			"image each create names, pulled from its registry (credentials from the\n" +
			"request or ~/.docker/config.json) or loaded from --image-dir (OCI layouts,\n" +
			"docker-save tarballs), cached in the data directory. An image that cannot be\n" +
			"had fails the create with the registry's reason; --host-programs runs every\n" +
			"sandbox on the host's programs instead, for machines with no registry and no\n" +
			"--image-dir. Volumes: named (pvc) volumes live in the data directory;\n" +
			"host directories only under an --allow-host-path prefix.\n\n" +
			"Run by an ordinary user, the server uses\n" +
			"rootless user namespaces (root in a sandbox is this user on the host), and\n" +
			"cgroup limits only in a cgroup v2 subtree delegated to the user; without one,\n" +
			"creates fail unless --allow-unlimited. Where sandboxes cannot be isolated (the\n" +
			"kernel refuses unprivileged user namespaces) the server refuses to start unless\n" +
			"--unsafe-no-isolation. The server runs in the foreground, logs to stderr, and\n" +
			"on Ctrl-C or SIGTERM removes every sandbox.\n\n" +
			"The API key comes from OPEN_SANDBOX_API_KEY, else from --api-key-file (a file\n" +
			"of mode 0600 or stricter), else a generated one that is printed once. It is never\n" +
			"taken from the command line, which every local user can read.\n\n" +
			"--no-auth serves without any key, for clients that send none; it listens on\n" +
			"loopback addresses only. Each sandbox's endpoints still require the secret\n" +
			"header the lifecycle API hands out with them.\n\n" +
			"Ready: once listening, the server writes \"osb server listening on <url>\" to\n" +
			"stderr and, with --ready-fd N, the URL and a newline to file descriptor N,\n" +
			"which it then closes. Scripts wait for that line before sending requests.",
		Example: "  OPEN_SANDBOX_API_KEY=dev-key osb server --listen 127.0.0.1:8080\n" +
			"  osb server --api-key-file ~/.config/osb/server-key --ready-fd 3 3>ready.txt &\n" +
			"  osb server --no-auth --listen 127.0.0.1:8080\n" +
			"  osb server --data-dir ~/.local/share/osb --image-dir ./images --allow-host-path /srv/data",
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVar(&opts.Listen, "listen", "127.0.0.1:8080", "Address to listen on.")
			fs.StringVar(&opts.APIKeyFile, "api-key-file", "", "Read the API key from this file (mode 0600 or stricter).")
			fs.BoolVar(&opts.NoAuth, "no-auth", false, "Serve without an API key; loopback addresses only.")
			fs.IntVar(&opts.ReadyFD, "ready-fd", 0, "Once listening, write the URL and a newline to this file descriptor, then close it.")
			fs.StringVar(&opts.DataDir, "data-dir", "", "Directory for sandbox files (default: a temporary directory).")
			fs.BoolVar(&opts.UnsafeNoIsolation, "unsafe-no-isolation", false, "Run sandboxes directly on this host, as this user, where namespaces are unavailable (no security boundary).")
			fs.BoolVar(&opts.AllowUnlimited, "allow-unlimited", false, "Run isolated sandboxes without resource limits where the host has no usable cgroups, and with none when a request names none.")
			fs.BoolVar(&opts.NoSpare, "no-spare", false, "Make each sandbox when its create comes, none ahead (the spare costs one idle sandbox).")
			fs.StringVar(&opts.ImageDir, "image-dir", "", "Load images from this directory of OCI layouts and docker-save tarballs before asking registries.")
			fs.BoolVar(&opts.HostPrograms, "host-programs", false, "Run every sandbox on the host's programs, whatever its image (no pulls).")
			fs.StringArrayVar(&opts.AllowHostPaths, "allow-host-path", nil, "Allow host volumes under this directory (repeatable); none: host volumes are refused.")
			// Kept only to refuse it with a pointer to the safe ways.
			fs.StringVar(&opts.APIKey, "api-key", "", "Refused: use OPEN_SANDBOX_API_KEY or --api-key-file.")
			fs.Hidden("api-key")
		},
		Run: runServer,
	})
	cmd.Annotations = map[string]string{cmdutil.NoConfig: ""}
	return cmd
}

func runServer(ctx context.Context, opts *serverOptions) error {
	if err := checkListen(opts.Listen); err != nil {
		return err
	}
	if opts.APIKey != "" {
		return ops.UsageErrorf("--api-key would show the key to every local user (ps, /proc); set OPEN_SANDBOX_API_KEY or use --api-key-file")
	}
	if err := checkImageFlags(opts); err != nil {
		return err
	}
	key, err := serverKey(opts)
	if err != nil {
		return err
	}
	ready, err := readyFile(opts.ReadyFD)
	if err != nil {
		return err
	}
	stderr := opts.IOStreams.ErrOut
	if key == "" && !opts.NoAuth {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		key = hex.EncodeToString(b)
		fmt.Fprintf(stderr, "Generated API key: %s\n", key)
	}
	if opts.NoAuth {
		fmt.Fprintf(stderr, "WARNING: --no-auth: any local user can use this server and its sandboxes.\n")
	}
	return serve(ctx, settings{listen: opts.Listen, apiKey: key, dataDir: opts.DataDir, ready: ready,
		unsafeNoIsolation: opts.UnsafeNoIsolation, allowUnlimited: opts.AllowUnlimited, noSpare: opts.NoSpare,
		imageDir: opts.ImageDir, hostPrograms: opts.HostPrograms,
		allowHostPaths: opts.AllowHostPaths}, stderr)
}

// checkImageFlags refuses image and volume flags that cannot work, before
// anything starts.
func checkImageFlags(opts *serverOptions) error {
	if opts.HostPrograms && opts.ImageDir != "" {
		return ops.UsageErrorf("--host-programs runs no images: it cannot be combined with --image-dir")
	}
	if opts.ImageDir != "" {
		if fi, err := os.Stat(opts.ImageDir); err != nil || !fi.IsDir() {
			return ops.UsageErrorf("--image-dir %s is not a directory", opts.ImageDir)
		}
	}
	for _, p := range opts.AllowHostPaths {
		if !strings.HasPrefix(p, "/") {
			return ops.UsageErrorf("--allow-host-path %q must be an absolute path", p)
		}
	}
	return nil
}

// serverKey is the key from --api-key-file or OPEN_SANDBOX_API_KEY, or ""
// (generate one, or none with --no-auth, which refuses non-loopback
// addresses).
func serverKey(opts *serverOptions) (string, error) {
	if opts.NoAuth {
		if opts.APIKeyFile != "" {
			return "", ops.UsageErrorf("--no-auth and --api-key-file cannot be combined")
		}
		if !loopbackAddr(opts.Listen) {
			return "", ops.UsageErrorf("--no-auth listens on loopback addresses only (127.0.0.1, ::1, localhost), not %q", opts.Listen)
		}
		return "", nil
	}
	if opts.APIKeyFile != "" {
		return readKeyFile(opts.APIKeyFile)
	}
	// The root --api-key flag is shadowed by ours; the environment counts.
	return strings.TrimSpace(opts.Getenv("OPEN_SANDBOX_API_KEY")), nil
}

// readKeyFile reads a key file that only its owner can read or write.
func readKeyFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", ops.UsageErrorf("--api-key-file: %v", err)
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return "", ops.UsageErrorf("--api-key-file: %v", err)
	case !info.Mode().IsRegular():
		return "", ops.UsageErrorf("--api-key-file %s is not a regular file", path)
	case info.Mode().Perm()&0o077 != 0:
		return "", ops.UsageErrorf("--api-key-file %s has mode %04o; other users may read it: chmod 600 %s", path, info.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", ops.UsageErrorf("--api-key-file: %v", err)
	}
	key := strings.TrimSpace(string(b))
	if key == "" || strings.ContainsAny(key, "\r\n") {
		return "", ops.UsageErrorf("--api-key-file %s must hold the key on one line", path)
	}
	return key, nil
}

// checkListen refuses a --listen that cannot be listened on as written,
// before anything starts: a usage error (2), not a failure to bind (1).
func checkListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ops.UsageErrorf("--listen %q is not HOST:PORT, e.g. 127.0.0.1:8080 (port 0 takes a free one)", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return ops.UsageErrorf("--listen %q has the port %q: use a number from 0 to 65535", addr, port)
	}
	if strings.ContainsAny(host, " /\t") {
		return ops.UsageErrorf("--listen %q has the host %q, which is no address", addr, host)
	}
	return nil
}

// loopbackAddr reports whether host:port names a loopback host only.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readyFile opens --ready-fd (0: none).
func readyFile(fd int) (*os.File, error) {
	if fd == 0 {
		return nil, nil
	}
	if fd < 0 {
		return nil, ops.UsageErrorf("--ready-fd must be a file descriptor number, got %d", fd)
	}
	f := os.NewFile(uintptr(fd), "ready-fd")
	if f == nil {
		return nil, ops.UsageErrorf("--ready-fd %d is not an open file descriptor", fd)
	}
	if _, err := f.Stat(); err != nil {
		return nil, ops.UsageErrorf("--ready-fd %d is not an open file descriptor", fd)
	}
	return f, nil
}

// settings is what the server needs, independent of the platform.
type settings struct {
	listen, apiKey, dataDir string
	ready                   *os.File // gets the URL once listening; nil: none
	unsafeNoIsolation       bool
	allowUnlimited          bool
	noSpare                 bool
	imageDir                string
	hostPrograms            bool
	allowHostPaths          []string
}
